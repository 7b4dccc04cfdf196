// The SGD/momentum/weight-decay parameter update on the device (kernels/functors.h
// SgdMomentumFn, PyTorch's torch.optim.SGD convention). Host API; the kernel is in sgd_update.cu.
#ifndef HOGWILD_KERNELS_CUDA_SGD_UPDATE_H_
#define HOGWILD_KERNELS_CUDA_SGD_UPDATE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace hogwild {

// params[i] = SgdMomentumFn{lr, momentum, weight_decay}(params[i], grad[i], velocity[i]).
//   params:   [n] float32, device memory, updated in place
//   grad:     [n] float32, device memory
//   velocity: [n] float32, device memory, updated in place; may be null when momentum == 0
// Each element is read and written by one thread with plain 32-bit accesses, so when several
// workers' streams update one shared array (Hogwild) an update may be lost but no element is
// torn. Enqueues on `stream`; n == 0 enqueues nothing. Returns the launch error.
cudaError_t LaunchSgdUpdate(cudaStream_t stream, int64_t n, float lr, float momentum,
                            float weight_decay, const float* grad, float* velocity, float* params);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_SGD_UPDATE_H_
