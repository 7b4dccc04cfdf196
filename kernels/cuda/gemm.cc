#include "kernels/cuda/gemm.h"

namespace hogwild {

cublasStatus_t RowMajorSgemm(cublasHandle_t handle, Transpose trans_a, Transpose trans_b, int m,
                             int n, int k, float alpha, const float* a, const float* b, float beta,
                             float* c) {
  const bool ta = trans_a == Transpose::kYes;
  const bool tb = trans_b == Transpose::kYes;
  // Row-major leading dimensions: the stored row length of each operand.
  const int lda = ta ? m : k;
  const int ldb = tb ? k : n;
  // Column-major view: C^T [n, m] = op(B)^T [n, k] * op(A)^T [k, m]. B's bytes are B^T in
  // column-major, so op(B)^T needs B's own flag, and likewise for A.
  return cublasSgemm(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                     k, &alpha, b, ldb, a, lda, &beta, c, n);
}

}  // namespace hogwild
