// cuDNN 9 convolution and max pooling for one CudaBackend (kernels/backend.h holds each op's
// contract, kernels/conv_shapes.h the shapes). Private to kernels/cuda: includes cudnn.h.
//
// Ownership: a CudnnConv owns one cuDNN handle bound to its backend's stream, a cache of plans
// (tensor/filter/convolution/pooling descriptors and, for convolutions, the forward, backward-data
// and backward-filter algorithms) keyed by the full shape, and one workspace. So the algorithm is
// chosen once per shape (a new batch size, such as an epoch's short last batch, is a new shape),
// and the workspace, like the backend, belongs to one worker: it grows to the largest need seen
// (growing frees first, and cudaFree waits for the device) and is never shared.
//
// Algorithms come from cuDNN's heuristics (cudnnGet*Algorithm_v7), not from timing runs
// (cudnnFind*): the choice is then the same on every run, so a run's numbers are reproducible.
// Among the heuristic's candidates that fit kMaxWorkspaceBytes, the first deterministic one is
// taken (the sync mode promises bitwise-equal runs), else the first one. Math is CUDNN_FMA_MATH:
// plain float32, no TF32, so results agree with the CPU backend to float32 rounding.
//
// This is cuDNN's legacy descriptor API, deprecated in cuDNN 9 in favour of the graph API but
// complete and supported there; no cudnn-frontend is installed here to build graphs with.
//
// Thread-safety: like its backend, one worker thread. Errors: cuDNN/CUDA statuses converted by
// kernels/cuda/cuda_status.h; kInternal if cuDNN's output size disagrees with conv_shapes.h.
#ifndef HOGWILD_KERNELS_CUDA_CUDNN_CONV_H_
#define HOGWILD_KERNELS_CUDA_CUDNN_CONV_H_

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <map>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/conv_shapes.h"
#include "kernels/cuda/device_buffer.h"

struct CUstream_st;

namespace hogwild {

class CudnnConv {
 public:
  // The most workspace one algorithm may ask for; faster algorithms that need more are skipped.
  static constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;

  // Creates the cuDNN handle on the calling thread's current device, bound to `stream`.
  static absl::StatusOr<std::unique_ptr<CudnnConv>> Create(CUstream_st* stream);
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;
  // Destroys the plans and the handle; errors are logged. The caller synchronizes the stream first.
  ~CudnnConv();

  // As the Backend ops of the same names; `shape.batch` >= 1 (the backend handles empty batches).
  absl::Status Forward(const Conv2dShape& shape, const float* x, const float* w, const float* bias,
                       float* y);
  absl::Status BackwardData(const Conv2dShape& shape, const float* w, const float* dy, float* dx);
  absl::Status BackwardFilter(const Conv2dShape& shape, const float* x, const float* dy, float* dw,
                              float* db);
  absl::Status MaxPoolForward(const Pool2dShape& shape, const float* x, float* y);
  absl::Status MaxPoolBackward(const Pool2dShape& shape, const float* x, const float* y,
                               const float* dy, float* dx);

  // The cuDNN handle (bound to the backend's stream), for the other cuDNN ops of the backend
  // (kernels/cuda/cudnn_batch_norm.h). Owned by this object.
  cudnnHandle_t handle() const { return handle_; }

 private:
  struct ConvPlan;
  struct PoolPlan;
  using ConvKey = std::array<int64_t, 11>;
  using PoolKey = std::array<int64_t, 10>;

  // Out of line: an inline constructor would need the plans' definitions (to destroy them).
  explicit CudnnConv(cudnnHandle_t handle);
  absl::StatusOr<const ConvPlan*> GetConvPlan(const Conv2dShape& shape);
  absl::StatusOr<const PoolPlan*> GetPoolPlan(const Pool2dShape& shape);
  // Grows the workspace to at least `bytes`.
  absl::Status EnsureWorkspace(size_t bytes);

  cudnnHandle_t handle_;
  std::map<ConvKey, std::unique_ptr<ConvPlan>> conv_plans_;
  std::map<PoolKey, std::unique_ptr<PoolPlan>> pool_plans_;
  DeviceBuffer workspace_;
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_CUDNN_CONV_H_
