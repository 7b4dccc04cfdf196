// Batch normalization on the CPU: the loops behind CpuBackend's BatchNorm* ops (their contracts
// are in kernels/backend.h). Per-channel sums are accumulated in double, in index order, so the
// results are deterministic and within a few float ulps of a float64 reference.
//   x, y, dy, dx: [N, C, S] float32 host memory (kernels/batch_norm_shape.h)
//   gamma, beta, mean, var, dgamma, dbeta: [C] float32 host memory
// Shapes are the caller's to validate. Thread-safety: pure functions of their arguments.
#ifndef HOGWILD_KERNELS_CPU_BATCH_NORM_H_
#define HOGWILD_KERNELS_CPU_BATCH_NORM_H_

#include "kernels/batch_norm_shape.h"

namespace hogwild::cpu {

void BatchNormForwardTraining(const BatchNormShape& shape, const float* x, const float* gamma,
                              const float* beta, float* y);

void BatchNormForwardInference(const BatchNormShape& shape, const float* x, const float* gamma,
                               const float* beta, const float* mean, const float* var, float* y);

// dx may be null (not computed).
void BatchNormBackward(const BatchNormShape& shape, const float* x, const float* dy,
                       const float* gamma, float* dx, float* dgamma, float* dbeta);

void BatchNormStatistics(const BatchNormShape& shape, const float* x, float weight, float* mean,
                         float* var);

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_BATCH_NORM_H_
