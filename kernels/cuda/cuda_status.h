// The one place where CUDA runtime, cuBLAS, cuDNN and NCCL result codes become absl::Status.
//
// Every failed call turns into a status whose message names the expression, the file:line of the
// call and the device that was current on the calling thread, e.g.
//   cuda:0: cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_) failed at
//   kernels/cuda/cuda_backend.cc:88: cudaErrorInvalidValue: invalid argument
//
// Status codes: out of memory (cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED,
// CUDNN_STATUS_ALLOC_FAILED) → kResourceExhausted; no device / no or old driver →
// kFailedPrecondition; invalid arguments → kInvalidArgument; everything else → kInternal.
//
// Usage:
//   absl::Status Foo() {
//     HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
//     HOGWILD_CUDA_RETURN_IF_ERROR(cublasSgemm(handle, ...));
//     return absl::OkStatus();
//   }
//   absl::Status s = HOGWILD_CUDA_STATUS(cudaFree(p));  // OK or the converted error
//
// Thread-safety: all functions are thread-safe. They read the calling thread's current device
// (cudaGetDevice) only when building an error message; a conversion never changes CUDA state.
#ifndef HOGWILD_KERNELS_CUDA_CUDA_STATUS_H_
#define HOGWILD_KERNELS_CUDA_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include "absl/status/status.h"

namespace hogwild {

// True when `result` is the library's success value.
inline bool CudaSucceeded(cudaError_t result) { return result == cudaSuccess; }
inline bool CudaSucceeded(cublasStatus_t result) { return result == CUBLAS_STATUS_SUCCESS; }
inline bool CudaSucceeded(cudnnStatus_t result) { return result == CUDNN_STATUS_SUCCESS; }
inline bool CudaSucceeded(ncclResult_t result) { return result == ncclSuccess; }

// Converts a result code to a status: OkStatus() on success, else an error whose message names
// `expr` (the call's source text), `file`:`line` and the current device ("cuda:<n>", or
// "cuda:?" when even cudaGetDevice fails, e.g. with no driver).
absl::Status CudaResultToStatus(cudaError_t result, const char* expr, const char* file, int line);
absl::Status CudaResultToStatus(cublasStatus_t result, const char* expr, const char* file,
                                int line);
absl::Status CudaResultToStatus(cudnnStatus_t result, const char* expr, const char* file, int line);
absl::Status CudaResultToStatus(ncclResult_t result, const char* expr, const char* file, int line);

}  // namespace hogwild

// Evaluates `expr` (a cudaError_t, cublasStatus_t, cudnnStatus_t or ncclResult_t) once and, if
// it failed, returns the converted absl::Status from the enclosing function.
#define HOGWILD_CUDA_RETURN_IF_ERROR(expr)                                                   \
  do {                                                                                       \
    const auto hogwild_cuda_result_ = (expr);                                                \
    if (!::hogwild::CudaSucceeded(hogwild_cuda_result_)) {                                   \
      return ::hogwild::CudaResultToStatus(hogwild_cuda_result_, #expr, __FILE__, __LINE__); \
    }                                                                                        \
  } while (0)

// Evaluates `expr` once and yields its absl::Status (OK on success); for destructors and other
// places that log instead of returning.
#define HOGWILD_CUDA_STATUS(expr) ::hogwild::CudaResultToStatus((expr), #expr, __FILE__, __LINE__)

#endif  // HOGWILD_KERNELS_CUDA_CUDA_STATUS_H_
