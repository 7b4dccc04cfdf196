// Gradient clipping by global norm (PyTorch's torch.nn.utils.clip_grad_norm_, TF's
// tf.clip_by_global_norm): when the L2 norm of the whole gradient exceeds max_norm, the gradient
// is multiplied by max_norm / (norm + 1e-6). Which gradient is clipped is the policy's: sync and
// backup clip the averaged gradient (after the tower sum, never each tower's share: the
// MirroredStrategy mistake users reported), async, ssp and local_sgd each worker's own gradient.
#ifndef HOGWILD_SYNC_GRAD_CLIP_H_
#define HOGWILD_SYNC_GRAD_CLIP_H_

#include <cmath>

#include "absl/types/span.h"

namespace hogwild {

// Sum of squares of `values` ([n] float32), accumulated in double in index order. Pure.
inline double SumOfSquares(absl::Span<const float> values) {
  double sum = 0.0;
  for (float v : values) sum += static_cast<double>(v) * static_cast<double>(v);
  return sum;
}

// The factor the gradient is multiplied by: min(1, max_norm / (sqrt(sum_of_squares) + 1e-6)),
// computed in double and rounded to float once; 1 when max_norm is 0 (no clipping). Pure.
inline float ClipScale(double sum_of_squares, float max_norm) {
  if (max_norm <= 0.0f) return 1.0f;
  const double coef = static_cast<double>(max_norm) / (std::sqrt(sum_of_squares) + 1e-6);
  return coef < 1.0 ? static_cast<float>(coef) : 1.0f;
}

}  // namespace hogwild

#endif  // HOGWILD_SYNC_GRAD_CLIP_H_
