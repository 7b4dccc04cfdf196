// Softmax cross-entropy with its gradient on the device: one thread per row runs
// kernels/functors.h SoftmaxCrossEntropyRow (the same arithmetic as the CPU backend), and the
// per-row losses are reduced on the device in a fixed order (deterministic run to run).
// Host API; the kernels are in softmax_cross_entropy.cu.
#ifndef HOGWILD_KERNELS_CUDA_SOFTMAX_CROSS_ENTROPY_H_
#define HOGWILD_KERNELS_CUDA_SOFTMAX_CROSS_ENTROPY_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace hogwild {

// The number of float64 partial sums LaunchSoftmaxCrossEntropy needs in `partials` for `rows`
// rows (one per block of rows; 0 for rows == 0).
int64_t SoftmaxCrossEntropyPartials(int64_t rows);

// Per row r: dlogits[r, :] = scale * (softmax(logits[r, :]) - onehot(labels[r])); and
// loss_sum[0] = sum_r (logsumexp(logits[r, :]) - logits[r, labels[r]]), accumulated in float64.
//   logits:   [rows, classes] float32, device
//   labels:   [rows] int32 in [0, classes), device (not checked here)
//   dlogits:  [rows, classes] float32 out, device; must not alias logits
//   partials: [SoftmaxCrossEntropyPartials(rows)] float64 scratch, device (may be null when 0)
//   loss_sum: [1] float32 out, device; written even for rows == 0 (0)
// Requires classes >= 1. Two kernels on `stream`; returns the first launch error.
cudaError_t LaunchSoftmaxCrossEntropy(cudaStream_t stream, int64_t rows, int classes,
                                      const float* logits, const int32_t* labels, float scale,
                                      float* dlogits, double* partials, float* loss_sum);

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CUDA_SOFTMAX_CROSS_ENTROPY_H_
