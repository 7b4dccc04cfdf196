#include "trainer/gpu_runtime.h"

#include <atomic>

#include "core/logging.h"

namespace hogwild {
namespace {

// Constant-initialized, so it is null before any dynamic initializer (the registrar's, in
// another translation unit) runs, whatever their order.
constinit std::atomic<const GpuRuntime*> registered{nullptr};

}  // namespace

void RegisterGpuRuntime(const GpuRuntime* runtime) {
  HOGWILD_CHECK(runtime != nullptr, "RegisterGpuRuntime(nullptr)");
  const GpuRuntime* expected = nullptr;
  HOGWILD_CHECK(registered.compare_exchange_strong(expected, runtime),
                "RegisterGpuRuntime: a GPU runtime is already registered");
}

const GpuRuntime* RegisteredGpuRuntime() { return registered.load(std::memory_order_acquire); }

absl::StatusOr<const GpuRuntime*> GpuRuntimeOrError() {
  if (const GpuRuntime* runtime = RegisteredGpuRuntime(); runtime != nullptr) return runtime;
  return absl::FailedPreconditionError(
      "this program was built without CUDA (it does not link //trainer:gpu); to use GPUs build "
      "it with --config=cuda on a machine with the CUDA toolkit, or use cpu devices");
}

}  // namespace hogwild
