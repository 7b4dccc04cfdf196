#include "kernels/cpu/im2col_conv2d.h"

#include <cblas.h>

#include <algorithm>

namespace hogwild::cpu {
namespace {

// A 1x1, stride-1, unpadded convolution is a plain GEMM on x_n: no column matrix needed.
bool IsPointwise(const Conv2dShape& s) {
  return s.kernel_height == 1 && s.kernel_width == 1 && s.stride_height == 1 &&
         s.stride_width == 1 && s.pad_height == 0 && s.pad_width == 0;
}

int64_t ColRows(const Conv2dShape& s) { return s.in_channels * s.kernel_height * s.kernel_width; }
int64_t ColCols(const Conv2dShape& s) { return s.out_height() * s.out_width(); }

float* ColumnBuffer(const Conv2dShape& s, std::vector<float>& scratch) {
  const size_t need = static_cast<size_t>(ColRows(s) * ColCols(s));
  if (scratch.size() < need) scratch.resize(need);
  return scratch.data();
}

// The output columns ow whose input column iw = ow * stride - pad + kw lies in [0, W): the
// half-open range [lo, hi). Computed once per (kw) so the inner loops carry no bounds checks.
void ValidRange(int64_t out, int64_t in, int64_t stride, int64_t pad, int64_t k, int64_t* lo,
                int64_t* hi) {
  // ow * stride >= pad - k  and  ow * stride <= in - 1 + pad - k.
  const int64_t first = pad - k;
  *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  const int64_t last = in - 1 + pad - k;
  *hi = last < 0 ? 0 : std::min(out, last / stride + 1);
  if (*lo > *hi) *lo = *hi;
}

}  // namespace

void Im2Col(const Conv2dShape& s, const float* x_n, float* col) {
  const int64_t oh_n = s.out_height(), ow_n = s.out_width();
  for (int64_t c = 0; c < s.in_channels; ++c) {
    const float* plane = x_n + c * s.in_height * s.in_width;
    for (int64_t kh = 0; kh < s.kernel_height; ++kh) {
      for (int64_t kw = 0; kw < s.kernel_width; ++kw) {
        float* row = col + ((c * s.kernel_height + kh) * s.kernel_width + kw) * oh_n * ow_n;
        int64_t lo, hi;
        ValidRange(ow_n, s.in_width, s.stride_width, s.pad_width, kw, &lo, &hi);
        for (int64_t oh = 0; oh < oh_n; ++oh) {
          float* out = row + oh * ow_n;
          const int64_t ih = oh * s.stride_height - s.pad_height + kh;
          if (ih < 0 || ih >= s.in_height) {
            std::fill(out, out + ow_n, 0.0f);
            continue;
          }
          // Index arithmetic, not a pointer, since base may be negative (left padding).
          const int64_t base = ih * s.in_width - s.pad_width + kw;
          std::fill(out, out + lo, 0.0f);
          if (s.stride_width == 1) {
            // A loop, not memcpy: rows are short (14 floats in the cnn's second conv) and the
            // call overhead was a visible share of the step.
            for (int64_t ow = lo; ow < hi; ++ow) out[ow] = plane[base + ow];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) out[ow] = plane[base + ow * s.stride_width];
          }
          std::fill(out + hi, out + ow_n, 0.0f);
        }
      }
    }
  }
}

void Col2Im(const Conv2dShape& s, const float* col, float* dx_n) {
  const int64_t oh_n = s.out_height(), ow_n = s.out_width();
  std::fill(dx_n, dx_n + s.in_size(), 0.0f);
  for (int64_t c = 0; c < s.in_channels; ++c) {
    float* plane = dx_n + c * s.in_height * s.in_width;
    for (int64_t kh = 0; kh < s.kernel_height; ++kh) {
      for (int64_t kw = 0; kw < s.kernel_width; ++kw) {
        const float* row = col + ((c * s.kernel_height + kh) * s.kernel_width + kw) * oh_n * ow_n;
        int64_t lo, hi;
        ValidRange(ow_n, s.in_width, s.stride_width, s.pad_width, kw, &lo, &hi);
        for (int64_t oh = 0; oh < oh_n; ++oh) {
          const int64_t ih = oh * s.stride_height - s.pad_height + kh;
          if (ih < 0 || ih >= s.in_height) continue;
          // Padding positions received gradient in col but have no input element: dropped.
          const int64_t base = ih * s.in_width - s.pad_width + kw;
          const float* in = row + oh * ow_n;
          for (int64_t ow = lo; ow < hi; ++ow) plane[base + ow * s.stride_width] += in[ow];
        }
      }
    }
  }
}

void Conv2dForward(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                   float* y, std::vector<float>& scratch) {
  const int64_t rows = ColRows(s), cols = ColCols(s);
  const bool pointwise = IsPointwise(s);
  float* col = pointwise ? nullptr : ColumnBuffer(s, scratch);
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* x_n = x + n * s.in_size();
    float* y_n = y + n * s.out_size();  // [F, OH*OW]
    if (!pointwise) Im2Col(s, x_n, col);
    // Start from the bias (beta = 1) rather than adding it after: one pass over y fewer.
    for (int64_t f = 0; f < s.out_channels; ++f) {
      std::fill(y_n + f * cols, y_n + (f + 1) * cols, bias != nullptr ? bias[f] : 0.0f);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.out_channels),
                static_cast<int>(cols), static_cast<int>(rows), 1.0f, w, static_cast<int>(rows),
                pointwise ? x_n : col, static_cast<int>(cols), 1.0f, y_n, static_cast<int>(cols));
  }
}

void Conv2dBackwardData(const Conv2dShape& s, const float* w, const float* dy, float* dx,
                        std::vector<float>& scratch) {
  const int64_t rows = ColRows(s), cols = ColCols(s);
  const bool pointwise = IsPointwise(s);
  float* col = pointwise ? nullptr : ColumnBuffer(s, scratch);
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* dy_n = dy + n * s.out_size();
    float* dx_n = dx + n * s.in_size();
    // dcol [C*KH*KW, OH*OW] = w^T dy_n; written straight into dx_n when it is its own column.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(rows),
                static_cast<int>(cols), static_cast<int>(s.out_channels), 1.0f, w,
                static_cast<int>(rows), dy_n, static_cast<int>(cols), 0.0f,
                pointwise ? dx_n : col, static_cast<int>(cols));
    if (!pointwise) Col2Im(s, col, dx_n);
  }
}

void Conv2dBackwardFilter(const Conv2dShape& s, const float* x, const float* dy, float* dw,
                          float* db, std::vector<float>& scratch) {
  const int64_t rows = ColRows(s), cols = ColCols(s);
  const bool pointwise = IsPointwise(s);
  float* col = pointwise ? nullptr : ColumnBuffer(s, scratch);
  std::fill(dw, dw + s.filter_size(), 0.0f);
  if (db != nullptr) std::fill(db, db + s.out_channels, 0.0f);
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* x_n = x + n * s.in_size();
    const float* dy_n = dy + n * s.out_size();
    if (!pointwise) Im2Col(s, x_n, col);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.out_channels),
                static_cast<int>(rows), static_cast<int>(cols), 1.0f, dy_n,
                static_cast<int>(cols), pointwise ? x_n : col, static_cast<int>(cols), 1.0f, dw,
                static_cast<int>(rows));
    if (db != nullptr) {
      for (int64_t f = 0; f < s.out_channels; ++f) {
        const float* plane = dy_n + f * cols;
        float sum = 0.0f;
        for (int64_t i = 0; i < cols; ++i) sum += plane[i];
        db[f] += sum;
      }
    }
  }
}

}  // namespace hogwild::cpu
