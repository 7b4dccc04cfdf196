// Every optimizer's parameter update on the device (kernels/optimizer.h OptimizerFn, PyTorch's
// torch.optim rules). Host API; the kernel is in optimizer_update.cu. The GPU update policies
// launch it for the optimizers other than sgd and momentum (sync/device_optimizer_slots.h);
// tests/optimizer_update_gpu_test.cc checks it against the CPU loop.
#ifndef HOGWILD_KERNELS_CUDA_OPTIMIZER_UPDATE_H_
#define HOGWILD_KERNELS_CUDA_OPTIMIZER_UPDATE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/optimizer.h"

namespace hogwild {

// params[i] = fn(params[i], grad[i], s0[i], s1[i]) for i in [0, n).
//   params: [n] float32, device memory, updated in place
//   grad:   [n] float32, device memory
//   s0, s1: [n] float32 state slots, device memory, updated in place; s0 needed when
//           num_slots >= 1, s1 when num_slots == 2 (NumStateSlots); may be null otherwise
// Each element is read and written by one thread with plain 32-bit accesses (no element is
// torn). Enqueues on `stream`; n == 0 enqueues nothing. Returns the launch error.
cudaError_t LaunchOptimizerUpdate(cudaStream_t stream, int64_t n, const OptimizerFn& fn,
                                  int num_slots, const float* grad, float* s0, float* s1,
                                  float* params);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_OPTIMIZER_UPDATE_H_
