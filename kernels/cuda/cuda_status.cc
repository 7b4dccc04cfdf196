#include "kernels/cuda/cuda_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace hogwild {
namespace {

std::string CurrentDevice() {
  int device = -1;
  // Reading the device does not touch the error state that the caller is reporting.
  if (cudaGetDevice(&device) != cudaSuccess) return "cuda:?";
  return absl::StrCat("cuda:", device);
}

absl::Status MakeStatus(absl::StatusCode code, const char* expr, const char* file, int line,
                        const char* name, const char* description) {
  return absl::Status(code, absl::StrCat(CurrentDevice(), ": ", expr, " failed at ", file, ":",
                                         line, ": ", name, ": ", description));
}

}  // namespace

absl::Status CudaResultToStatus(cudaError_t result, const char* expr, const char* file, int line) {
  if (result == cudaSuccess) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (result) {
    case cudaErrorMemoryAllocation:
      code = absl::StatusCode::kResourceExhausted;
      break;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
      code = absl::StatusCode::kFailedPrecondition;
      break;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
      code = absl::StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  return MakeStatus(code, expr, file, line, cudaGetErrorName(result), cudaGetErrorString(result));
}

absl::Status CudaResultToStatus(cublasStatus_t result, const char* expr, const char* file,
                                int line) {
  if (result == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (result) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      code = absl::StatusCode::kResourceExhausted;
      break;
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      code = absl::StatusCode::kFailedPrecondition;
      break;
    case CUBLAS_STATUS_INVALID_VALUE:
      code = absl::StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  return MakeStatus(code, expr, file, line, cublasGetStatusName(result),
                    cublasGetStatusString(result));
}

absl::Status CudaResultToStatus(cudnnStatus_t result, const char* expr, const char* file,
                                int line) {
  if (result == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  // cuDNN 9 groups its codes by thousands: 2xxx bad parameter, 3xxx not supported, 4xxx
  // internal (4003/4004: host/device allocation failed).
  absl::StatusCode code = absl::StatusCode::kInternal;
  const int value = static_cast<int>(result);
  if (value == static_cast<int>(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED) ||
      value == static_cast<int>(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)) {
    code = absl::StatusCode::kResourceExhausted;
  } else if (value / 1000 == 2) {
    code = absl::StatusCode::kInvalidArgument;
  } else if (value / 1000 == 3 || result == CUDNN_STATUS_NOT_INITIALIZED) {
    code = absl::StatusCode::kFailedPrecondition;
  }
  // cuDNN has no symbolic-name function; its error string starts with the enum name.
  return MakeStatus(code, expr, file, line, "cudnnStatus_t", cudnnGetErrorString(result));
}

absl::Status CudaResultToStatus(ncclResult_t result, const char* expr, const char* file, int line) {
  if (result == ncclSuccess) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (result) {
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      code = absl::StatusCode::kInvalidArgument;
      break;
    case ncclSystemError:
    case ncclRemoteError:
      code = absl::StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  return MakeStatus(code, expr, file, line, "ncclResult_t", ncclGetErrorString(result));
}

}  // namespace hogwild
