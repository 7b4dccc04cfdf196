// Float64 references for the convolution and pooling tests: the direct loops of the
// definitions in kernels/conv_shapes.h, written independently of kernels/cpu (no im2col).
#ifndef HOGWILD_TESTS_CONV_REFERENCE_H_
#define HOGWILD_TESTS_CONV_REFERENCE_H_

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/conv_shapes.h"

namespace hogwild::testing {

// y[n, f, oh, ow] = b[f] + sum_{c, kh, kw} w[f, c, kh, kw] * x[n, c, ih, iw] over the in-range
// ih = oh * sh - ph + kh, iw = ow * sw - pw + kw: the 7 loops n, f, oh, ow, c, kh, kw.
inline std::vector<double> ReferenceConv2d(const Conv2dShape& s, const std::vector<double>& x,
                                           const std::vector<double>& w,
                                           const std::vector<double>& b) {
  const int64_t OH = s.out_height(), OW = s.out_width();
  std::vector<double> y(s.batch * s.out_channels * OH * OW);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t f = 0; f < s.out_channels; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double sum = b.empty() ? 0.0 : b[f];
          for (int64_t c = 0; c < s.in_channels; ++c)
            for (int64_t kh = 0; kh < s.kernel_height; ++kh)
              for (int64_t kw = 0; kw < s.kernel_width; ++kw) {
                const int64_t ih = oh * s.stride_height - s.pad_height + kh;
                const int64_t iw = ow * s.stride_width - s.pad_width + kw;
                if (ih < 0 || ih >= s.in_height || iw < 0 || iw >= s.in_width) continue;
                sum += w[((f * s.in_channels + c) * s.kernel_height + kh) * s.kernel_width + kw] *
                       x[((n * s.in_channels + c) * s.in_height + ih) * s.in_width + iw];
              }
          y[((n * s.out_channels + f) * OH + oh) * OW + ow] = sum;
        }
  return y;
}

// Max over each window, padding excluded.
inline std::vector<double> ReferenceMaxPool2d(const Pool2dShape& s, const std::vector<double>& x) {
  const int64_t OH = s.out_height(), OW = s.out_width();
  std::vector<double> y(s.batch * s.channels * OH * OW);
  for (int64_t p = 0; p < s.batch * s.channels; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t kh = 0; kh < s.window_height; ++kh)
          for (int64_t kw = 0; kw < s.window_width; ++kw) {
            const int64_t ih = oh * s.stride_height - s.pad_height + kh;
            const int64_t iw = ow * s.stride_width - s.pad_width + kw;
            if (ih < 0 || ih >= s.in_height || iw < 0 || iw >= s.in_width) continue;
            const double v = x[(p * s.in_height + ih) * s.in_width + iw];
            if (v > best) best = v;
          }
        y[(p * OH + oh) * OW + ow] = best;
      }
  return y;
}

// Uniform [-1, 1) values, exactly representable in float32 (so float and double inputs agree).
inline std::vector<double> RandomValues(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<double> v(n);
  for (double& d : v) d = u(rng);
  return v;
}

inline std::vector<float> ToFloat(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

inline double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_CONV_REFERENCE_H_
