#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/optimizer_update.h"
#include "kernels/optimizer.h"

namespace hogwild {
namespace {

struct OptimizerOp {
  OptimizerFn fn;
  const float* grad;
  float* s0;  // null when the optimizer keeps no slot
  float* s1;  // null when it keeps fewer than two
  float* params;
  __device__ void operator()(int64_t i) const {
    float unused0 = 0.0f;
    float unused1 = 0.0f;
    params[i] =
        fn(params[i], grad[i], s0 != nullptr ? s0[i] : unused0, s1 != nullptr ? s1[i] : unused1);
  }
};

}  // namespace

cudaError_t LaunchOptimizerUpdate(cudaStream_t stream, int64_t n, const OptimizerFn& fn,
                                  int num_slots, const float* grad, float* s0, float* s1,
                                  float* params) {
  // Slots the optimizer does not keep are never touched, even when a buffer was passed.
  return cuda_internal::LaunchForEachIndex(
      stream, n,
      OptimizerOp{fn, grad, num_slots >= 1 ? s0 : nullptr, num_slots >= 2 ? s1 : nullptr, params});
}

}  // namespace hogwild
