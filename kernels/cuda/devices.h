// Which CUDA devices this process can use.
#ifndef HOGWILD_KERNELS_CUDA_DEVICES_H_
#define HOGWILD_KERNELS_CUDA_DEVICES_H_

#include "absl/status/statusor.h"

namespace hogwild {

// Returns the number of CUDA devices visible to this process (cudaGetDeviceCount), >= 1.
//
// Errors: kFailedPrecondition when there is no usable device, with the reason: no driver or a
// driver older than the runtime (cudaErrorInsufficientDriver, the case on a build machine with no
// GPU), no device (cudaErrorNoDevice), or a count of 0. The message is fit to print as a test's
// skip reason or a CLI error.
//
// Thread-safety: thread-safe. Initializes the CUDA runtime on first use (no device context).
absl::StatusOr<int> CudaDeviceCount();

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_DEVICES_H_
