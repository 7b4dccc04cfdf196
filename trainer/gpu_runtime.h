// The GPU side of the trainer, behind a registration seam, so that a program maps the CUDA
// libraries (cudart, cuBLAS, cuDNN, NCCL: about 210 MiB at start-up) only if it links them.
//
// //trainer, the CPU library, knows GPUs only through this interface. //trainer:gpu (an
// alwayslink library, built where CUDA is enabled: //tools:cuda.bzl) implements it with the CUDA
// backend, the GPU update policies and the CUDA batch feed, and registers it during static
// initialization. A program that depends on //trainer:gpu trains on GPUs; one that does not
// has no CUDA dependency at all, and asking it for GPU devices is kFailedPrecondition
// (GpuRuntimeOrError's message: built without CUDA, and how to build with it).
//
//   // In a program linked with //trainer:gpu:
//   HOGWILD_ASSIGN_OR_RETURN(const GpuRuntime* gpu, GpuRuntimeOrError());
//   HOGWILD_ASSIGN_OR_RETURN(int gpus, gpu->DeviceCount());
//
// Thread-safety: registration happens during static initialization, before main(); after that
// the runtime is immutable and every function here and of GpuRuntime is thread-safe, except
// where a method says "call on the worker's thread".
#ifndef HOGWILD_TRAINER_GPU_RUNTIME_H_
#define HOGWILD_TRAINER_GPU_RUNTIME_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "kernels/backend.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "sync/update_policy.h"
#include "trainer/data/batch_feed.h"
#include "trainer/data/input_pipeline.h"

namespace hogwild {

class GpuRuntime {
 public:
  virtual ~GpuRuntime() = default;

  // The number of CUDA devices this process sees, >= 1. Errors: kFailedPrecondition with the
  // reason when there is none (kernels/cuda/devices.h CudaDeviceCount's contract).
  virtual absl::StatusOr<int> DeviceCount() const = 0;

  // A worker's CUDA backend on `device`. Call on the worker's thread: it makes the device current
  // there and creates its stream and cuBLAS handle. Errors: CudaBackend::Create's.
  virtual absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(int device) const = 0;

  // Worker `worker`'s CUDA batch feed (pinned staging, double-buffered copies of batches of up
  // to max_batch x features floats) for `backend`, which CreateBackend made; on the same thread.
  // `pipeline` and `backend` must outlive the feed. Errors: kInvalidArgument when `backend` is
  // not a CUDA backend; CudaBatchFeed::Create's.
  virtual absl::StatusOr<std::unique_ptr<BatchFeed>> CreateBatchFeed(Backend* backend,
                                                                     InputPipeline* pipeline,
                                                                     int worker, int64_t max_batch,
                                                                     int64_t features) const = 0;

  // The GPU update policy of `mode` for placement.worker_gpus over `store` (which must outlive
  // it). Errors: sync/gpu_policy_factory.h CreateGpuUpdatePolicy's.
  virtual absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(
      Mode mode, ParameterStore* store, const PolicyPlacement& placement,
      SgdOptions options) const = 0;
};

// Makes `runtime` the process's GPU runtime. Call once, from a static initializer; `runtime`
// must live until the process ends. A second registration is a programmer error (it aborts:
// two CUDA runtimes linked into one program).
void RegisterGpuRuntime(const GpuRuntime* runtime);

// The registered runtime, or nullptr when this program was built without one.
const GpuRuntime* RegisteredGpuRuntime();

// The registered runtime. Errors: kFailedPrecondition when there is none, one line: "this
// program was built without CUDA (it does not link //trainer:gpu); to use GPUs build it with
// --config=cuda on a machine with the CUDA toolkit, ...".
absl::StatusOr<const GpuRuntime*> GpuRuntimeOrError();

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_GPU_RUNTIME_H_
