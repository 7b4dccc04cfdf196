// The shape of a batch-normalization op (kernels/backend.h): an activation [N, C, S] row-major,
// normalized per channel over the N * S values of that channel. S is the spatial size H * W of an
// NCHW convolution output, or 1 for dense activations [N, C] (then C is the feature count).
#ifndef HOGWILD_KERNELS_BATCH_NORM_SHAPE_H_
#define HOGWILD_KERNELS_BATCH_NORM_SHAPE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace hogwild {

struct BatchNormShape {
  int64_t batch = 0;     // N, >= 0
  int64_t channels = 1;  // C, >= 1
  int64_t spatial = 1;   // S, >= 1
  float eps = 1e-5f;     // added to the variance before the square root (PyTorch's default), > 0

  int64_t size() const { return batch * channels * spatial; }
  // Values per channel in a batch: N * S.
  int64_t per_channel() const { return batch * spatial; }
};

// kInvalidArgument naming `what` unless batch >= 0, channels >= 1, spatial >= 1, eps > 0. Pure.
inline absl::Status ValidateBatchNormShape(const BatchNormShape& s, const char* what) {
  if (s.batch < 0 || s.channels < 1 || s.spatial < 1 || !(s.eps > 0.0f)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: bad batch-norm shape: batch %d, channels %d, spatial %d, eps %g", what,
                        s.batch, s.channels, s.spatial, s.eps));
  }
  return absl::OkStatus();
}

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_BATCH_NORM_SHAPE_H_
