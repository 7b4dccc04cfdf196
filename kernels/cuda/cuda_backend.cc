#include "kernels/cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/cuda/bias.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/cudnn_batch_norm.h"
#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/devices.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/sgd_update.h"
#include "kernels/cuda/softmax_cross_entropy.h"

namespace hogwild {
namespace {

absl::Status CheckSizes(const char* op, int64_t a, int64_t b = 0, int64_t c = 0) {
  if (a < 0 || b < 0 || c < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: negative size (%d, %d, %d)", op, a, b, c));
  }
  return absl::OkStatus();
}

// cuBLAS's 32-bit API takes int sizes and leading dimensions.
absl::Status CheckIntSizes(const char* op, int64_t a, int64_t b, int64_t c) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes(op, a, b, c));
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (a > kMax || b > kMax || c > kMax) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: size over the cuBLAS limit %d: (%d, %d, %d)", op, kMax, a, b, c));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(int device) {
  HOGWILD_ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  if (device < 0 || device >= count) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CudaBackend: device %d does not exist; this process sees %d CUDA device(s)", device,
        count));
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  cudaStream_t stream = nullptr;
  // Non-blocking: the worker's stream must not serialize with other code's legacy default-stream
  // work on the same GPU.
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t cublas = nullptr;
  absl::Status status = HOGWILD_CUDA_STATUS(cublasCreate(&cublas));
  if (status.ok()) status = HOGWILD_CUDA_STATUS(cublasSetStream(cublas, stream));
  if (!status.ok()) {
    if (cublas != nullptr) LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cublasDestroy(cublas)));
    LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cudaStreamDestroy(stream)));
    return status;
  }
  return std::unique_ptr<CudaBackend>(new CudaBackend(device, stream, cublas));
}

CudaBackend::~CudaBackend() {
  // The destructor may run on a thread whose current device is another one.
  int previous = -1;
  (void)cudaGetDevice(&previous);
  if (previous != device_) LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cudaSetDevice(device_)));
  LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cudaStreamSynchronize(stream_)));
  scratch_.Reset();
  cudnn_.reset();
  LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cublasDestroy(cublas_)));
  LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cudaStreamDestroy(stream_)));
  if (previous >= 0 && previous != device_) (void)cudaSetDevice(previous);
}

std::string CudaBackend::name() const { return absl::StrCat("cuda:", device_); }

absl::StatusOr<void*> CudaBackend::Allocate(size_t bytes) { return CudaMallocOrError(bytes); }

void CudaBackend::Free(void* ptr) {
  if (ptr != nullptr) LogIfError("CudaBackend", HOGWILD_CUDA_STATUS(cudaFree(ptr)));
}

absl::Status CudaBackend::CopyToDevice(void* dst, const void* src_host, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  HOGWILD_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst, src_host, bytes, cudaMemcpyHostToDevice, stream_));
  return absl::OkStatus();
}

absl::Status CudaBackend::CopyToHost(void* dst_host, const void* src, size_t bytes) {
  if (bytes > 0) {
    HOGWILD_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst_host, src, bytes, cudaMemcpyDeviceToHost, stream_));
  }
  return Synchronize();
}

absl::Status CudaBackend::CopyOnDevice(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  return absl::OkStatus();
}

absl::Status CudaBackend::Fill(int64_t count, float value, float* x) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("Fill", count));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchFill(stream_, count, value, x));
  return absl::OkStatus();
}

absl::Status CudaBackend::Synchronize() {
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

absl::Status CudaBackend::Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n,
                               int64_t k, float alpha, const float* a, const float* b, float beta,
                               float* c) {
  HOGWILD_RETURN_IF_ERROR(CheckIntSizes("Gemm", m, n, k));
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    // op(A) op(B) is empty: C = beta * C, with beta == 0 writing zeros (C is write-only then), so
    // an empty shard yields a zero gradient, as on the CPU backend.
    if (beta != 1.0f) HOGWILD_CUDA_RETURN_IF_ERROR(LaunchScale(stream_, m * n, beta, c));
    return absl::OkStatus();
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(RowMajorSgemm(cublas_, trans_a, trans_b, static_cast<int>(m),
                                             static_cast<int>(n), static_cast<int>(k), alpha, a, b,
                                             beta, c));
  return absl::OkStatus();
}

absl::Status CudaBackend::AddBias(int64_t rows, int64_t cols, const float* bias, float* x) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("AddBias", rows, cols));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchAddBias(stream_, rows, cols, bias, x));
  return absl::OkStatus();
}

absl::Status CudaBackend::SumRows(int64_t rows, int64_t cols, const float* dy, float* db) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("SumRows", rows, cols));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchSumRows(stream_, rows, cols, dy, db));
  return absl::OkStatus();
}

absl::Status CudaBackend::Relu(int64_t n, const float* x, float* y) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("Relu", n));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchRelu(stream_, n, x, y));
  return absl::OkStatus();
}

absl::Status CudaBackend::ReluGrad(int64_t n, const float* y, const float* dy, float* dx) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("ReluGrad", n));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchReluGrad(stream_, n, y, dy, dx));
  return absl::OkStatus();
}

absl::Status CudaBackend::SoftmaxCrossEntropy(int64_t rows, int64_t classes, const float* logits,
                                              const int32_t* labels, float scale, float* dlogits,
                                              float* loss_sum) {
  HOGWILD_RETURN_IF_ERROR(CheckIntSizes("SoftmaxCrossEntropy", rows, classes, 0));
  if (classes == 0) return absl::InvalidArgumentError("SoftmaxCrossEntropy: 0 classes");
  const int64_t partials = SoftmaxCrossEntropyPartials(rows);
  HOGWILD_RETURN_IF_ERROR(EnsureScratch(static_cast<size_t>(partials) * sizeof(double)));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchSoftmaxCrossEntropy(stream_, rows, static_cast<int>(classes),
                                                         logits, labels, scale, dlogits,
                                                         scratch_.as<double>(), loss_sum));
  return absl::OkStatus();
}

absl::Status CudaBackend::Accumulate(int64_t n, const float* x, float* y) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("Accumulate", n));
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchAccumulate(stream_, n, x, y));
  return absl::OkStatus();
}

absl::Status CudaBackend::SgdUpdate(int64_t n, float lr, float momentum, float weight_decay,
                                    const float* grad, float* velocity, float* params) {
  HOGWILD_RETURN_IF_ERROR(CheckSizes("SgdUpdate", n));
  if (momentum != 0.0f && velocity == nullptr) {
    return absl::InvalidArgumentError("SgdUpdate: momentum != 0 needs a velocity buffer");
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(
      LaunchSgdUpdate(stream_, n, lr, momentum, weight_decay, grad, velocity, params));
  return absl::OkStatus();
}

absl::Status CudaBackend::EnsureScratch(size_t bytes) {
  if (scratch_.bytes() >= bytes) return absl::OkStatus();
  // Round up to 4 KiB so a slowly growing batch does not reallocate on every call.
  const size_t rounded = (bytes + 4095) / 4096 * 4096;
  scratch_.Reset();  // cudaFree waits for the device, so no enqueued kernel still uses it
  HOGWILD_ASSIGN_OR_RETURN(scratch_, DeviceBuffer::Allocate(rounded));
  return absl::OkStatus();
}

void CudaBackend::CudnnConvDeleter::operator()(CudnnConv* cudnn) const { delete cudnn; }

absl::StatusOr<CudnnConv*> CudaBackend::Cudnn() {
  if (cudnn_ == nullptr) {
    HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<CudnnConv> cudnn, CudnnConv::Create(stream_));
    cudnn_.reset(cudnn.release());
  }
  return cudnn_.get();
}

absl::Status CudaBackend::Conv2dForward(const Conv2dShape& shape, const float* x, const float* w,
                                        const float* bias, float* y) {
  HOGWILD_RETURN_IF_ERROR(ValidateConv2dShape(shape, "Conv2dForward"));
  if (shape.batch == 0) return absl::OkStatus();  // cuDNN rejects empty tensors
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return cudnn->Forward(shape, x, w, bias, y);
}

absl::Status CudaBackend::Conv2dBackwardData(const Conv2dShape& shape, const float* w,
                                             const float* dy, float* dx) {
  HOGWILD_RETURN_IF_ERROR(ValidateConv2dShape(shape, "Conv2dBackwardData"));
  if (shape.batch == 0) return absl::OkStatus();
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return cudnn->BackwardData(shape, w, dy, dx);
}

absl::Status CudaBackend::Conv2dBackwardFilter(const Conv2dShape& shape, const float* x,
                                               const float* dy, float* dw, float* db) {
  HOGWILD_RETURN_IF_ERROR(ValidateConv2dShape(shape, "Conv2dBackwardFilter"));
  if (shape.batch == 0) {
    // An empty shard's gradient is zero (the contract overwrites dw and db).
    HOGWILD_RETURN_IF_ERROR(Fill(shape.filter_size(), 0.0f, dw));
    if (db != nullptr) HOGWILD_RETURN_IF_ERROR(Fill(shape.out_channels, 0.0f, db));
    return absl::OkStatus();
  }
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return cudnn->BackwardFilter(shape, x, dy, dw, db);
}

absl::Status CudaBackend::MaxPool2dForward(const Pool2dShape& shape, const float* x, float* y) {
  HOGWILD_RETURN_IF_ERROR(ValidatePool2dShape(shape, "MaxPool2dForward"));
  if (shape.batch == 0) return absl::OkStatus();
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return cudnn->MaxPoolForward(shape, x, y);
}

absl::Status CudaBackend::MaxPool2dBackward(const Pool2dShape& shape, const float* x,
                                            const float* y, const float* dy, float* dx) {
  HOGWILD_RETURN_IF_ERROR(ValidatePool2dShape(shape, "MaxPool2dBackward"));
  if (shape.batch == 0) return absl::OkStatus();
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return cudnn->MaxPoolBackward(shape, x, y, dy, dx);
}

absl::Status CudaBackend::BatchNormForwardTraining(const BatchNormShape& shape, const float* x,
                                                   const float* gamma, const float* beta,
                                                   float* y) {
  HOGWILD_RETURN_IF_ERROR(ValidateBatchNormShape(shape, "BatchNormForwardTraining"));
  if (shape.batch == 0) return absl::OkStatus();  // cuDNN rejects empty tensors
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return CudnnBatchNormForwardTraining(cudnn->handle(), shape, x, gamma, beta, y);
}

absl::Status CudaBackend::BatchNormForwardInference(const BatchNormShape& shape, const float* x,
                                                    const float* gamma, const float* beta,
                                                    const float* mean, const float* var, float* y) {
  HOGWILD_RETURN_IF_ERROR(ValidateBatchNormShape(shape, "BatchNormForwardInference"));
  if (shape.batch == 0) return absl::OkStatus();
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  return CudnnBatchNormForwardInference(cudnn->handle(), shape, x, gamma, beta, mean, var, y);
}

absl::Status CudaBackend::BatchNormBackward(const BatchNormShape& shape, const float* x,
                                            const float* dy, const float* gamma, float* dx,
                                            float* dgamma, float* dbeta) {
  HOGWILD_RETURN_IF_ERROR(ValidateBatchNormShape(shape, "BatchNormBackward"));
  if (shape.batch == 0) {
    HOGWILD_RETURN_IF_ERROR(Fill(shape.channels, 0.0f, dgamma));
    return Fill(shape.channels, 0.0f, dbeta);
  }
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  if (dx == nullptr) {
    // cuDNN always writes dx: give it scratch.
    HOGWILD_RETURN_IF_ERROR(EnsureScratch(static_cast<size_t>(shape.size()) * sizeof(float)));
    dx = static_cast<float*>(scratch_.data());
  }
  return CudnnBatchNormBackward(cudnn->handle(), shape, x, dy, gamma, dx, dgamma, dbeta);
}

absl::Status CudaBackend::BatchNormStatistics(const BatchNormShape& shape, const float* x,
                                              float weight, float* mean, float* var) {
  HOGWILD_RETURN_IF_ERROR(ValidateBatchNormShape(shape, "BatchNormStatistics"));
  if (shape.batch == 0) {
    HOGWILD_RETURN_IF_ERROR(Fill(shape.channels, 0.0f, mean));
    return Fill(shape.channels, 0.0f, var);
  }
  HOGWILD_ASSIGN_OR_RETURN(CudnnConv * cudnn, Cudnn());
  HOGWILD_RETURN_IF_ERROR(
      EnsureScratch(static_cast<size_t>(shape.size() + 2 * shape.channels) * sizeof(float)));
  return CudnnBatchNormStatistics(cudnn->handle(), shape, x, weight,
                                  static_cast<float*>(scratch_.data()), mean, var);
}

}  // namespace hogwild
