// Synchronous SGD with backup workers: Chen, Pan, Monga, Bengio, Jozefowicz, "Revisiting
// Distributed Synchronous SGD", 2016. W workers compute gradients for each step, as in sync
// mode (the global batch split across them, trainer/data/input_pipeline.h); the step's update is
// made from the first W - b gradients to arrive (b = backup_workers) and the b late ones are
// dropped, so the step never waits for the slowest b workers.
//
// The update: the contributors' gradients summed in worker order (fixed: bitwise reproducible
// for a given set of contributors), rescaled from the step's whole batch to the examples the
// contributors actually used (SetStepExamples: step_examples / sum of their examples; exactly
// 1, so no rescaling, when they used them all; sync/tower_sum.h), then clipped and applied with
// one optimizer state (sync/sliced_update.h's UpdateAveraged), once, by the last contributor to
// arrive. With b = 0 every gradient is used and the
// result is bitwise that of sync mode (sync/tower_average.h).
//
// What a worker sees: BeginStep(w) returns a private snapshot of the parameters as they are
// after every update before the step of w's gradient (it waits for the previous step's update),
// copied under a reader lock, so no update is ever seen in part. A gradient is used only if it
// arrives while its step is open; a worker that is late for its step (its step closed, or is
// closing, without it) gets StepStats::dropped and returns at once: its examples of that step
// are lost (as in the paper); it then takes its next batch, and keeps being dropped until it
// catches up. A used gradient is never stale: it was computed from the parameters of its step.
// Contributors wait in FinishStep until the update is applied.
//
// Cancellation: Cancel() releases every worker waiting for the previous update or for the
// step's last contributor with kCancelled, except while the step is closing: a contributor
// whose gradient the closing worker is reading stays until the update is applied (a bounded
// wait), since its caller frees the gradient once FinishStep returns.
//
// Checkpoints: the step boundary (trainer/checkpoint/step_boundary.h) takes its cut where every
// worker stands before the same step T (its lockstep cut): step T - 1 is closed and applied, no
// gradient of step T has arrived and no worker waits in here, so the state is the parameters,
// the global step and the one optimizer state, and the open step and every worker's step
// restart together (at 0 here, at T in the data plan). With backup_workers = 0 a resumed run is
// bitwise the uninterrupted one (as sync mode's).
//
// Sparse gradients (UpdatePolicy::BeginSparseStep/FinishSparseStep), for plain SGD
// (SgdOptions::updates_touched_only): the worker reads the live store (no snapshot: a gradient
// read while the step's update lands is late, and dropped), the contributors' gradients are
// summed in worker order and rescaled as above (SumSparseTowers, RescaleSparseSum) and the sum's
// touched coordinates updated (ApplySparseSgd, weight decay included): O(touched), not O(P).
// Other optimizers take the dense step on the gradients' dense forms. The workers of one step
// take steps of one kind.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. ReadParams waits for an update in progress. The reduction is done by one thread
// (the closing contributor), not sliced across the workers as in sync mode.
#ifndef HOGWILD_SYNC_BACKUP_SYNC_H_
#define HOGWILD_SYNC_BACKUP_SYNC_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "sync/optimizer_slots.h"
#include "sync/parameter_store.h"
#include "sync/sparse_gradient.h"
#include "sync/update_policy.h"

namespace hogwild {

class BackupSync final : public UpdatePolicy {
 public:
  // `store` must outlive this object. num_workers >= 1, backup_workers in [0, num_workers).
  // options.staleness_aware_lr is ignored (every used gradient has staleness 0).
  BackupSync(ParameterStore* store, int num_workers, SgdOptions options, int backup_workers);

  // NumStateSlots of the one optimizer state (1 with momentum, 2 for Adam, ...).
  int num_optimizer_buffers() const override;
  int num_optimizer_steps() const override;

  int backup_workers() const { return num_workers() - needed_; }
  // Gradients of worker w dropped so far. Thread-safe.
  int64_t dropped(int worker) const;
  int64_t num_dropped() const override;

 private:
  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<const float*> DoBeginSparseStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  void DoSetStepExamples(int worker, int64_t examples, int64_t step_examples) override;
  void DoCancel() override;
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;

  // The protocol, once for both gradient kinds. WaitForOpenStep: BeginStep's wait for the update
  // of the step before this worker's. Contribute: FinishStep's; `publish` records the worker's
  // gradient (under mu_), and the closing contributor runs `apply` on the contributors
  // (ascending) without mu_, while the others wait with their gradients valid.
  absl::Status WaitForOpenStep(int worker);
  absl::StatusOr<StepStats> Contribute(
      int worker, float lr, absl::FunctionRef<void()> publish,
      absl::FunctionRef<void(const std::vector<int>& contributors)> apply);
  // Applies the update of the open step from the gradients of `contributors` (ascending): the
  // dense ones (grads_) or the sparse ones (sparse_grads_).
  void Apply(const std::vector<int>& contributors, float lr);
  void ApplySparse(const std::vector<int>& contributors, float lr);

  const int needed_;  // W - backup_workers

  // std::mutex, as sync/step_barrier.h explains (ThreadSanitizer sees its edges).
  mutable std::mutex mu_;
  std::condition_variable advanced_;
  // Guarded by mu_.
  int64_t open_step_ = 0;     // the step whose update is next; steps below it are applied
  bool closing_ = false;      // open_step_ has its W - b gradients; its update is being applied
  std::vector<int> arrived_;  // contributors to open_step_, in arrival order
  std::vector<int64_t> worker_step_;  // [W] the step of worker w's current gradient
  std::vector<const float*> grads_;   // [W] contributors' gradients, valid while they wait
  std::vector<const SparseGradient*> sparse_grads_;  // [W] the same, sparse steps
  std::vector<int64_t> examples_;                    // [W] SetStepExamples
  std::vector<int64_t> step_examples_;               // [W]
  std::vector<int64_t> dropped_;                     // [W]
  bool cancelled_ = false;

  // Writers (Apply) exclude readers (the snapshots' copies, ReadParams).
  mutable std::shared_mutex params_mu_;
  std::vector<std::vector<float>> snapshots_;  // [W][P]
  OptimizerSlots slots_;  // the optimizer state; used by Apply only (under params_mu_)
  // The sparse steps' sum of the contributors' gradients ([P], allocated by the first sparse
  // step); used by ApplySparse only (by the closing contributor).
  std::unique_ptr<SparseGradient> sparse_sum_;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_BACKUP_SYNC_H_
