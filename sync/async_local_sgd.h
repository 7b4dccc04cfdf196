// Asynchronous local SGD: Liu, Chhaparia, Douillard, Kale, Rusu, Shen, Szlam, Ranzato,
// "Asynchronous Local-SGD Training for Language Modeling", arXiv 2401.09135 (2024). Each worker
// trains its own replica of the parameters with its own optimizer state on its own examples
// (async's data split: each worker walks its own shard of every epoch). When it has taken its
// round's local steps it pushes at once, without waiting for the other workers: its
// pseudo-gradient g = anchor - replica (the parameters it pulled at the start of the round minus
// its replica now) is applied to the shared parameters theta by the outer optimizer
// (sync/outer_optimizer.h ApplyPushedOuterStep: SGD with (Nesterov) momentum and the paper's
// delayed Nesterov update, the momentum advanced once every `delayed_nesterov` pushes on their
// mean pseudo-gradient), and the worker pulls the new theta as its next anchor and replica.
//
// Rounds: a worker's round is H = average_every local steps, or with dynamic local updates
// (the paper's DyLU, section 5.2) H_w = max(1, floor(H * t_fastest / t_w)) steps, where t_w is
// the worker's own time per local step over its last round (from the start of the round's first
// step to its push: compute, not the exchange) and t_fastest the smallest such time
// of any worker (a worker with no measured round yet takes H; times that differ by less than one
// part in 10^9, the rounding of their sums, count as equal, so equal workers keep H), so that a
// slower worker pushes
// fewer steps and every worker's round takes about the time of the fastest worker's H steps.
// Time comes from the clock given at construction (wall seconds on threads, simulated seconds
// in the simulator).
//
// Special cases: with H = 1, lr 1, no outer momentum and plain SGD as the inner optimizer, each
// push applies -lr * grad to theta: async SGD whose updates are serialized (each whole, none
// lost). With 1 worker every push sees no other, and the run is sequential: H local steps,
// then the outer step, bitwise.
//
// Statistics: the staleness of a local step (StepStats::staleness) is the number of pushes by
// other workers since this worker's pull: how far theta has moved from the parameters its step
// started from. The global step (the store's version) counts local steps of every worker, as
// async's counts updates, so the learning-rate schedule and evaluations follow the examples
// trained on; theta changes at pushes only.
//
// Memory: per worker a replica, an anchor ([P] each) and its optimizer state; [P] for the outer
// momentum, [P] more for the pseudo-gradient sum with delayed_nesterov > 1, and [P] for theta
// before a push's outer step (the norm of the step, UpdatePolicy::communication).
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. A push (the outer step and the pull) holds one mutex over theta and the outer
// state for O(P) work, so pushes are serialized in the order they take the mutex; ReadParams
// takes it too and sees theta between pushes, never within one. No worker waits for another's
// progress (only for the mutex), so Cancel() has no wait to release; it makes later calls
// return kCancelled.
//
// Checkpoints: a cut is async's (trainer/checkpoint/step_boundary.h: every worker parked between
// two steps, anywhere in its round), and the state (PolicyState::mode_state) holds what the
// rounds in progress need to continue exactly:
//   buffers   [2W (+1) (+1)]: worker w's replica at 2w, its anchor at 2w + 1; then the outer
//             momentum (with outer momentum) and the pseudo-gradient sum (delayed_nesterov > 1)
//   counters  [1 + 5W]: the pushes so far; then per worker: started (0 or 1), local steps since
//             its pull, the steps of its round, the pushes at its pull, its own pushes
//   seconds   [2W]: per worker its time per local step over its last round (0: none) and the
//             time its round in progress has taken so far (0 at a round's start)
// A worker that is done (WorkerDone: its partial round pushed) counts as not started, so if it
// steps again (a finished run resumed with more epochs) it pulls the theta of then, not of its
// last push. A resume with one worker continues bitwise; with several, every worker's round continues
// from its exact state and the interleaving of the pushes is new. The exchange counts
// (UpdatePolicy::communication) start at 0 on resume.
#ifndef HOGWILD_SYNC_ASYNC_LOCAL_SGD_H_
#define HOGWILD_SYNC_ASYNC_LOCAL_SGD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "sync/optimizer_slots.h"
#include "sync/outer_optimizer.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

struct AsyncLocalSgdOptions {
  int64_t average_every = 8;     // H, local steps per round, >= 1
  OuterOptimizer outer;          // applied at each push (lr 1, no momentum: theta += progress)
  int64_t delayed_nesterov = 1;  // N, pushes per momentum update (CheckDelayedNesterov)
  bool dynamic_local_updates = false;  // DyLU: H_w from the workers' measured speeds
};

class AsyncLocalSgd final : public UpdatePolicy {
 public:
  // Seconds on a monotonic clock: the measure of a round's duration for dynamic local updates.
  using Clock = std::function<double()>;

  // `store` (the initial parameters) must outlive this object. num_workers >= 1, `options` in
  // range (average_every >= 1, CheckOuterOptimizer, CheckDelayedNesterov: checked by the
  // caller; violations abort). `clock` defaults to std::chrono::steady_clock; the simulator
  // passes its simulated time. options.staleness_aware_lr and max_delay are not read.
  AsyncLocalSgd(ParameterStore* store, int num_workers, SgdOptions options,
                AsyncLocalSgdOptions mode_options, Clock clock = nullptr);

  // W x NumStateSlots (each replica its own optimizer state).
  int num_optimizer_buffers() const override;
  // W with adam and adamw, else 0.
  int num_optimizer_steps() const override;

  const AsyncLocalSgdOptions& options() const { return options_; }
  // Pushes so far, every worker's (the exchanges of the run). Thread-safe.
  int64_t num_pushes() const { return pushes_.load(std::memory_order_acquire); }
  // Pushes worker `worker` made so far. Call from its thread, or when it is not running.
  int64_t worker_pushes(int worker) const { return workers_[worker].pushes; }
  // The local steps worker `worker`'s current round takes (H, or H_w with dynamic local
  // updates). Call from its thread, or when it is not running.
  int64_t round_steps(int worker) const { return workers_[worker].round_steps; }

 private:
  struct PerWorker {
    std::vector<float> replica;  // [P]
    std::vector<float> anchor;   // [P] theta as pulled at the start of the round
    OptimizerSlots slots;
    std::vector<float> clipped;  // [P] the clipped gradient (clip_global_norm), else empty
    int64_t since_pull = 0;      // local steps since the pull
    int64_t round_steps = 0;     // local steps of this round
    int64_t pulled_at = 0;       // num_pushes() at the pull (staleness)
    int64_t pushes = 0;
    double round_start_s = 0.0;  // clock at the start of the round's first step
    bool started = false;
  };

  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  absl::Status DoWorkerDone(int worker) override;
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;
  ModeState DoSaveModeState() const override;
  absl::Status DoCheckModeState(const ModeState& state) const override;
  void DoRestoreModeState(const ModeState& state) override;

  // The end of every local step: counts it, and pushes when the round is complete.
  StepStats EndLocalStep(int worker, float lr);
  // Pushes worker w's pseudo-gradient (when it took a step since its pull) and pulls theta.
  void PushAndPull(int worker);
  // Copies theta into worker w's anchor and replica and starts its round. Call holding mu_.
  void PullLocked(PerWorker& w);

  const AsyncLocalSgdOptions options_;
  const Clock clock_;
  std::vector<PerWorker> workers_;
  std::atomic<int64_t> pushes_{0};
  // std::mutex rather than absl::Mutex: Debian's Abseil is an uninstrumented shared library,
  // so ThreadSanitizer cannot see absl::Mutex's happens-before edges (sync/step_barrier.h).
  // Guards theta (the store's values, written under it only) and the outer state below.
  mutable std::mutex mu_;
  std::vector<float> outer_momentum_;  // [P] with outer momentum
  std::vector<float> pushed_sum_;      // [P] with delayed_nesterov > 1
  std::vector<float> theta_before_;    // [P] theta before a push's step
  // [W] each worker's time per local step over its last round (0: none measured yet).
  std::vector<double> step_time_s_;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_ASYNC_LOCAL_SGD_H_
