#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/sgd_update.h"
#include "kernels/functors.h"

namespace hogwild {
namespace {

struct SgdOp {
  SgdMomentumFn fn;
  const float* grad;
  float* velocity;  // null when fn.momentum == 0
  float* params;
  __device__ void operator()(int64_t i) const {
    float unused = 0.0f;
    params[i] = fn(params[i], grad[i], velocity != nullptr ? velocity[i] : unused);
  }
};

}  // namespace

cudaError_t LaunchSgdUpdate(cudaStream_t stream, int64_t n, float lr, float momentum,
                            float weight_decay, const float* grad, float* velocity, float* params) {
  // Without momentum the velocity is neither read nor written (SgdMomentumFn's contract), so a
  // caller's buffer stays untouched even when one was passed.
  float* v = momentum != 0.0f ? velocity : nullptr;
  return cuda_internal::LaunchForEachIndex(
      stream, n, SgdOp{SgdMomentumFn{lr, momentum, weight_decay}, grad, v, params});
}

}  // namespace hogwild
