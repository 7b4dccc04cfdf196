// BackendBuffer<T>: an RAII array of T in a Backend's memory (host memory for the CPU backend,
// device memory for a GPU backend). Move-only; frees through the backend that allocated it.
//
//   HOGWILD_ASSIGN_OR_RETURN(auto grad, BackendBuffer<float>::Create(backend, num_params));
//
// Thread-safety: like the Backend it came from (one worker thread).
#ifndef HOGWILD_KERNELS_BUFFER_H_
#define HOGWILD_KERNELS_BUFFER_H_

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace hogwild {

template <typename T>
class BackendBuffer {
 public:
  BackendBuffer() = default;
  BackendBuffer(BackendBuffer&& other) noexcept { *this = std::move(other); }
  BackendBuffer& operator=(BackendBuffer&& other) noexcept {
    if (this != &other) {
      Reset();
      backend_ = std::exchange(other.backend_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;
  ~BackendBuffer() { Reset(); }

  // Allocates `count` (>= 0) uninitialized elements. Errors: the backend's allocation error.
  static absl::StatusOr<BackendBuffer> Create(Backend* backend, int64_t count) {
    BackendBuffer buffer;
    auto ptr = backend->Allocate(static_cast<size_t>(count) * sizeof(T));
    if (!ptr.ok()) return ptr.status();
    buffer.backend_ = backend;
    buffer.data_ = static_cast<T*>(*ptr);
    buffer.size_ = count;
    return buffer;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }
  size_t bytes() const { return static_cast<size_t>(size_) * sizeof(T); }

 private:
  void Reset() {
    if (backend_ != nullptr) backend_->Free(data_);
    backend_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }

  Backend* backend_ = nullptr;
  T* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_BUFFER_H_
