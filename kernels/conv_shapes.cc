#include "kernels/conv_shapes.h"

#include <limits>
#include <tuple>

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

absl::Status Field(const char* op, const char* name, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s = %d is out of range; it must be in [%d, %d]", op, name, value, lo,
                      hi));
}

// Elements of an [a, b, c, d] tensor must fit BLAS's and cuDNN's int.
absl::Status TensorSize(const char* op, const char* name, int64_t a, int64_t b, int64_t c,
                        int64_t d) {
  // Each factor is already <= kIntMax; divide instead of multiplying to avoid overflow.
  int64_t n = 1;
  for (int64_t f : {a, b, c, d}) {
    if (f != 0 && n > kIntMax / f) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s [%d, %d, %d, %d] has 2^31 or more elements; use a smaller batch", op, name, a,
          b, c, d));
    }
    n *= f;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConv2dShape(const Conv2dShape& s, const char* op) {
  for (const auto& [name, value, lo] :
       {std::tuple{"batch", s.batch, int64_t{0}}, std::tuple{"in_channels", s.in_channels, int64_t{1}},
        std::tuple{"in_height", s.in_height, int64_t{1}},
        std::tuple{"in_width", s.in_width, int64_t{1}},
        std::tuple{"out_channels", s.out_channels, int64_t{1}},
        std::tuple{"kernel_height", s.kernel_height, int64_t{1}},
        std::tuple{"kernel_width", s.kernel_width, int64_t{1}},
        std::tuple{"stride_height", s.stride_height, int64_t{1}},
        std::tuple{"stride_width", s.stride_width, int64_t{1}},
        std::tuple{"pad_height", s.pad_height, int64_t{0}},
        std::tuple{"pad_width", s.pad_width, int64_t{0}}}) {
    if (auto st = Field(op, name, value, lo, kIntMax); !st.ok()) return st;
  }
  if (s.in_height + 2 * s.pad_height < s.kernel_height ||
      s.in_width + 2 * s.pad_width < s.kernel_width) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: kernel %dx%d is larger than the padded input %dx%d; pad more or use a smaller kernel",
        op, s.kernel_height, s.kernel_width, s.in_height + 2 * s.pad_height,
        s.in_width + 2 * s.pad_width));
  }
  if (auto st = TensorSize(op, "x", s.batch, s.in_channels, s.in_height, s.in_width); !st.ok()) {
    return st;
  }
  if (auto st = TensorSize(op, "y", s.batch, s.out_channels, s.out_height(), s.out_width());
      !st.ok()) {
    return st;
  }
  // The CPU backend's im2col matrix of one example: [C * KH * KW, OH * OW].
  return TensorSize(op, "im2col", s.in_channels * s.kernel_height, s.kernel_width, s.out_height(),
                    s.out_width());
}

absl::Status ValidatePool2dShape(const Pool2dShape& s, const char* op) {
  for (const auto& [name, value, lo] :
       {std::tuple{"batch", s.batch, int64_t{0}}, std::tuple{"channels", s.channels, int64_t{1}},
        std::tuple{"in_height", s.in_height, int64_t{1}},
        std::tuple{"in_width", s.in_width, int64_t{1}},
        std::tuple{"window_height", s.window_height, int64_t{1}},
        std::tuple{"window_width", s.window_width, int64_t{1}},
        std::tuple{"stride_height", s.stride_height, int64_t{1}},
        std::tuple{"stride_width", s.stride_width, int64_t{1}}}) {
    if (auto st = Field(op, name, value, lo, kIntMax); !st.ok()) return st;
  }
  if (auto st = Field(op, "pad_height", s.pad_height, 0, s.window_height / 2); !st.ok()) return st;
  if (auto st = Field(op, "pad_width", s.pad_width, 0, s.window_width / 2); !st.ok()) return st;
  if (s.in_height + 2 * s.pad_height < s.window_height ||
      s.in_width + 2 * s.pad_width < s.window_width) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: window %dx%d is larger than the padded input %dx%d", op, s.window_height,
        s.window_width, s.in_height + 2 * s.pad_height, s.in_width + 2 * s.pad_width));
  }
  return TensorSize(op, "x", s.batch, s.channels, s.in_height, s.in_width);
}

}  // namespace hogwild
