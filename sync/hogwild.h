// The asynchronous update policy: Hogwild! (Niu et al., NIPS 2011, Algorithm 1, with dense
// minibatch gradients as in PyTorch's mnist_hogwild example).
//
// BeginStep copies the shared parameters into the worker's private snapshot (relaxed atomic
// loads) and remembers the store's version, unless the worker's previous FinishStep already
// refreshed the snapshot and no other update has completed since; FinishStep applies
//   p <- SgdMomentumFn(p, grad, v_w)
// element by element to the shared ParameterStore with relaxed atomic loads and stores and no
// lock, copying each value it leaves into the snapshot (ParameterStore::SgdUpdateAndRead, the
// vectorized kernels/cpu/sgd_update.h), then advances the version. Other optimizers
// (kernels/optimizer.h) take the same path element by element (ParameterStore::
// OptimizerUpdateAndRead). See sync/parameter_store.h for what may be lost and what can never
// happen to the parameters.
//
// The optimizer state (momentum v, Adam's moments m and v and step count t), by
// SgdOptions::shared_optimizer_state (--optimizer_state):
// - per_worker (default; PyTorch's mnist_hogwild example, each process its own optimizer): each
//   worker has its own state and step count t_w, touched only by its own thread: nothing of it is
//   ever lost. Adam's bias correction then uses t_w (the worker's own updates, about 1/W of the
//   global step), and each worker's moments average only its own gradients.
// - shared (A3C's "shared Adam", Mnih et al. 2016): one state for all workers, updated lock-free
//   like the parameters: each state element is loaded once and stored once per update with
//   relaxed atomics, so a concurrent update of the same element by another worker may be lost
//   (that worker's contribution to m or v vanishes, or is counted on top of a stale value), and
//   an element's parameter and state may come from different workers' updates. No element is
//   torn. The step count is not racy: it is one atomic counter, incremented once per applied
//   update (fetch_add), so the t an update uses for bias correction is its own rank among all
//   applied updates and, once the workers stop, t equals the number of updates applied (the
//   store's version, counting from a restored checkpoint's), not one worker's count.
//
// Sparse gradients (UpdatePolicy::BeginSparseStep/FinishSparseStep): BeginSparseStep returns the
// live shared array (no snapshot; the caller reads it with cpu::SharedLoad) and remembers the
// store's version. Where SgdOptions::updates_touched_only() holds (plain SGD without momentum,
// clipping or moving statistics), FinishSparseStep updates the touched coordinates only
// (ApplySparseSgd, sync/sparse_gradient.h: the paper's Algorithm 1, O(touched) per step; weight
// decay, outside the no_decay ranges, reaches the touched coordinates only), with the staleness,
// staleness_aware_lr and version count of FinishStep; otherwise it runs FinishStep on the dense
// form (O(P)). The snapshot is not refreshed by a touched-only update, so a later BeginStep reads
// the store afresh (with kAfterOwnUpdate: the store as it is then, not as this worker's update
// left it).
//
// The learning rate and dropping by staleness (SgdOptions::staleness_aware_lr, delay_adaptive_lr,
// max_delay) are AsyncStepStats's (sync/update_policy.h), decided when FinishStep begins from the
// store's version then: a dropped update writes nothing, advances no version and leaves no
// optimizer state (the worker's next BeginStep reads afresh); num_dropped() counts them.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. With one worker the result is exactly sequential minibatch SGD.
#ifndef HOGWILD_SYNC_HOGWILD_H_
#define HOGWILD_SYNC_HOGWILD_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "sync/optimizer_slots.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class Hogwild final : public UpdatePolicy {
 public:
  // Which parameters BeginStep returns.
  enum class ReadPoint {
    // The store as it is now (a fresh Read() unless the snapshot is already current): async.
    kLatest,
    // The parameters as this worker's own previous FinishStep left them (its first step: the
    // store as it was at construction or RestoreState), whatever landed since. Exact, and
    // deterministic, only when updates never overlap (round_robin, sync/round_robin.h, which
    // applies them in turn): then the snapshot FinishStep refreshes is the whole store after
    // this worker's update.
    kAfterOwnUpdate,
  };

  // `store` must outlive this object. num_workers >= 1.
  Hogwild(ParameterStore* store, int num_workers, SgdOptions options,
          ReadPoint read_point = ReadPoint::kLatest);

  // Owners (W per-worker, 1 shared) x NumStateSlots: e.g. W with momentum, 0 without.
  int num_optimizer_buffers() const override;
  // Owners with adam and adamw, else 0.
  int num_optimizer_steps() const override;
  // Updates dropped as too stale (SgdOptions::max_delay). Thread-safe.
  int64_t num_dropped() const override { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct PerWorker {
    std::vector<float> snapshot;  // [P]
    OptimizerSlots slots;         // this worker's optimizer state (per_worker), else empty
    std::vector<float> clipped;   // [P] the clipped gradient (clip_global_norm), else empty
    uint64_t read_version = 0;
    // FinishStep left in `snapshot` the values it wrote, read at version `read_version`
    // (kAfterOwnUpdate: false only after a touched-only sparse update).
    bool snapshot_current = false;
  };

  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::Status DoRestoreParams() override;
  // kAfterOwnUpdate: every worker's snapshot becomes the store's current parameters.
  void PinSnapshots();
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<const float*> DoBeginSparseStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;
  int num_owners() const;
  // An update dropped as too stale: nothing is written, the next BeginStep reads afresh.
  StepStats Drop(PerWorker& w, const StepStats& stats);

  const ReadPoint read_point_;
  std::vector<PerWorker> workers_;
  // shared_optimizer_state: the one state, its elements accessed with relaxed atomics.
  OptimizerSlots shared_slots_;
  std::atomic<uint64_t> shared_step_{0};
  std::atomic<int64_t> dropped_{0};
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_HOGWILD_H_
