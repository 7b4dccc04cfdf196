// The bias forward (broadcast add) and its gradient (column sum). Host API; the kernels are in
// bias.cu. Pointers are device memory of the stream's device; each launcher enqueues on
// `stream` and returns the launch error (cudaGetLastError).
#ifndef HOGWILD_KERNELS_CUDA_BIAS_H_
#define HOGWILD_KERNELS_CUDA_BIAS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace hogwild {

// x[r, c] += bias[c].   x: [rows, cols] float32, bias: [cols] float32.
cudaError_t LaunchAddBias(cudaStream_t stream, int64_t rows, int64_t cols, const float* bias,
                          float* x);

// db[c] = sum_r dy[r, c], summed in a fixed order (deterministic run to run); rows == 0 writes
// zeros. db is write-only.   dy: [rows, cols] float32, db: [cols] float32.
cudaError_t LaunchSumRows(cudaStream_t stream, int64_t rows, int64_t cols, const float* dy,
                          float* db);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_BIAS_H_
