// Owning handles for CUDA memory: DeviceBuffer (cudaMalloc; never managed memory) and
// PinnedHostBuffer (cudaMallocHost, page-locked host memory, so host-to-device copies can run
// asynchronously and overlap compute). Host-only header: no CUDA headers needed to include it.
//
// Example:
//   HOGWILD_ASSIGN_OR_RETURN(DeviceBuffer params, DeviceBuffer::Allocate(p * sizeof(float)));
//   float* params_d = params.as<float>();  // [P] float32, device memory of the current device
//
// Thread-safety: a buffer object is not synchronized; distinct buffers are independent. The
// memory itself follows the usual CUDA stream rules.
#ifndef HOGWILD_KERNELS_CUDA_DEVICE_BUFFER_H_
#define HOGWILD_KERNELS_CUDA_DEVICE_BUFFER_H_

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"

namespace hogwild {

// cudaMalloc of `bytes` on the calling thread's current device. bytes == 0 returns nullptr.
// Errors: kResourceExhausted naming the device, the bytes asked and the bytes free/total
// (cudaMemGetInfo); other CUDA errors as converted by kernels/cuda/cuda_status.h.
absl::StatusOr<void*> CudaMallocOrError(size_t bytes);

// Where a CudaMemory lives: device memory of the device that was current when Allocate() ran
// (cudaMalloc), or page-locked host memory (cudaMallocHost).
enum class CudaMemoryKind { kDevice, kPinnedHost };

// An owning handle for `bytes` of CUDA memory of one kind. Move-only; the destructor frees the
// memory (cudaFree / cudaFreeHost) and logs, never throws, if that fails. May be destroyed on any
// thread. cudaFree waits for the device to go idle, so never free in a hot loop.
template <CudaMemoryKind kKind>
class CudaMemory {
 public:
  CudaMemory() = default;
  // Allocates `bytes` (uninitialized). bytes == 0 gives an empty buffer. Errors:
  // kResourceExhausted with the bytes asked (device memory: also the device and its free/total
  // bytes, as CudaMallocOrError); other CUDA errors as converted by kernels/cuda/cuda_status.h.
  static absl::StatusOr<CudaMemory> Allocate(size_t bytes);

  CudaMemory(CudaMemory&& other) noexcept { *this = std::move(other); }
  CudaMemory& operator=(CudaMemory&& other) noexcept {
    if (this != &other) {
      Reset();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;
  ~CudaMemory() { Reset(); }

  // Frees the memory now (see the class comment); the buffer becomes empty.
  void Reset();

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Device memory. Never managed memory.
using DeviceBuffer = CudaMemory<CudaMemoryKind::kDevice>;
// Page-locked host memory. Copies from it with cudaMemcpyAsync return before the data has been
// read: do not overwrite it until the stream has passed the copy.
using PinnedHostBuffer = CudaMemory<CudaMemoryKind::kPinnedHost>;

extern template class CudaMemory<CudaMemoryKind::kDevice>;
extern template class CudaMemory<CudaMemoryKind::kPinnedHost>;

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_DEVICE_BUFFER_H_
