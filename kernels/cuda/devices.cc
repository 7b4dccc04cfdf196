#include "kernels/cuda/devices.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_status.h"

namespace hogwild {

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (count <= 0) {
    return absl::FailedPreconditionError("cudaGetDeviceCount reported 0 CUDA devices");
  }
  return count;
}

}  // namespace hogwild
