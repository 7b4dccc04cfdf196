// Local SGD, or periodic model averaging: Stich, "Local SGD Converges Fast and Communicates
// Little", ICLR 2019; Lin, Stich, Patel, Jaggi, "Don't Use Large Mini-Batches, Use Local SGD",
// ICLR 2020. Each worker trains its own replica of the parameters with its own momentum, on its
// own examples, and every H = average_every local steps the replicas are averaged (uniformly)
// and every worker continues from the average.
//
// The outer optimizer (sync/outer_optimizer.h): the averaging may instead apply the replicas'
// pseudo-gradient (the store minus their mean) by SGD with (Nesterov) momentum and its own
// learning rate: DiLoCo (Douillard et al. 2023) is this policy with outer lr 0.7, Nesterov
// momentum 0.9 and an inner AdamW. The default outer optimizer (lr 1, no momentum) is plain
// averaging, bitwise.
//
// Data (trainer/data/input_pipeline.h): as the papers, each worker its own examples and the
// same number of local steps: every step's global batch is split into one disjoint part per
// worker (the sync split), and each worker's gradient is the mean over its own part (the local
// minibatch), not scaled by the global batch. With H = 1, no momentum and equal parts, the
// average of the W local steps is the sync step (sync/tower_average.h) up to float rounding.
//
// The averaging: all workers meet at a barrier (sync/step_barrier.h); worker w averages its
// slice [P*w/W, P*(w+1)/W) of the replicas (summed in worker order, sync/tower_sum.h, / W:
// bitwise reproducible), applies the outer step to the store's slice with it (plain averaging:
// the store's slice becomes the mean), copies the result into every replica, and a second
// barrier ends it. The store holds the last average, which is what ReadParams, evaluation and
// the final result see (exact between averagings, like sync mode between its barriers); a
// replica's progress since the last average is not in it. The global step (the store's version)
// advances by H at each averaging, so the learning rate of all the local steps of one round is
// that of the round's first step (a decaying schedule is followed in steps of H; exact for
// H = 1). When a worker's data ends (WorkerDone; all workers end at the same local step) the
// last, shorter round is averaged too. An orderly stop mid-round keeps the last average.
//
// What a worker sees: only its own replica between averagings (nothing of the others' steps
// until the next average); nothing is lost or torn. A worker whose part of a step is empty (a
// short last global batch split across more workers) takes a step with a zero gradient
// (momentum and weight decay still act).
//
// Cancellation: Cancel() releases every worker waiting at the averaging barrier with
// kCancelled.
//
// Streaming DiLoCo (sync/streaming.h; Douillard et al. 2025): with StreamingOptions, the
// parameters are F contiguous fragments, fragment p exchanged at the local steps s with
// (s - offset_p) mod H == 0 instead of all of them every H steps. An exchange is the averaging
// above on one fragment: the barrier, worker w averages its slice [b + n*w/W, b + n*(w+1)/W) of
// the fragment [b, b + n) in worker order and applies the outer step to the store's slice, the
// second barrier; then each worker merges the store's fragment into its own replica
// (MixIntoReplica: alpha * replica + (1 - alpha) * theta), at once with tau = 0, or at the end
// of its local step s + tau (tau = overlap_steps > 0: the replicas train on, and the mean is
// of the replicas at step s; the store's fragment does not change before its next exchange at
// s + H > s + tau, so the merge reads it from there). At the end of a local step the merge due
// there comes first, then the exchange due there. The global step advances at every exchange
// by the local steps since the previous one (every H steps with F = 1, as above; about every
// H / F steps with F fragments), so the learning rate follows the schedule at each exchange.
// The end of the data (WorkerDone, all workers at the same local step S): the merges still
// pending (exchanges in (S - tau, S]) are applied at once, then every fragment not exchanged at
// step S is exchanged (one barrier pair for all of them, in fragment order) and merged at once,
// so the final store is the outer step from every worker's last replica on every fragment. An
// orderly stop mid-period keeps the store as the last exchanges left it. With the defaults
// (F = 1, tau = 0, alpha = 0) every step above is the plain averaging's, bitwise.
//
// Checkpoints: taken at round boundaries only (the step boundary's lockstep cut with period H,
// trainer/checkpoint/step_boundary.h): every worker has passed the round's averaging and no
// local step of the next round has begun, so every replica equals the store and the state is
// the store, the global step, each replica's own optimizer state and the outer momentum
// buffer (one more [P] buffer, after the replicas', when the outer optimizer has momentum); a
// restored run starts its
// replicas from the store, and its rounds from its first step. A stop or a due checkpoint
// therefore lands at the end of the round (at most H steps later). A resumed run is bitwise the
// uninterrupted one. With non-default StreamingOptions the replicas differ from the store at
// the cut (some fragment of a replica differs at every step, or, alpha > 0, after every
// exchange), so the state holds them too (PolicyState::mode_state): buffers [W], worker w's
// replica; counters [2W], per worker its local steps s and s at its last exchange (the same for
// every worker at the lockstep cut). The merges pending at the cut (exchanges in (s - tau, s])
// need nothing more: the store's fragments do not change before their next exchange, and the
// schedule continues from s. A resumed run is bitwise the uninterrupted one here too.
//
// Sparse gradients (UpdatePolicy::BeginSparseStep/FinishSparseStep): the worker reads its
// replica; for plain SGD (SgdOptions::updates_touched_only) its local step updates the touched
// coordinates of its replica only (ApplySparseSgd, weight decay included), otherwise the dense
// step on the gradient's dense form. The averaging is O(P) either way.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. With one worker the result is exactly sequential minibatch SGD (bitwise) for
// H = 1, and for any H with a constant learning rate.
#ifndef HOGWILD_SYNC_LOCAL_SGD_H_
#define HOGWILD_SYNC_LOCAL_SGD_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "sync/optimizer_slots.h"
#include "sync/outer_optimizer.h"
#include "sync/parameter_store.h"
#include "sync/step_barrier.h"
#include "sync/streaming.h"
#include "sync/update_policy.h"

namespace hogwild {

class LocalSgd final : public UpdatePolicy {
 public:
  // `store` (the initial parameters) must outlive this object. num_workers >= 1,
  // average_every >= 1, `outer` in range (CheckOuterOptimizer), `streaming` in range for
  // average_every and the store's size (CheckStreamingOptions). options.staleness_aware_lr is
  // ignored.
  LocalSgd(ParameterStore* store, int num_workers, SgdOptions options, int64_t average_every,
           OuterOptimizer outer = {}, StreamingOptions streaming = {});

  // W x NumStateSlots (each replica its own optimizer state, never averaged), e.g. W with
  // momentum, 0 without; plus 1 when the outer optimizer has momentum.
  int num_optimizer_buffers() const override;
  // W with adam and adamw (each replica's own step count), else 0.
  int num_optimizer_steps() const override;

  int64_t average_every() const { return average_every_; }
  const OuterOptimizer& outer() const { return outer_; }
  const StreamingOptions& streaming() const { return streaming_; }

 private:
  struct PerWorker {
    std::vector<float> replica;  // [P]
    OptimizerSlots slots;        // this replica's optimizer state
    std::vector<float> clipped;  // [P] the clipped gradient (clip_global_norm), else empty
    std::vector<float> mean;     // [slice] the replicas' mean on this worker's slice (outer step)
    std::vector<float> before;   // [slice] the store's slice before the outer step (its norm)
    int64_t steps = 0;           // local steps taken (s)
    int64_t exchanged_at = 0;    // s at the last exchange (where the global step stands)
    bool started = false;        // replica initialized from the store
  };

  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  // The end of every local step, either kind: the averaging when the round is complete.
  absl::StatusOr<StepStats> EndLocalStep(int worker, float lr);
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::Status DoWorkerDone(int worker) override;
  void DoCancel() override { barrier_.Cancel(); }
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;
  ModeState DoSaveModeState() const override;
  absl::Status DoCheckModeState(const ModeState& state) const override;
  void DoRestoreModeState(const ModeState& state) override;

  // Worker w's part of the exchange of `fragments` (ascending) at its local step `step`: the
  // barrier, its slices' mean and outer step, the global step, the second barrier (see the top
  // of this file). The merges are the caller's.
  absl::Status Exchange(int worker, absl::Span<const int> fragments, int64_t step);
  // Worker w's share of an exchange's record: `squares`, the squared change of its slices of the
  // store; the last of the W workers to call sums them (in worker order) and records the
  // `exchanges` fragments of `floats` floats each worker sent, with the outer step's norm
  // (UpdatePolicy::RecordExchanges). Call between the exchange's two barriers.
  void RecordOuterStep(int worker, double squares, int64_t exchanges, int64_t floats);
  // Merges the store's fragment p into worker w's replica (MixIntoReplica).
  void Merge(int worker, int p);

  const int64_t average_every_;
  const OuterOptimizer outer_;
  const StreamingOptions streaming_;
  const FragmentSchedule schedule_;
  StepBarrier barrier_;
  std::vector<PerWorker> workers_;
  // [P] the outer momentum buffer when outer_.has_momentum(), else empty; worker w owns the
  // slice it averages.
  std::vector<float> outer_momentum_;
  // The outer step's norm, summed over the workers' slices (RecordOuterStep).
  std::mutex norm_mu_;
  std::vector<double> norm_squares_;  // [W] guarded by norm_mu_
  int norm_arrived_ = 0;              // guarded by norm_mu_
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_LOCAL_SGD_H_
