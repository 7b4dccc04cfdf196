// The round-robin policy: the RR baseline of the Hogwild! paper (Niu et al., NIPS 2011, section
// 5), after Langford, Smola and Zinkevich, "Slow Learners are Fast", NIPS 2009 (delayed updates
// applied in a fixed order). Async's data split (each worker walks its own shard,
// trainer/data/input_pipeline.h); the workers compute their gradients concurrently, but apply
// their updates in turn: worker 0, 1, ..., W - 1, 0, 1, ...
//
// What a worker reads: BeginStep(w) returns the parameters exactly as w's own previous update
// left them (its first step: the initial or restored parameters), whatever other workers
// applied since (Hogwild::ReadPoint::kAfterOwnUpdate). With every worker active, each update is
// thus computed on parameters W - 1 updates old (Langford et al.'s delay tau = W - 1), and
// StepStats::staleness, the updates applied by others between that read and this update, is
// W - 1 from the first full round on (less in the first round and once workers leave the
// rotation). Since the read, the gradient (the caller's, deterministic for its inputs) and the
// order of the updates are all fixed, a run is bitwise reproducible run to run for any W given
// the same learning rates, and with one worker it is bitwise async's, i.e. sequential minibatch
// SGD. (The trainer passes the rate of the global step its worker reads before FinishStep, which
// may be before or after the updates ahead of it in the rotation: with a schedule that changes
// from step to step and W > 1 the rates, and so the run, can differ; a constant rate cannot.)
//
// The turn: FinishStep(w) waits until it is w's turn, applies the update through Hogwild
// (sync/hogwild.h: every optimizer, per-worker or shared state, clipping, moving statistics,
// the weight-decay exemptions; nothing is lost, as no two updates overlap) and hands the turn to
// the next worker in index order that is still in the rotation. WorkerDone(w) takes w out of
// the rotation (handing on the turn if it was w's), so uneven shards cannot stall the others.
// Cancel() wakes every worker waiting for its turn with kCancelled, and later FinishSteps
// return kCancelled: a worker that fails or stops without WorkerDone (the trainer cancels the
// policy then, trainer/worker_group.h) never leaves the others waiting for a turn it will not
// take.
//
// Sparse gradients (UpdatePolicy::BeginSparseStep/FinishSparseStep): BeginSparseStep returns the
// live shared array (the RR baseline of the Hogwild! paper: each worker computes its gradient
// from the current weights while the others apply theirs), not the snapshot of the worker's own
// previous update; FinishSparseStep waits for the same turn and applies Hogwild's sparse update
// (sync/hogwild.h; for plain SGD the touched coordinates only). A sparse run is therefore not
// reproducible for W > 1 (what a worker reads depends on when it reads), and its staleness
// counts the updates applied since its read; with one worker it is bitwise the dense run.
//
// Memory ordering: the turn is handed on under a std::mutex (release) and taken under it
// (acquire), so the worker whose turn it is sees every earlier update completely; the
// parameters are accessed through the store's relaxed atomics, which ReadParams (a Hogwild
// read, from any thread) uses without the turn.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently (BeginStep never waits; FinishStep waits for its turn).
#ifndef HOGWILD_SYNC_ROUND_ROBIN_H_
#define HOGWILD_SYNC_ROUND_ROBIN_H_

#include <condition_variable>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "sync/hogwild_inside.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class RoundRobin final : public HogwildInside {
 public:
  // `store` must outlive this object. num_workers >= 1.
  RoundRobin(ParameterStore* store, int num_workers, SgdOptions options);

  // The worker whose update is next, or -1 once every worker has left the rotation.
  // Thread-safe.
  int turn() const;
  // Workers blocked in FinishStep waiting for their turn right now (tests, diagnostics).
  // Thread-safe.
  int num_waiting() const;

 private:
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  // Errors: also kFailedPrecondition when `worker` has left the rotation (WorkerDone).
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<const float*> DoBeginSparseStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  absl::Status DoWorkerDone(int worker) override;
  void DoCancel() override;
  // The ordering, once for both gradient kinds: waits for `worker`'s turn, runs `update`
  // (Hogwild's FinishStep or FinishSparseStep, named `call`) and hands the turn on.
  absl::StatusOr<StepStats> UpdateInTurn(int worker, const char* call,
                                         absl::FunctionRef<absl::StatusOr<StepStats>()> update);
  // Hands the turn from `worker` to the next worker still in the rotation. Requires mu_.
  void PassTurnLocked(int worker);

  // std::mutex, as sync/step_barrier.h explains (ThreadSanitizer sees its edges).
  mutable std::mutex mu_;
  std::condition_variable turn_changed_;
  // Guarded by mu_.
  int turn_ = 0;
  std::vector<bool> done_;  // [W] left the rotation
  int waiting_ = 0;
  bool cancelled_ = false;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_ROUND_ROBIN_H_
