// The asynchronous update policy: Hogwild! (Niu et al., NIPS 2011, Algorithm 1, with dense
// minibatch gradients as in PyTorch's mnist_hogwild example).
//
// BeginStep copies the shared parameters into the worker's private snapshot (relaxed atomic
// loads) and remembers the store's version, unless the worker's previous FinishStep already
// refreshed the snapshot and no other update has completed since; FinishStep applies
//   p <- SgdMomentumFn(p, grad, v_w)
// element by element to the shared ParameterStore with relaxed atomic loads and stores and no
// lock, copying each value it leaves into the snapshot (ParameterStore::UpdateAndRead), then
// advances the version. The momentum buffer v_w is private to each worker (as in
// PyTorch's Hogwild recipe, where each process owns its optimizer). See sync/parameter_store.h
// for what may be lost and what can never happen.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. With one worker the result is exactly sequential minibatch SGD.
#ifndef HOGWILD_SYNC_HOGWILD_H_
#define HOGWILD_SYNC_HOGWILD_H_

#include <atomic>
#include <memory>
#include <vector>

#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class Hogwild final : public UpdatePolicy {
 public:
  // `store` must outlive this object. num_workers >= 1.
  Hogwild(ParameterStore* store, int num_workers, SgdOptions options);

  std::string mode() const override { return "async"; }
  int num_workers() const override { return static_cast<int>(workers_.size()); }
  absl::Status ReadParams(absl::Span<float> out) const override;
  absl::StatusOr<absl::Span<const float>> BeginStep(int worker) override;
  absl::StatusOr<StepStats> FinishStep(int worker, absl::Span<const float> grad,
                                       float lr) override;
  void Cancel() override { cancelled_.store(true, std::memory_order_relaxed); }

  // Worker w's momentum buffer ([P], empty when momentum == 0), for checkpoints.
  // Not thread-safe: only while the workers are stopped.
  std::vector<float>& velocity(int worker) { return workers_[worker].velocity; }

 private:
  struct PerWorker {
    std::vector<float> snapshot;  // [P]
    std::vector<float> velocity;  // [P] or empty
    uint64_t read_version = 0;
    // FinishStep left in `snapshot` the values it wrote, read at version `read_version`.
    bool snapshot_current = false;
  };

  ParameterStore* store_;
  SgdOptions options_;
  std::vector<PerWorker> workers_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_HOGWILD_H_
