#include "kernels/cuda/scoped_device.h"

#include <cuda_runtime_api.h>

#include "core/logging.h"
#include "kernels/cuda/cuda_status.h"

namespace hogwild {

absl::StatusOr<ScopedDevice> ScopedDevice::Enter(int device) {
  int previous = 0;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaGetDevice(&previous));
  // cudaSetDevice is cheap but not free; most callers already are on the device.
  if (previous != device) HOGWILD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  return ScopedDevice(previous, device);
}

ScopedDevice::~ScopedDevice() {
  if (previous_ < 0 || previous_ == entered_) return;
  const absl::Status s = HOGWILD_CUDA_STATUS(cudaSetDevice(previous_));
  LogIfError("ScopedDevice", s);
}

}  // namespace hogwild
