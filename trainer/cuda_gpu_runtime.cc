// The GPU runtime of trainer/gpu_runtime.h on CUDA: kernels/cuda's backend and device count,
// the GPU update policies and the CUDA batch feed. Linking //trainer:gpu (alwayslink) registers
// it before main(); nothing else refers to this file.
#include <memory>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/devices.h"
#include "sync/gpu_policy_factory.h"
#include "trainer/data/cuda_batch_feed.h"
#include "trainer/gpu_runtime.h"

namespace hogwild {
namespace {

class CudaGpuRuntime final : public GpuRuntime {
 public:
  absl::StatusOr<int> DeviceCount() const override { return CudaDeviceCount(); }

  absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(int device) const override {
    HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> backend, CudaBackend::Create(device));
    return std::unique_ptr<Backend>(std::move(backend));
  }

  absl::StatusOr<std::unique_ptr<BatchFeed>> CreateBatchFeed(Backend* backend,
                                                             InputPipeline* pipeline, int worker,
                                                             int64_t max_batch,
                                                             int64_t features) const override {
    auto* cuda = dynamic_cast<CudaBackend*>(backend);
    if (cuda == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "CreateBatchFeed: a GPU worker needs a CUDA backend, got %s", backend->name()));
    }
    HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<CudaBatchFeed> feed,
                             CudaBatchFeed::Create(pipeline, worker, cuda, max_batch, features));
    return std::unique_ptr<BatchFeed>(std::move(feed));
  }

  absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(
      Mode mode, ParameterStore* store, const PolicyPlacement& placement,
      SgdOptions options) const override {
    return CreateGpuUpdatePolicy(mode, store, placement, options);
  }
};

// Never destroyed: workers may use it until the process ends.
[[maybe_unused]] const bool registered = [] {
  RegisterGpuRuntime(new CudaGpuRuntime());
  return true;
}();

}  // namespace
}  // namespace hogwild
