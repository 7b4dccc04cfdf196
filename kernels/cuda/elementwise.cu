#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/functors.h"

namespace hogwild {
namespace {

struct FillOp {
  float value;
  float* x;
  __device__ void operator()(int64_t i) const { x[i] = value; }
};

struct ScaleOp {
  float alpha;
  float* x;
  // `=` for alpha == 0 (not `*=`) so a poisoned or uninitialized buffer becomes exact zeros.
  __device__ void operator()(int64_t i) const { x[i] = alpha == 0.0f ? 0.0f : alpha * x[i]; }
};

struct ReluOp {
  const float* x;
  float* y;
  __device__ void operator()(int64_t i) const { y[i] = ReluFn()(x[i]); }
};

struct ReluGradOp {
  const float* y;
  const float* dy;
  float* dx;
  __device__ void operator()(int64_t i) const { dx[i] = ReluGradFn()(y[i], dy[i]); }
};

struct AccumulateOp {
  const float* x;
  float* y;
  __device__ void operator()(int64_t i) const { y[i] += x[i]; }
};

}  // namespace

cudaError_t LaunchFill(cudaStream_t stream, int64_t n, float value, float* x) {
  return cuda_internal::LaunchForEachIndex(stream, n, FillOp{value, x});
}

cudaError_t LaunchScale(cudaStream_t stream, int64_t n, float alpha, float* x) {
  return cuda_internal::LaunchForEachIndex(stream, n, ScaleOp{alpha, x});
}

cudaError_t LaunchRelu(cudaStream_t stream, int64_t n, const float* x, float* y) {
  return cuda_internal::LaunchForEachIndex(stream, n, ReluOp{x, y});
}

cudaError_t LaunchReluGrad(cudaStream_t stream, int64_t n, const float* y, const float* dy,
                           float* dx) {
  return cuda_internal::LaunchForEachIndex(stream, n, ReluGradOp{y, dy, dx});
}

cudaError_t LaunchAccumulate(cudaStream_t stream, int64_t n, const float* x, float* y) {
  return cuda_internal::LaunchForEachIndex(stream, n, AccumulateOp{x, y});
}

}  // namespace hogwild
