#include "kernels/cuda/device_buffer.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "kernels/cuda/cuda_status.h"

namespace hogwild {

absl::StatusOr<void*> CudaMallocOrError(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  const cudaError_t result = cudaMalloc(&ptr, bytes);
  if (result == cudaErrorMemoryAllocation) {
    // Out of memory is not sticky: clear it so later calls on this thread do not report it.
    (void)cudaGetLastError();
    int device = -1;
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    (void)cudaGetDevice(&device);
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cuda:%d: cudaMalloc of %d bytes failed: out of memory (%d bytes free of %d)", device,
        bytes, free_bytes, total_bytes));
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(result);
  return ptr;
}

namespace {

absl::StatusOr<void*> CudaMallocHostOrError(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  const cudaError_t result = cudaMallocHost(&ptr, bytes);
  if (result == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cudaMallocHost of %d bytes of pinned host memory failed: out of memory", bytes));
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(result);
  return ptr;
}

}  // namespace

template <CudaMemoryKind kKind>
absl::StatusOr<CudaMemory<kKind>> CudaMemory<kKind>::Allocate(size_t bytes) {
  absl::StatusOr<void*> ptr =
      kKind == CudaMemoryKind::kDevice ? CudaMallocOrError(bytes) : CudaMallocHostOrError(bytes);
  if (!ptr.ok()) return ptr.status();
  CudaMemory buffer;
  buffer.data_ = *ptr;
  buffer.bytes_ = *ptr == nullptr ? 0 : bytes;
  return buffer;
}

template <CudaMemoryKind kKind>
void CudaMemory<kKind>::Reset() {
  if (data_ == nullptr) return;
  if constexpr (kKind == CudaMemoryKind::kDevice) {
    LogIfError("DeviceBuffer", HOGWILD_CUDA_STATUS(cudaFree(data_)));
  } else {
    LogIfError("PinnedHostBuffer", HOGWILD_CUDA_STATUS(cudaFreeHost(data_)));
  }
  data_ = nullptr;
  bytes_ = 0;
}

template class CudaMemory<CudaMemoryKind::kDevice>;
template class CudaMemory<CudaMemoryKind::kPinnedHost>;

}  // namespace hogwild
