#include "kernels/cpu/direct_max_pool2d.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace hogwild::cpu {
namespace {

// Visits every output element of one [H, W] plane with the offset (ih * W + iw) of its window's
// first maximum and the maximum itself. A window always holds a real element (pad <= window / 2).
template <typename Fn>
void ForEachWindowMax(const Pool2dShape& s, const float* plane, Fn fn) {
  const int64_t oh_n = s.out_height(), ow_n = s.out_width();
  for (int64_t oh = 0; oh < oh_n; ++oh) {
    const int64_t h0 = oh * s.stride_height - s.pad_height;
    const int64_t h_lo = std::max<int64_t>(h0, 0);
    const int64_t h_hi = std::min(h0 + s.window_height, s.in_height);
    for (int64_t ow = 0; ow < ow_n; ++ow) {
      const int64_t w0 = ow * s.stride_width - s.pad_width;
      const int64_t w_lo = std::max<int64_t>(w0, 0);
      const int64_t w_hi = std::min(w0 + s.window_width, s.in_width);
      float best = -std::numeric_limits<float>::infinity();
      int64_t best_at = h_lo * s.in_width + w_lo;
      for (int64_t ih = h_lo; ih < h_hi; ++ih) {
        for (int64_t iw = w_lo; iw < w_hi; ++iw) {
          const float v = plane[ih * s.in_width + iw];
          if (v > best) best = v, best_at = ih * s.in_width + iw;  // strict: first max wins
        }
      }
      fn(oh * ow_n + ow, best_at, best);
    }
  }
}

}  // namespace

void MaxPool2dForward(const Pool2dShape& s, const float* x, float* y) {
  const int64_t in_plane = s.in_height * s.in_width;
  const int64_t out_plane = s.out_height() * s.out_width();
  for (int64_t p = 0; p < s.batch * s.channels; ++p) {
    float* y_p = y + p * out_plane;
    ForEachWindowMax(s, x + p * in_plane,
                     [y_p](int64_t out, int64_t /*at*/, float best) { y_p[out] = best; });
  }
}

void MaxPool2dBackward(const Pool2dShape& s, const float* x, const float* dy, float* dx) {
  const int64_t in_plane = s.in_height * s.in_width;
  const int64_t out_plane = s.out_height() * s.out_width();
  for (int64_t p = 0; p < s.batch * s.channels; ++p) {
    const float* dy_p = dy + p * out_plane;
    float* dx_p = dx + p * in_plane;
    // Zeroed plane by plane, not all of dx up front: the plane is still in cache for the adds.
    std::fill(dx_p, dx_p + in_plane, 0.0f);
    ForEachWindowMax(s, x + p * in_plane, [dy_p, dx_p](int64_t out, int64_t at, float /*best*/) {
      dx_p[at] += dy_p[out];
    });
  }
}

}  // namespace hogwild::cpu
