#include "kernels/cuda/cudnn_batch_norm.h"

#include <cuda_runtime_api.h>

#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/cuda/cuda_status.h"

namespace hogwild {
namespace {

// The two descriptors of a call: x (= y, dy, dx) as NCHW [N, C, S, 1], and the per-channel
// parameters as [1, C, 1, 1]; destroyed with the call.
class Descriptors {
 public:
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (x_ != nullptr)
      LogIfError("CudnnBatchNorm", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(x_)));
    if (c_ != nullptr)
      LogIfError("CudnnBatchNorm", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(c_)));
  }

  absl::Status Set(const BatchNormShape& s) {
    HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&x_));
    HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&c_));
    HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(
        x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(s.batch),
        static_cast<int>(s.channels), static_cast<int>(s.spatial), 1));
    HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(c_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                            1, static_cast<int>(s.channels), 1, 1));
    return absl::OkStatus();
  }

  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnTensorDescriptor_t c() const { return c_; }

 private:
  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnTensorDescriptor_t c_ = nullptr;
};

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

}  // namespace

absl::Status CudnnBatchNormForwardTraining(cudnnHandle_t handle, const BatchNormShape& s,
                                           const float* x, const float* gamma, const float* beta,
                                           float* y) {
  Descriptors d;
  HOGWILD_RETURN_IF_ERROR(d.Set(s));
  // No running statistics here (null, factor 0): the moving averages are the policies'.
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnBatchNormalizationForwardTraining(
      handle, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x(), x, d.x(), y, d.c(), gamma, beta, 0.0,
      nullptr, nullptr, s.eps, nullptr, nullptr));
  return absl::OkStatus();
}

absl::Status CudnnBatchNormForwardInference(cudnnHandle_t handle, const BatchNormShape& s,
                                            const float* x, const float* gamma, const float* beta,
                                            const float* mean, const float* var, float* y) {
  Descriptors d;
  HOGWILD_RETURN_IF_ERROR(d.Set(s));
  HOGWILD_CUDA_RETURN_IF_ERROR(
      cudnnBatchNormalizationForwardInference(handle, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x(),
                                              x, d.x(), y, d.c(), gamma, beta, mean, var, s.eps));
  return absl::OkStatus();
}

absl::Status CudnnBatchNormBackward(cudnnHandle_t handle, const BatchNormShape& s, const float* x,
                                    const float* dy, const float* gamma, float* dx, float* dgamma,
                                    float* dbeta) {
  Descriptors d;
  HOGWILD_RETURN_IF_ERROR(d.Set(s));
  // No saved mean and inverse deviation: cuDNN recomputes them from x, as the CPU backend does.
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnBatchNormalizationBackward(
      handle, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero, d.x(), x, d.x(), dy, d.x(), dx,
      d.c(), gamma, dgamma, dbeta, s.eps, nullptr, nullptr));
  return absl::OkStatus();
}

absl::Status CudnnBatchNormStatistics(cudnnHandle_t handle, const BatchNormShape& s, const float* x,
                                      float weight, float* scratch, float* mean, float* var) {
  Descriptors d;
  HOGWILD_RETURN_IF_ERROR(d.Set(s));
  // cuDNN forms running = (1 - factor) * running + factor * batch, so with factor 1 a NaN left
  // in the output would survive as 0 * NaN: start from zeros.
  cudaStream_t stream = nullptr;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetStream(handle, &stream));
  const size_t bytes = static_cast<size_t>(s.channels) * sizeof(float);
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(mean, 0, bytes, stream));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(var, 0, bytes, stream));
  // y and its gamma and beta are scratch: the statistics depend on x alone.
  float* y = scratch;
  const float* gamma = scratch + s.size();
  const float* beta = gamma + s.channels;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnBatchNormalizationForwardTraining(
      handle, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x(), x, d.x(), y, d.c(), gamma, beta, 1.0,
      mean, var, s.eps, nullptr, nullptr));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnScaleTensor(handle, d.c(), mean, &weight));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnScaleTensor(handle, d.c(), var, &weight));
  return absl::OkStatus();
}

}  // namespace hogwild
