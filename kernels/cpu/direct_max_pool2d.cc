#include "kernels/cpu/direct_max_pool2d.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The 2x2, stride-2, unpadded pool (LeNet's, VGG's, ResNet's): every input element lies in at
// most one window, so the backward pass writes each element of dx once instead of zeroing the
// plane and adding, and four windows are done at a time in SSE2 lanes. The same comparisons as
// ForEachWindowMax, in the same order: the maximum starts at -inf and moves on a strict `>`, so
// ties go to the first maximum in row-major window order and NaNs are never the maximum; a
// window whose elements are all NaN (or -inf) routes its gradient to its first element.
bool IsPairPool(const Pool2dShape& s) {
  return s.window_height == 2 && s.window_width == 2 && s.stride_height == 2 &&
         s.stride_width == 2 && s.pad_height == 0 && s.pad_width == 0;
}

// One window's four elements in row-major order (a, b: the upper row; c, d: the lower one): its
// maximum and which of b, c, d last raised it (the maximum is a's when none did).
struct PairWindow {
  float best;
  bool raised_b, raised_c, raised_d;
};

PairWindow ScalarPairWindow(float a, float b, float c, float d) {
  float best = -std::numeric_limits<float>::infinity();
  if (a > best) best = a;
  const bool rb = b > best;
  if (rb) best = b;
  const bool rc = c > best;
  if (rc) best = c;
  const bool rd = d > best;
  if (rd) best = d;
  return {best, rb, rc, rd};
}

#if defined(__SSE2__)
inline __m128 Select(__m128 mask, __m128 yes, __m128 no) {
  return _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no));
}

// Four adjacent windows: the even and odd columns of 8 floats of each row.
struct PairWindow4 {
  __m128 best, raised_b, raised_c, raised_d;
};

inline PairWindow4 VectorPairWindow(const float* upper, const float* lower) {
  const __m128 u0 = _mm_loadu_ps(upper), u1 = _mm_loadu_ps(upper + 4);
  const __m128 l0 = _mm_loadu_ps(lower), l1 = _mm_loadu_ps(lower + 4);
  const __m128 a = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(2, 0, 2, 0));
  const __m128 b = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 1, 3, 1));
  const __m128 c = _mm_shuffle_ps(l0, l1, _MM_SHUFFLE(2, 0, 2, 0));
  const __m128 d = _mm_shuffle_ps(l0, l1, _MM_SHUFFLE(3, 1, 3, 1));
  __m128 best = _mm_set1_ps(-std::numeric_limits<float>::infinity());
  best = Select(_mm_cmpgt_ps(a, best), a, best);
  const __m128 rb = _mm_cmpgt_ps(b, best);
  best = Select(rb, b, best);
  const __m128 rc = _mm_cmpgt_ps(c, best);
  best = Select(rc, c, best);
  const __m128 rd = _mm_cmpgt_ps(d, best);
  best = Select(rd, d, best);
  return {best, rb, rc, rd};
}
#endif

void PairPoolForwardPlane(const Pool2dShape& s, const float* x, float* y) {
  const int64_t ow_n = s.out_width(), w = s.in_width;
  for (int64_t oh = 0; oh < s.out_height(); ++oh) {
    const float* upper = x + 2 * oh * w;
    const float* lower = upper + w;
    float* y_row = y + oh * ow_n;
    int64_t ow = 0;
#if defined(__SSE2__)
    for (; ow + 4 <= ow_n; ow += 4) {
      _mm_storeu_ps(y_row + ow, VectorPairWindow(upper + 2 * ow, lower + 2 * ow).best);
    }
#endif
    for (; ow < ow_n; ++ow) {
      const int64_t i = 2 * ow;
      y_row[ow] = ScalarPairWindow(upper[i], upper[i + 1], lower[i], lower[i + 1]).best;
    }
  }
}

void PairPoolBackwardPlane(const Pool2dShape& s, const float* x, const float* dy, float* dx) {
  const int64_t oh_n = s.out_height(), ow_n = s.out_width(), w = s.in_width;
  for (int64_t oh = 0; oh < oh_n; ++oh) {
    const float* upper = x + 2 * oh * w;
    const float* lower = upper + w;
    float* dx_upper = dx + 2 * oh * w;
    float* dx_lower = dx_upper + w;
    const float* dy_row = dy + oh * ow_n;
    int64_t ow = 0;
#if defined(__SSE2__)
    for (; ow + 4 <= ow_n; ow += 4) {
      const PairWindow4 m = VectorPairWindow(upper + 2 * ow, lower + 2 * ow);
      const __m128 g = _mm_loadu_ps(dy_row + ow);
      // The element that last raised the maximum takes the gradient; a's when none did.
      const __m128 da = _mm_andnot_ps(_mm_or_ps(m.raised_b, _mm_or_ps(m.raised_c, m.raised_d)), g);
      const __m128 db = _mm_and_ps(_mm_andnot_ps(_mm_or_ps(m.raised_c, m.raised_d), m.raised_b), g);
      const __m128 dc = _mm_and_ps(_mm_andnot_ps(m.raised_d, m.raised_c), g);
      const __m128 dd = _mm_and_ps(m.raised_d, g);
      _mm_storeu_ps(dx_upper + 2 * ow, _mm_unpacklo_ps(da, db));
      _mm_storeu_ps(dx_upper + 2 * ow + 4, _mm_unpackhi_ps(da, db));
      _mm_storeu_ps(dx_lower + 2 * ow, _mm_unpacklo_ps(dc, dd));
      _mm_storeu_ps(dx_lower + 2 * ow + 4, _mm_unpackhi_ps(dc, dd));
    }
#endif
    for (; ow < ow_n; ++ow) {
      const int64_t i = 2 * ow;
      const PairWindow m = ScalarPairWindow(upper[i], upper[i + 1], lower[i], lower[i + 1]);
      const float g = dy_row[ow];
      dx_upper[i] = m.raised_b || m.raised_c || m.raised_d ? 0.0f : g;
      dx_upper[i + 1] = m.raised_b && !m.raised_c && !m.raised_d ? g : 0.0f;
      dx_lower[i] = m.raised_c && !m.raised_d ? g : 0.0f;
      dx_lower[i + 1] = m.raised_d ? g : 0.0f;
    }
    // An odd width's last column is in no window.
    if (w % 2 != 0) dx_upper[w - 1] = dx_lower[w - 1] = 0.0f;
  }
  // An odd height's last row is in no window.
  if (s.in_height % 2 != 0) std::fill(dx + (s.in_height - 1) * w, dx + s.in_height * w, 0.0f);
}

}  // namespace

void MaxPool2dForward(const Pool2dShape& s, const float* x, float* y) {
  const int64_t in_plane = s.in_height * s.in_width;
  const int64_t out_plane = s.out_height() * s.out_width();
  if (IsPairPool(s)) {
    for (int64_t p = 0; p < s.batch * s.channels; ++p) {
      PairPoolForwardPlane(s, x + p * in_plane, y + p * out_plane);
    }
    return;
  }
  for (int64_t p = 0; p < s.batch * s.channels; ++p) {
    float* y_p = y + p * out_plane;
    ForEachWindowMax(s, x + p * in_plane,
                     [y_p](int64_t out, int64_t /*at*/, float best) { y_p[out] = best; });
  }
}

void MaxPool2dBackward(const Pool2dShape& s, const float* x, const float* dy, float* dx) {
  const int64_t in_plane = s.in_height * s.in_width;
  const int64_t out_plane = s.out_height() * s.out_width();
  if (IsPairPool(s)) {
    for (int64_t p = 0; p < s.batch * s.channels; ++p) {
      PairPoolBackwardPlane(s, x + p * in_plane, dy + p * out_plane, dx + p * in_plane);
    }
    return;
  }
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
