#include "kernels/cuda/bias.h"
#include "kernels/cuda/launch.cuh"

namespace hogwild {
namespace {

struct AddBiasOp {
  int64_t cols;
  const float* bias;
  float* x;
  __device__ void operator()(int64_t i) const { x[i] += bias[i % cols]; }
};

// A 32 x 16 block owns 32 adjacent columns: threadIdx.x walks the columns (coalesced loads of a
// row), threadIdx.y strides over the rows; the 16 partial sums per column are then added in a
// fixed order, so the result does not depend on scheduling.
constexpr int kColsPerBlock = 32;
constexpr int kRowLanes = 16;

__global__ void SumRowsKernel(int64_t rows, int64_t cols, const float* dy, float* db) {
  __shared__ float partial[kRowLanes][kColsPerBlock + 1];  // +1: no bank conflicts
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kColsPerBlock + threadIdx.x;
  float sum = 0.0f;
  if (col < cols) {
    for (int64_t r = threadIdx.y; r < rows; r += kRowLanes) sum += dy[r * cols + col];
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float total = 0.0f;
    for (int lane = 0; lane < kRowLanes; ++lane) total += partial[lane][threadIdx.x];
    db[col] = total;
  }
}

}  // namespace

cudaError_t LaunchAddBias(cudaStream_t stream, int64_t rows, int64_t cols, const float* bias,
                          float* x) {
  if (cols == 0) return cudaSuccess;
  return cuda_internal::LaunchForEachIndex(stream, rows * cols, AddBiasOp{cols, bias, x});
}

cudaError_t LaunchSumRows(cudaStream_t stream, int64_t rows, int64_t cols, const float* dy,
                          float* db) {
  if (cols == 0) return cudaSuccess;
  const int64_t blocks = (cols + kColsPerBlock - 1) / kColsPerBlock;
  SumRowsKernel<<<static_cast<unsigned>(blocks), dim3(kColsPerBlock, kRowLanes), 0, stream>>>(
      rows, cols, dy, db);
  return cudaGetLastError();
}

}  // namespace hogwild
