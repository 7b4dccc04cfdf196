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

// Device memory on the device that was current when Allocate() ran. Move-only; the destructor
// calls cudaFree (which waits for the device to go idle, so never free in a hot loop) and logs,
// never throws, if that fails. May be destroyed on any thread.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` (uninitialized) with CudaMallocOrError; same errors.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);

  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Reset(); }

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

// Page-locked host memory (cudaMallocHost). Move-only; the destructor calls cudaFreeHost and
// logs, never throws, on failure. Copies from it with cudaMemcpyAsync return before the data has
// been read: do not overwrite it until the stream has passed the copy.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  // Allocates `bytes` of pinned host memory (uninitialized). bytes == 0 gives an empty buffer.
  // Errors: kResourceExhausted with the bytes asked; other CUDA errors converted.
  static absl::StatusOr<PinnedHostBuffer> Allocate(size_t bytes);

  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept { *this = std::move(other); }
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  ~PinnedHostBuffer() { Reset(); }

  // Frees the memory now; the buffer becomes empty.
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

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_DEVICE_BUFFER_H_
