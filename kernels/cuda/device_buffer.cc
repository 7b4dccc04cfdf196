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

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  absl::StatusOr<void*> ptr = CudaMallocOrError(bytes);
  if (!ptr.ok()) return ptr.status();
  DeviceBuffer buffer;
  buffer.data_ = *ptr;
  buffer.bytes_ = bytes;
  return buffer;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::Reset() {
  if (data_ == nullptr) return;
  const absl::Status s = HOGWILD_CUDA_STATUS(cudaFree(data_));
  LogIfError("DeviceBuffer", s);
  data_ = nullptr;
  bytes_ = 0;
}

absl::StatusOr<PinnedHostBuffer> PinnedHostBuffer::Allocate(size_t bytes) {
  PinnedHostBuffer buffer;
  if (bytes == 0) return buffer;
  void* ptr = nullptr;
  const cudaError_t result = cudaMallocHost(&ptr, bytes);
  if (result == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cudaMallocHost of %d bytes of pinned host memory failed: out of memory", bytes));
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(result);
  buffer.data_ = ptr;
  buffer.bytes_ = bytes;
  return buffer;
}

PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void PinnedHostBuffer::Reset() {
  if (data_ == nullptr) return;
  const absl::Status s = HOGWILD_CUDA_STATUS(cudaFreeHost(data_));
  LogIfError("PinnedHostBuffer", s);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace hogwild
