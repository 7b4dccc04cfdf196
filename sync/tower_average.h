// The synchronous update policy: tower gradient averaging, as in TensorFlow's multi-GPU tower
// model (cifar10_multi_gpu_train.py, `average_gradients(tower_grads)`) and
// tf.distribute.MirroredStrategy.
//
// Every step all workers compute their tower gradient from the same parameter version (the
// shared array, unchanged during the compute phase), then:
//   1. arrive at the step barrier;
//   2. worker w reduces its own slice [P*w/W, P*(w+1)/W) of the parameters: the sum of all
//      workers' gradients in worker order 0..W-1 (sync/tower_sum.h: fixed order, bitwise
//      reproducible, the same arithmetic as every averaging policy and the simulator), which is
//      the example-weighted average because each gradient is pre-scaled by 1/(global batch);
//   3. applies the optimizer (kernels/optimizer.h; the SGD family as SgdMomentumFn) to its slice
//      (one optimizer state, sliced the same way; Adam's step t = the global step + 1): the
//      update half is sync/sliced_update.h, shared with the policy across processes;
//   4. arrives at the barrier again, so no one reads the parameters of the next step before
//      every slice is updated.
// With clip_global_norm, between 1 and 2 each worker first adds up the squares of its slice of
// the averaged gradient and meets the others at a third barrier, so the norm clipped is the
// averaged gradient's (sync/grad_clip.h), then sums its slice again and scales it.
// With W workers and global batch B the parameters equal those of 1 worker with batch B up to
// float rounding (the gradient sums are associated differently), for any W including W > B.
//
// Sparse gradients (UpdatePolicy::FinishSparseStep): the same two barriers and step count.
// Where SgdOptions::updates_touched_only() holds (plain SGD without momentum, clipping or moving
// statistics), worker 0 sums the W sparse gradients in worker order between the barriers
// (SumSparseTowers, sync/tower_sum.h: bitwise the dense sum) and applies the sum to its touched
// coordinates only (ApplySparseSgd, sync/sparse_gradient.h; weight decay, outside the no_decay
// ranges, reaches those coordinates only): O(W x touched) per step, not O(P). Otherwise the step
// is FinishStep on each gradient's dense form. BeginSparseStep returns the shared array, as
// BeginStep does. Every worker of a step takes a step of the same kind (all FinishStep or all
// FinishSparseStep).
//
// Thread-safety: each of the W workers calls BeginStep/FinishStep once per step from its own
// thread. Cancel() releases every waiter; the no-hang guarantee depends on it.
#ifndef HOGWILD_SYNC_TOWER_AVERAGE_H_
#define HOGWILD_SYNC_TOWER_AVERAGE_H_

#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "sync/parameter_store.h"
#include "sync/sliced_update.h"
#include "sync/sparse_gradient.h"
#include "sync/step_barrier.h"
#include "sync/update_policy.h"

namespace hogwild {

class TowerAverage final : public UpdatePolicy {
 public:
  // `store` must outlive this object. num_workers >= 1. options.staleness_aware_lr is ignored.
  TowerAverage(ParameterStore* store, int num_workers, SgdOptions options);

  // NumStateSlots of the one state (sliced like the parameters): 1 with momentum, 2 for Adam.
  int num_optimizer_buffers() const override;
  int num_optimizer_steps() const override;

 private:
  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  void DoCancel() override { barrier_.Cancel(); }
  // The step, once for both gradient kinds: the opening barrier, `update(step)` (every worker's
  // part of the step's update at optimizer step `step`), the global step and the optimizer's
  // step count advanced by worker 0, the closing barrier. The caller has published its gradient.
  absl::StatusOr<StepStats> Step(int worker, float lr,
                                 absl::FunctionRef<absl::Status(uint64_t step)> update);
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;

  StepBarrier barrier_;
  // tower_grads_[w]: worker w's gradient of the current step, published before the first
  // barrier and read by all workers between the two barriers.
  std::vector<const float*> tower_grads_;
  // The same for sparse gradients (touched-only steps), and their sum: worker 0's, allocated at
  // its first sparse step (5 P bytes) and used between the barriers only.
  std::vector<const SparseGradient*> sparse_towers_;
  std::unique_ptr<SparseGradient> sparse_sum_;
  // The one optimizer state and the update of each worker's slice.
  SlicedUpdate update_;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_TOWER_AVERAGE_H_
