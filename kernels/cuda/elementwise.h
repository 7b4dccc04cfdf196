// Element-wise kernels: Fill, Scale, ReLU and its gradient, Accumulate. Host API; the kernels
// are in elementwise.cu. Every pointer is device memory of the stream's device; n == 0 enqueues
// nothing. Each launcher enqueues on `stream` and returns the launch error (cudaGetLastError),
// to be converted with HOGWILD_CUDA_RETURN_IF_ERROR; execution errors surface at the next
// synchronization. Thread-safety: as for the stream.
#ifndef HOGWILD_KERNELS_CUDA_ELEMENTWISE_H_
#define HOGWILD_KERNELS_CUDA_ELEMENTWISE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace hogwild {

// x[i] = value.   x: [n] float32.
cudaError_t LaunchFill(cudaStream_t stream, int64_t n, float value, float* x);

// x[i] *= alpha; alpha == 0 writes zeros (NaNs in x are not propagated).   x: [n] float32.
cudaError_t LaunchScale(cudaStream_t stream, int64_t n, float alpha, float* x);

// y[i] = ReluFn(x[i]) (kernels/functors.h); y may alias x.   x, y: [n] float32.
cudaError_t LaunchRelu(cudaStream_t stream, int64_t n, const float* x, float* y);

// dx[i] = ReluGradFn(y[i], dy[i]), y the forward output; dx may alias dy.   [n] float32 each.
cudaError_t LaunchReluGrad(cudaStream_t stream, int64_t n, const float* y, const float* dy,
                           float* dx);

// y[i] += x[i].   x, y: [n] float32.
cudaError_t LaunchAccumulate(cudaStream_t stream, int64_t n, const float* x, float* y);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_ELEMENTWISE_H_
