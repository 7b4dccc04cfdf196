// Row-major SGEMM on cuBLAS, which is column-major. A row-major [r, c] matrix has the same bytes
// as a column-major [c, r] one, i.e. its transpose; so the row-major C = op(A) op(B) is computed
// as the column-major C^T = op(B)^T op(A)^T: swap the operands and m with n, keep the transpose
// flags and pass the row-major leading dimensions.
#ifndef HOGWILD_KERNELS_CUDA_GEMM_H_
#define HOGWILD_KERNELS_CUDA_GEMM_H_

#include <cublas_v2.h>

#include "kernels/backend.h"

namespace hogwild {

// C = alpha * op(A) * op(B) + beta * C with row-major operands in device memory:
//   op(A): [m, k] (A stored [m, k], or [k, m] when trans_a == kYes)
//   op(B): [k, n] (B stored [k, n], or [n, k] when trans_b == kYes)
//   C:     [m, n]; beta == 0 makes C write-only (cuBLAS does not read it).
// Requires m, n, k >= 1 (the caller handles empty shapes); alpha and beta are host scalars
// (CUBLAS_POINTER_MODE_HOST, the handle's default). Enqueued on the handle's stream, in FP32
// (the handle's default math mode: no TF32). Returns cuBLAS's status.
cublasStatus_t RowMajorSgemm(cublasHandle_t handle, Transpose trans_a, Transpose trans_b, int m,
                             int n, int k, float alpha, const float* a, const float* b, float beta,
                             float* c);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_GEMM_H_
