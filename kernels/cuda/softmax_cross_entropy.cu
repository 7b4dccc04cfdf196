#include "kernels/cuda/softmax_cross_entropy.h"
#include "kernels/functors.h"

namespace hogwild {
namespace {

// 128 rows per block: a batch of 64-1024 rows spreads over several SMs, and the shared-memory
// tree below stays small.
constexpr int kRowsPerBlock = 128;
// The final reduction runs in one block of this many threads.
constexpr int kReduceThreads = 256;

// Sums `value` over the block's threads in a fixed tree order; thread 0 gets the total.
template <int kThreads>
__device__ double BlockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) shared[threadIdx.x] += shared[threadIdx.x + width];
    __syncthreads();
  }
  return shared[0];
}

__global__ void RowLossKernel(int64_t rows, int classes, const float* logits, const int32_t* labels,
                              float scale, float* dlogits, double* partials) {
  __shared__ double shared[kRowsPerBlock];
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x;
  double loss = 0.0;
  if (row < rows) {
    const int64_t offset = row * classes;
    loss = SoftmaxCrossEntropyRow(logits + offset, classes, labels[row], scale, dlogits + offset);
  }
  const double total = BlockSum<kRowsPerBlock>(loss, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void SumPartialsKernel(int64_t count, const double* partials, float* loss_sum) {
  __shared__ double shared[kReduceThreads];
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += kReduceThreads) sum += partials[i];
  const double total = BlockSum<kReduceThreads>(sum, shared);
  if (threadIdx.x == 0) *loss_sum = static_cast<float>(total);
}

}  // namespace

int64_t SoftmaxCrossEntropyPartials(int64_t rows) {
  return (rows + kRowsPerBlock - 1) / kRowsPerBlock;
}

cudaError_t LaunchSoftmaxCrossEntropy(cudaStream_t stream, int64_t rows, int classes,
                                      const float* logits, const int32_t* labels, float scale,
                                      float* dlogits, double* partials, float* loss_sum) {
  const int64_t blocks = SoftmaxCrossEntropyPartials(rows);
  if (blocks > 0) {
    RowLossKernel<<<static_cast<unsigned>(blocks), kRowsPerBlock, 0, stream>>>(
        rows, classes, logits, labels, scale, dlogits, partials);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  // Runs for rows == 0 too, so loss_sum is always written.
  SumPartialsKernel<<<1, kReduceThreads, 0, stream>>>(blocks, partials, loss_sum);
  return cudaGetLastError();
}

}  // namespace hogwild
