// ScopedDevice: makes a CUDA device current on the calling thread for one scope and restores the
// previous one on exit, for code that touches another GPU's memory or streams from a thread that
// belongs to a worker of some other device (a synchronous reduction driven by one thread, a copy
// of the parameters to the host at evaluation time).
//
// Example:
//   HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(1));
//   HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(...));  // runs with device 1 current
//   // device of before restored here
//
// Host-only header. Thread-safety: affects the calling thread only; not shareable between
// threads (restore happens on the thread that entered).
#ifndef HOGWILD_KERNELS_CUDA_SCOPED_DEVICE_H_
#define HOGWILD_KERNELS_CUDA_SCOPED_DEVICE_H_

#include <utility>

#include "absl/status/statusor.h"

namespace hogwild {

class ScopedDevice {
 public:
  // Makes `device` current (cudaSetDevice) after remembering the current one (cudaGetDevice).
  // Errors: the converted CUDA error, naming the call and the device.
  static absl::StatusOr<ScopedDevice> Enter(int device);

  ScopedDevice(ScopedDevice&& other) noexcept
      : previous_(std::exchange(other.previous_, -1)), entered_(std::exchange(other.entered_, -1)) {}
  ScopedDevice& operator=(ScopedDevice&&) = delete;
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  // Restores the previous device when it differs; logs (never throws) if that fails.
  ~ScopedDevice();

 private:
  ScopedDevice(int previous, int entered) : previous_(previous), entered_(entered) {}
  int previous_;  // -1: nothing to restore (moved from)
  int entered_;
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_SCOPED_DEVICE_H_
