// Batch normalization through cuDNN 9's legacy batch-norm API (cudnnBatchNormalizationForward
// Training / ForwardInference / Backward, CUDNN_BATCHNORM_SPATIAL): the CUDA side of the
// Backend's BatchNorm* ops, whose contracts (kernels/backend.h) these follow. An activation
// [N, C, S] is described to cuDNN as NCHW [N, C, S, 1], so SPATIAL mode normalizes each channel
// over N * S values for conv (S = H * W) and dense (S = 1) layers alike.
//   x, y, dy, dx: [N, C, S] float32 device memory; gamma, beta, mean, var, dgamma, dbeta: [C]
// The ops are enqueued on the handle's stream. Like the convolutions, this is the legacy
// descriptor API (deprecated in cuDNN 9, complete and supported there; no cudnn-frontend here).
// Descriptors are made per call (host-only calls, no allocation on the device).
//
// Thread-safety: one worker thread per handle. Errors: cuDNN statuses converted by
// kernels/cuda/cuda_status.h. Callers handle batch == 0 (cuDNN rejects empty tensors).
#ifndef HOGWILD_KERNELS_CUDA_CUDNN_BATCH_NORM_H_
#define HOGWILD_KERNELS_CUDA_CUDNN_BATCH_NORM_H_

#include <cudnn.h>

#include "absl/status/status.h"
#include "kernels/batch_norm_shape.h"

namespace hogwild {

// y = gamma (x - batch mean) / sqrt(batch biased var + eps) + beta.
absl::Status CudnnBatchNormForwardTraining(cudnnHandle_t handle, const BatchNormShape& shape,
                                           const float* x, const float* gamma, const float* beta,
                                           float* y);

// y = gamma (x - mean) / sqrt(var + eps) + beta.
absl::Status CudnnBatchNormForwardInference(cudnnHandle_t handle, const BatchNormShape& shape,
                                            const float* x, const float* gamma, const float* beta,
                                            const float* mean, const float* var, float* y);

// dx (not null: cuDNN always writes it), dgamma, dbeta of the training forward.
absl::Status CudnnBatchNormBackward(cudnnHandle_t handle, const BatchNormShape& shape,
                                    const float* x, const float* dy, const float* gamma, float* dx,
                                    float* dgamma, float* dbeta);

// mean = weight * batch mean, var = weight * unbiased batch variance: a training forward with
// exponential average factor 1 into mean and var (cuDNN's running variance uses the unbiased
// estimate, as PyTorch's), then scaled by weight (cudnnScaleTensor). scratch: [N*C*S + 2*C]
// floats of device memory, overwritten (the forward's y and placeholder gamma and beta). With
// N * S == 1 cuDNN's unbiased variance divides by 0, where the CPU backend writes 0: batch norm
// needs more than one value per channel in training anyway.
absl::Status CudnnBatchNormStatistics(cudnnHandle_t handle, const BatchNormShape& shape,
                                      const float* x, float weight, float* scratch, float* mean,
                                      float* var);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_CUDNN_BATCH_NORM_H_
