// Value types describing one 2-D convolution or pooling call on NCHW float32 tensors, shared by
// the Backend ops (kernels/backend.h), both backends and the layers. Plain data, no state.
//
// Glossary: N batch, C input channels, H x W input height x width, F output channels (filters),
// KH x KW kernel (window), OH x OW output height x width.
//   OH = (H + 2 * pad_height - KH) / stride_height + 1   (floor), likewise OW;
// the convention of PyTorch (nn.Conv2d, nn.MaxPool2d with ceil_mode=False) and cuDNN.
//
// Example: conv 5x5, 1 -> 32 channels, padding 2, on a batch of 64 28x28 images:
//   Conv2dShape s{.batch = 64, .in_channels = 1, .in_height = 28, .in_width = 28,
//                 .out_channels = 32, .kernel_height = 5, .kernel_width = 5,
//                 .pad_height = 2, .pad_width = 2};
//   HOGWILD_RETURN_IF_ERROR(ValidateConv2dShape(s));   // s.out_height() == 28
#ifndef HOGWILD_KERNELS_CONV_SHAPES_H_
#define HOGWILD_KERNELS_CONV_SHAPES_H_

#include <cstdint>

#include "absl/status/status.h"

namespace hogwild {

// A convolution y = conv(x, w) + b (cross-correlation, as in PyTorch and cuDNN's
// CUDNN_CROSS_CORRELATION; no dilation, no groups).
//   x: [N, C, H, W], w: [F, C, KH, KW], b: [F], y: [N, F, OH, OW]
struct Conv2dShape {
  int64_t batch = 0;  // N, >= 0
  int64_t in_channels = 0;  // C, >= 1
  int64_t in_height = 0;  // H, >= 1
  int64_t in_width = 0;  // W, >= 1
  int64_t out_channels = 0;  // F, >= 1
  int64_t kernel_height = 0;  // KH, >= 1
  int64_t kernel_width = 0;  // KW, >= 1
  int64_t stride_height = 1;  // >= 1
  int64_t stride_width = 1;  // >= 1
  int64_t pad_height = 0;  // zeros added above and below, >= 0
  int64_t pad_width = 0;  // zeros added left and right, >= 0

  int64_t out_height() const {
    return (in_height + 2 * pad_height - kernel_height) / stride_height + 1;
  }
  int64_t out_width() const { return (in_width + 2 * pad_width - kernel_width) / stride_width + 1; }
  // Floats per example of x, of y, and of the filter w.
  int64_t in_size() const { return in_channels * in_height * in_width; }
  int64_t out_size() const { return out_channels * out_height() * out_width(); }
  int64_t filter_size() const { return out_channels * in_channels * kernel_height * kernel_width; }
};

// Max pooling y[n, c, oh, ow] = max of x[n, c, ih, iw] over the window
// ih in [oh * stride_height - pad_height, + window_height), likewise iw; padded positions are
// never the maximum (they count as -infinity, as in PyTorch and cuDNN).
//   x: [N, C, H, W], y: [N, C, OH, OW]
struct Pool2dShape {
  int64_t batch = 0;  // N, >= 0
  int64_t channels = 0;  // C, >= 1
  int64_t in_height = 0;  // H, >= 1
  int64_t in_width = 0;  // W, >= 1
  int64_t window_height = 0;  // KH, >= 1
  int64_t window_width = 0;  // KW, >= 1
  int64_t stride_height = 1;  // >= 1
  int64_t stride_width = 1;  // >= 1
  int64_t pad_height = 0;  // in [0, KH / 2], so that no window lies wholly in the padding
  int64_t pad_width = 0;  // in [0, KW / 2]

  int64_t out_height() const {
    return (in_height + 2 * pad_height - window_height) / stride_height + 1;
  }
  int64_t out_width() const { return (in_width + 2 * pad_width - window_width) / stride_width + 1; }
  int64_t in_size() const { return channels * in_height * in_width; }
  int64_t out_size() const { return channels * out_height() * out_width(); }
};

// OK when every field is in its range above, the output is at least 1x1 and every tensor has
// fewer than 2^31 elements (BLAS and cuDNN take int sizes). Otherwise kInvalidArgument naming the
// field, its value and the allowed range, prefixed with `op` (e.g. "Conv2dForward").
absl::Status ValidateConv2dShape(const Conv2dShape& s, const char* op = "conv2d");
absl::Status ValidatePool2dShape(const Pool2dShape& s, const char* op = "maxpool2d");

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CONV_SHAPES_H_
