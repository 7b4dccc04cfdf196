// The CUDA backend: GEMM through cuBLAS, the other ops through the kernels of this folder (one
// .cu/.h pair per op family, element-wise math shared with the CPU backend via
// kernels/functors.h). Host-only header: programs that include it need no CUDA headers.
//
// Ownership: a CudaBackend owns its device index, one non-blocking stream and one cuBLAS handle
// bound to that stream, plus a small scratch buffer for reductions. Every op is enqueued on that
// stream in call order (see kernels/backend.h for each op's contract); several backends on one
// GPU (several workers per device) run concurrently on their own streams.
//
// Example (on the worker's own thread):
//   HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> backend, CudaBackend::Create(0));
//   HOGWILD_ASSIGN_OR_RETURN(void* x, backend->Allocate(n * sizeof(float)));
//   HOGWILD_RETURN_IF_ERROR(backend->Relu(n, static_cast<float*>(x), static_cast<float*>(x)));
//   HOGWILD_RETURN_IF_ERROR(backend->Synchronize());
//
// Thread-safety: one worker thread per backend. Create() makes the backend's device current on
// the calling thread (cudaSetDevice); every later call assumes the calling thread's current
// device is device(), which holds on the creating thread. Destruction may happen on any thread.
//
// Memory: Allocate() is cudaMalloc (never managed memory); Free() is cudaFree, which waits for the
// whole device to go idle, so allocate up front, not per step.
//
// Copies: CopyToDevice enqueues cudaMemcpyAsync and returns. From pageable memory CUDA stages
// the source before returning, so the caller may reuse it at once; from pinned memory
// (PinnedHostBuffer) the copy really is asynchronous and the source must stay unchanged until
// the next Synchronize() or CopyToHost(). CopyToHost waits for all enqueued work.
//
// Errors: CUDA/cuBLAS failures become statuses naming the call, file:line and device
// (kernels/cuda/cuda_status.h); an asynchronous kernel fault surfaces at the next Synchronize()
// or CopyToHost(), and leaves the device unusable (CUDA's sticky errors).
#ifndef HOGWILD_KERNELS_CUDA_CUDA_BACKEND_H_
#define HOGWILD_KERNELS_CUDA_CUDA_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/cuda/device_buffer.h"

// The CUDA handle types, declared without the CUDA headers (cudaStream_t is CUstream_st*,
// cublasHandle_t is cublasContext*).
struct CUstream_st;
struct cublasContext;

namespace hogwild {

class CudnnConv;  // kernels/cuda/cudnn_conv.h

class CudaBackend final : public Backend {
 public:
  // Makes `device` current on the calling thread (cudaSetDevice) and creates the stream and the
  // cuBLAS handle there. Call it on the worker thread that will use the backend.
  // Errors: kFailedPrecondition with the reason when there is no usable CUDA device (see
  // CudaDeviceCount()); kInvalidArgument when `device` is outside [0, device count); other
  // CUDA/cuBLAS errors converted.
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(int device);

  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  // Waits for the stream, then destroys the cuBLAS handle and the stream; errors are logged.
  ~CudaBackend() override;

  // "cuda:<device>".
  std::string name() const override;
  int device() const { return device_; }
  // The backend's stream (a cudaStream_t), for callers that enqueue their own work or events
  // (e.g. batch prefetch); such work is ordered with the backend's ops.
  CUstream_st* stream() const { return stream_; }

  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;
  absl::Status CopyToDevice(void* dst, const void* src_host, size_t bytes) override;
  absl::Status CopyToHost(void* dst_host, const void* src, size_t bytes) override;
  absl::Status CopyOnDevice(void* dst, const void* src, size_t bytes) override;
  absl::Status Fill(int64_t count, float value, float* x) override;
  absl::Status Synchronize() override;

  absl::Status Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                    float alpha, const float* a, const float* b, float beta, float* c) override;
  absl::Status AddBias(int64_t rows, int64_t cols, const float* bias, float* x) override;
  absl::Status SumRows(int64_t rows, int64_t cols, const float* dy, float* db) override;
  absl::Status Relu(int64_t n, const float* x, float* y) override;
  absl::Status ReluGrad(int64_t n, const float* y, const float* dy, float* dx) override;
  absl::Status SoftmaxCrossEntropy(int64_t rows, int64_t classes, const float* logits,
                                   const int32_t* labels, float scale, float* dlogits,
                                   float* loss_sum) override;
  absl::Status Accumulate(int64_t n, const float* x, float* y) override;
  absl::Status SgdUpdate(int64_t n, float lr, float momentum, float weight_decay, const float* grad,
                         float* velocity, float* params) override;

  // Convolution and pooling through cuDNN (kernels/cuda/cudnn_conv.h): the cuDNN handle is
  // created on the first such call (on this backend's stream), algorithms are chosen once per
  // shape and the workspace is this backend's own.
  absl::Status Conv2dForward(const Conv2dShape& shape, const float* x, const float* w,
                             const float* bias, float* y) override;
  absl::Status Conv2dBackwardData(const Conv2dShape& shape, const float* w, const float* dy,
                                  float* dx) override;
  absl::Status Conv2dBackwardFilter(const Conv2dShape& shape, const float* x, const float* dy,
                                    float* dw, float* db) override;
  absl::Status MaxPool2dForward(const Pool2dShape& shape, const float* x, float* y) override;
  absl::Status MaxPool2dBackward(const Pool2dShape& shape, const float* x, const float* y,
                                 const float* dy, float* dx) override;

  // Batch normalization through cuDNN (kernels/cuda/cudnn_batch_norm.h), on the same handle.
  absl::Status BatchNormForwardTraining(const BatchNormShape& shape, const float* x,
                                        const float* gamma, const float* beta, float* y) override;
  absl::Status BatchNormForwardInference(const BatchNormShape& shape, const float* x,
                                         const float* gamma, const float* beta, const float* mean,
                                         const float* var, float* y) override;
  absl::Status BatchNormBackward(const BatchNormShape& shape, const float* x, const float* dy,
                                 const float* gamma, float* dx, float* dgamma,
                                 float* dbeta) override;
  absl::Status BatchNormStatistics(const BatchNormShape& shape, const float* x, float weight,
                                   float* mean, float* var) override;

 private:
  CudaBackend(int device, CUstream_st* stream, cublasContext* cublas)
      : device_(device), stream_(stream), cublas_(cublas) {}

  // Grows scratch_ to at least `bytes` (reallocating waits for the device; happens only when a
  // larger batch than ever before arrives).
  absl::Status EnsureScratch(size_t bytes);
  // The cuDNN state, created on first use (models without convolutions never pay for it).
  absl::StatusOr<CudnnConv*> Cudnn();

  const int device_;
  CUstream_st* const stream_;
  cublasContext* const cublas_;
  DeviceBuffer scratch_;  // reduction partials of SoftmaxCrossEntropy; batch norm's scratch
  // A deleter defined in the .cc, so this header (and the inline constructor) need no
  // definition of CudnnConv.
  struct CudnnConvDeleter {
    void operator()(CudnnConv* cudnn) const;
  };
  std::unique_ptr<CudnnConv, CudnnConvDeleter> cudnn_;
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_CUDA_BACKEND_H_
