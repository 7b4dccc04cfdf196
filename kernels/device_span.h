// DeviceSpan<T>: a pointer and a count of T in the memory of one worker's device: host memory
// for a CPU worker, GPU memory for a GPU worker. It is what the update policies hand a worker
// (the parameters to read) and take from it (the gradient), and unlike absl::Span it has no
// element access, so device memory cannot be dereferenced on the host by accident.
//
//   DeviceSpan<const float> grad(absl::MakeConstSpan(host_grad));   // a CPU worker's gradient
//   DeviceSpan<const float> grad(device_ptr, num_params);           // a GPU worker's gradient
//   absl::Span<const float> host = grad.HostSpan();                 // only on the CPU
//
// A host span converts implicitly (host memory is a CPU worker's device memory); the way back,
// HostSpan(), is explicit and is for code that knows the device is the CPU (the CPU policies,
// tests). Thread-safety: a value type; the memory's owner decides who may touch it.
#ifndef HOGWILD_KERNELS_DEVICE_SPAN_H_
#define HOGWILD_KERNELS_DEVICE_SPAN_H_

#include <cstdint>
#include <type_traits>

#include "absl/types/span.h"

namespace hogwild {

template <typename T>
class DeviceSpan {
 public:
  DeviceSpan() = default;
  // `data`: `size` elements of T in some device's memory (null when size is 0).
  DeviceSpan(T* data, int64_t size) : data_(data), size_(size) {}
  // Host memory, i.e. a CPU worker's device memory.
  DeviceSpan(absl::Span<T> host) : data_(host.data()), size_(static_cast<int64_t>(host.size())) {}
  // Any contiguous host container whose elements convert to T (std::vector<float> to
  // DeviceSpan<const float>, as absl::Span allows; a const container only for const T).
  template <typename C, typename = std::enable_if_t<
                            std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>>
  DeviceSpan(C& host) : data_(host.data()), size_(static_cast<int64_t>(host.size())) {}
  template <typename C, typename = std::enable_if_t<std::is_convertible_v<
                            decltype(std::declval<const C&>().data()), T*>>,
            typename = void>
  DeviceSpan(const C& host) : data_(host.data()), size_(static_cast<int64_t>(host.size())) {}
  // DeviceSpan<float> to DeviceSpan<const float>.
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  DeviceSpan(DeviceSpan<U> other) : data_(other.data()), size_(other.size()) {}

  T* data() const { return data_; }
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The same memory as a host span. Only valid when the memory is host memory (a CPU worker's,
  // or pinned host memory); dereferencing it for GPU memory is undefined behaviour.
  absl::Span<T> HostSpan() const { return absl::Span<T>(data_, static_cast<size_t>(size_)); }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_DEVICE_SPAN_H_
