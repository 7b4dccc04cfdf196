#include "kernels/cuda/cudnn_conv.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/cuda/cuda_status.h"

namespace hogwild {
namespace {

// Sizes were checked against int by ValidateConv2dShape / ValidatePool2dShape.
int I(int64_t v) { return static_cast<int>(v); }

absl::Status SetNchw(cudnnTensorDescriptor_t desc, int64_t n, int64_t c, int64_t h, int64_t w) {
  HOGWILD_CUDA_RETURN_IF_ERROR(
      cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, I(n), I(c), I(h), I(w)));
  return absl::OkStatus();
}

// Picks from cuDNN's ranked heuristic results (see the header): the first usable deterministic
// candidate within the workspace limit, else the first usable one.
template <typename Perf>
absl::StatusOr<Perf> Choose(const Perf* perf, int count, const char* pass) {
  const Perf* fallback = nullptr;
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        perf[i].memory > CudnnConv::kMaxWorkspaceBytes) {
      continue;
    }
    if (perf[i].determinism == CUDNN_DETERMINISTIC) return perf[i];
    if (fallback == nullptr) fallback = &perf[i];
  }
  if (fallback != nullptr) return *fallback;
  return absl::InternalError(absl::StrFormat(
      "cuDNN offers no %s convolution algorithm for this shape within %d bytes of workspace", pass,
      CudnnConv::kMaxWorkspaceBytes));
}

}  // namespace

struct CudnnConv::ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgoPerf_t forward;
  cudnnConvolutionBwdDataAlgoPerf_t backward_data;
  cudnnConvolutionBwdFilterAlgoPerf_t backward_filter;

  ~ConvPlan() {
    if (x != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(x)));
    if (y != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(y)));
    if (bias != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(bias)));
    if (w != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyFilterDescriptor(w)));
    if (conv != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyConvolutionDescriptor(conv)));
  }
};

struct CudnnConv::PoolPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;

  ~PoolPlan() {
    if (x != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(x)));
    if (y != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyTensorDescriptor(y)));
    if (pool != nullptr) LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroyPoolingDescriptor(pool)));
  }
};

CudnnConv::CudnnConv(cudnnHandle_t handle) : handle_(handle) {}

absl::StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(CUstream_st* stream) {
  cudnnHandle_t handle = nullptr;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreate(&handle));
  std::unique_ptr<CudnnConv> conv(new CudnnConv(handle));  // destroys the handle on error
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetStream(handle, stream));
  return conv;
}

CudnnConv::~CudnnConv() {
  conv_plans_.clear();
  pool_plans_.clear();
  workspace_.Reset();
  LogIfError("CudnnConv", HOGWILD_CUDA_STATUS(cudnnDestroy(handle_)));
}

absl::Status CudnnConv::EnsureWorkspace(size_t bytes) {
  if (workspace_.bytes() >= bytes) return absl::OkStatus();
  workspace_.Reset();  // cudaFree waits for the device: no enqueued call still uses it
  HOGWILD_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::Allocate(bytes));
  return absl::OkStatus();
}

absl::StatusOr<const CudnnConv::ConvPlan*> CudnnConv::GetConvPlan(const Conv2dShape& s) {
  const ConvKey key = {s.batch,         s.in_channels,   s.in_height,    s.in_width,
                       s.out_channels,  s.kernel_height, s.kernel_width, s.stride_height,
                       s.stride_width,  s.pad_height,    s.pad_width};
  if (auto it = conv_plans_.find(key); it != conv_plans_.end()) return it->second.get();

  auto plan = std::make_unique<ConvPlan>();
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->x));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->y));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->bias));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&plan->w));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&plan->conv));
  HOGWILD_RETURN_IF_ERROR(SetNchw(plan->x, s.batch, s.in_channels, s.in_height, s.in_width));
  HOGWILD_RETURN_IF_ERROR(
      SetNchw(plan->y, s.batch, s.out_channels, s.out_height(), s.out_width()));
  HOGWILD_RETURN_IF_ERROR(SetNchw(plan->bias, 1, s.out_channels, 1, 1));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(
      plan->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, I(s.out_channels), I(s.in_channels),
      I(s.kernel_height), I(s.kernel_width)));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(
      plan->conv, I(s.pad_height), I(s.pad_width), I(s.stride_height), I(s.stride_width),
      /*dilation_h=*/1, /*dilation_w=*/1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetConvolutionMathType(plan->conv, CUDNN_FMA_MATH));

  int n = 0, c = 0, h = 0, w = 0;
  HOGWILD_CUDA_RETURN_IF_ERROR(
      cudnnGetConvolution2dForwardOutputDim(plan->conv, plan->x, plan->w, &n, &c, &h, &w));
  if (n != s.batch || c != s.out_channels || h != s.out_height() || w != s.out_width()) {
    return absl::InternalError(absl::StrFormat(
        "cuDNN's convolution output %dx%dx%dx%d differs from the expected %dx%dx%dx%d", n, c, h, w,
        s.batch, s.out_channels, s.out_height(), s.out_width()));
  }

  constexpr int kCandidates = 16;  // more than cuDNN has algorithms of any one kind
  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd[kCandidates];
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
      handle_, plan->x, plan->w, plan->conv, plan->y, kCandidates, &count, fwd));
  HOGWILD_ASSIGN_OR_RETURN(plan->forward, Choose(fwd, count, "forward"));
  cudnnConvolutionBwdDataAlgoPerf_t bwd_data[kCandidates];
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      handle_, plan->w, plan->y, plan->conv, plan->x, kCandidates, &count, bwd_data));
  HOGWILD_ASSIGN_OR_RETURN(plan->backward_data, Choose(bwd_data, count, "backward-data"));
  cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[kCandidates];
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      handle_, plan->x, plan->y, plan->conv, plan->w, kCandidates, &count, bwd_filter));
  HOGWILD_ASSIGN_OR_RETURN(plan->backward_filter, Choose(bwd_filter, count, "backward-filter"));

  // The heuristics' memory figures are estimates; ask for the exact sizes of the chosen ones.
  size_t bytes = 0, need = 0;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(
      handle_, plan->x, plan->w, plan->conv, plan->y, plan->forward.algo, &bytes));
  need = std::max(need, bytes);
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(
      handle_, plan->w, plan->y, plan->conv, plan->x, plan->backward_data.algo, &bytes));
  need = std::max(need, bytes);
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterWorkspaceSize(
      handle_, plan->x, plan->y, plan->conv, plan->w, plan->backward_filter.algo, &bytes));
  need = std::max(need, bytes);
  plan->forward.memory = plan->backward_data.memory = plan->backward_filter.memory = need;
  HOGWILD_RETURN_IF_ERROR(EnsureWorkspace(need));
  return (conv_plans_[key] = std::move(plan)).get();
}

absl::StatusOr<const CudnnConv::PoolPlan*> CudnnConv::GetPoolPlan(const Pool2dShape& s) {
  const PoolKey key = {s.batch,         s.channels,     s.in_height,     s.in_width,
                       s.window_height, s.window_width, s.stride_height, s.stride_width,
                       s.pad_height,    s.pad_width};
  if (auto it = pool_plans_.find(key); it != pool_plans_.end()) return it->second.get();
  auto plan = std::make_unique<PoolPlan>();
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->x));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->y));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnCreatePoolingDescriptor(&plan->pool));
  HOGWILD_RETURN_IF_ERROR(SetNchw(plan->x, s.batch, s.channels, s.in_height, s.in_width));
  HOGWILD_RETURN_IF_ERROR(SetNchw(plan->y, s.batch, s.channels, s.out_height(), s.out_width()));
  // MAX_DETERMINISTIC: the backward pass routes each gradient to one maximum, without atomics.
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnSetPooling2dDescriptor(
      plan->pool, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, I(s.window_height),
      I(s.window_width), I(s.pad_height), I(s.pad_width), I(s.stride_height), I(s.stride_width)));
  int n = 0, c = 0, h = 0, w = 0;
  HOGWILD_CUDA_RETURN_IF_ERROR(
      cudnnGetPooling2dForwardOutputDim(plan->pool, plan->x, &n, &c, &h, &w));
  if (n != s.batch || c != s.channels || h != s.out_height() || w != s.out_width()) {
    return absl::InternalError(absl::StrFormat(
        "cuDNN's pooling output %dx%dx%dx%d differs from the expected %dx%dx%dx%d", n, c, h, w,
        s.batch, s.channels, s.out_height(), s.out_width()));
  }
  return (pool_plans_[key] = std::move(plan)).get();
}

absl::Status CudnnConv::Forward(const Conv2dShape& shape, const float* x, const float* w,
                                const float* bias, float* y) {
  HOGWILD_ASSIGN_OR_RETURN(const ConvPlan* plan, GetConvPlan(shape));
  const float one = 1.0f, zero = 0.0f;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnConvolutionForward(
      handle_, &one, plan->x, x, plan->w, w, plan->conv, plan->forward.algo, workspace_.data(),
      workspace_.bytes(), &zero, plan->y, y));
  if (bias != nullptr) {
    // y += bias broadcast over N, OH, OW.
    HOGWILD_CUDA_RETURN_IF_ERROR(cudnnAddTensor(handle_, &one, plan->bias, bias, &one, plan->y, y));
  }
  return absl::OkStatus();
}

absl::Status CudnnConv::BackwardData(const Conv2dShape& shape, const float* w, const float* dy,
                                     float* dx) {
  HOGWILD_ASSIGN_OR_RETURN(const ConvPlan* plan, GetConvPlan(shape));
  const float one = 1.0f, zero = 0.0f;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnConvolutionBackwardData(
      handle_, &one, plan->w, w, plan->y, dy, plan->conv, plan->backward_data.algo,
      workspace_.data(), workspace_.bytes(), &zero, plan->x, dx));
  return absl::OkStatus();
}

absl::Status CudnnConv::BackwardFilter(const Conv2dShape& shape, const float* x, const float* dy,
                                       float* dw, float* db) {
  HOGWILD_ASSIGN_OR_RETURN(const ConvPlan* plan, GetConvPlan(shape));
  const float one = 1.0f, zero = 0.0f;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnConvolutionBackwardFilter(
      handle_, &one, plan->x, x, plan->y, dy, plan->conv, plan->backward_filter.algo,
      workspace_.data(), workspace_.bytes(), &zero, plan->w, dw));
  if (db != nullptr) {
    HOGWILD_CUDA_RETURN_IF_ERROR(
        cudnnConvolutionBackwardBias(handle_, &one, plan->y, dy, &zero, plan->bias, db));
  }
  return absl::OkStatus();
}

absl::Status CudnnConv::MaxPoolForward(const Pool2dShape& shape, const float* x, float* y) {
  HOGWILD_ASSIGN_OR_RETURN(const PoolPlan* plan, GetPoolPlan(shape));
  const float one = 1.0f, zero = 0.0f;
  HOGWILD_CUDA_RETURN_IF_ERROR(
      cudnnPoolingForward(handle_, plan->pool, &one, plan->x, x, &zero, plan->y, y));
  return absl::OkStatus();
}

absl::Status CudnnConv::MaxPoolBackward(const Pool2dShape& shape, const float* x, const float* y,
                                        const float* dy, float* dx) {
  HOGWILD_ASSIGN_OR_RETURN(const PoolPlan* plan, GetPoolPlan(shape));
  const float one = 1.0f, zero = 0.0f;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudnnPoolingBackward(handle_, plan->pool, &one, plan->y, y,
                                                    plan->y, dy, plan->x, x, &zero, plan->x, dx));
  return absl::OkStatus();
}

}  // namespace hogwild
