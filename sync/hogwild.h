// The asynchronous update policy: Hogwild! (Niu et al., NIPS 2011, Algorithm 1, with dense
// minibatch gradients as in PyTorch's mnist_hogwild example).
//
// BeginStep copies the shared parameters into the worker's private snapshot (relaxed atomic
// loads) and remembers the store's version, unless the worker's previous FinishStep already
// refreshed the snapshot and no other update has completed since; FinishStep applies
//   p <- SgdMomentumFn(p, grad, v_w)
// element by element to the shared ParameterStore with relaxed atomic loads and stores and no
// lock, copying each value it leaves into the snapshot (ParameterStore::SgdUpdateAndRead, the
// vectorized kernels/cpu/sgd_update.h), then advances the version. The momentum buffer v_w is private to each worker (as in
// PyTorch's Hogwild recipe, where each process owns its optimizer). See sync/parameter_store.h
// for what may be lost and what can never happen.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. With one worker the result is exactly sequential minibatch SGD.
#ifndef HOGWILD_SYNC_HOGWILD_H_
#define HOGWILD_SYNC_HOGWILD_H_

#include <vector>

#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class Hogwild final : public UpdatePolicy {
 public:
  // `store` must outlive this object. num_workers >= 1.
  Hogwild(ParameterStore* store, int num_workers, SgdOptions options);

  // W with momentum (each worker's own buffer), else 0.
  int num_momentum_buffers() const override;

 private:
  struct PerWorker {
    std::vector<float> snapshot;  // [P]
    std::vector<float> velocity;  // [P] or empty
    uint64_t read_version = 0;
    // FinishStep left in `snapshot` the values it wrote, read at version `read_version`.
    bool snapshot_current = false;
  };

  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveMomentum() const override;
  absl::Status DoRestoreMomentum(const std::vector<std::vector<float>>& momentum) override;

  std::vector<PerWorker> workers_;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_HOGWILD_H_
