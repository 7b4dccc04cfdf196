// Device-side helper shared by the element-wise kernels: a grid-stride loop launcher that owns
// the grid arithmetic, the stream and the post-launch error check (tiny-cuda-nn's linear_kernel).
// Include only from .cu files.
#ifndef HOGWILD_KERNELS_CUDA_LAUNCH_CUH_
#define HOGWILD_KERNELS_CUDA_LAUNCH_CUH_

#include <cuda_runtime.h>

#include <cstdint>

namespace hogwild::cuda_internal {

// 256 threads: a multiple of the warp size that keeps occupancy high on sm_80/sm_90 for these
// register-light kernels.
inline constexpr int kBlockSize = 256;
// Grid cap: beyond ~2 waves of blocks on the largest GPU a grid-stride loop is as fast, and the
// cap keeps the block count within gridDim.x for any n.
inline constexpr int64_t kMaxBlocks = 4096;

inline int64_t BlocksFor(int64_t n, int64_t block = kBlockSize) {
  const int64_t blocks = (n + block - 1) / block;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

// Calls op(i) for every i in [0, n). `Op` is a trivially copyable struct with a
// `__device__ void operator()(int64_t i) const`.
template <typename Op>
__global__ void ForEachIndexKernel(int64_t n, Op op) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    op(i);
  }
}

// Enqueues ForEachIndexKernel on `stream`; n == 0 launches nothing. Returns the launch error.
template <typename Op>
cudaError_t LaunchForEachIndex(cudaStream_t stream, int64_t n, const Op& op) {
  if (n <= 0) return cudaSuccess;
  ForEachIndexKernel<<<static_cast<unsigned>(BlocksFor(n)), kBlockSize, 0, stream>>>(n, op);
  return cudaGetLastError();
}

}  // namespace hogwild::cuda_internal

#endif  // HOGWILD_KERNELS_CUDA_LAUNCH_CUH_
