// CPU 2-D convolution on NCHW float32 host memory: im2col + one OpenBLAS sgemm per example
// (the scheme of Caffe and PyTorch's slow_conv2d; Chellapilla et al., "High Performance
// Convolutional Neural Networks for Document Processing", 2006). CpuBackend's conv ops call these.
//
// Per example n, with the column matrix col = im2col(x_n): [C * KH * KW, OH * OW],
//   forward:        y_n [F, OH*OW]        = w [F, C*KH*KW] * col + b
//   filter grad:    dw  [F, C*KH*KW]     += dy_n [F, OH*OW] * col^T
//   input grad:     dx_n = col2im(w^T [C*KH*KW, F] * dy_n)
// A 1x1 kernel with stride 1 and no padding uses x_n as its own column matrix.
//
// Examples run one after another on the calling thread: the trainer already runs one worker per
// core, so splitting the batch across threads would only oversubscribe the cores.
//
// Shapes and glossary: kernels/conv_shapes.h; `shape` must pass ValidateConv2dShape.
// `scratch` is the caller's reusable column buffer, grown to C*KH*KW*OH*OW floats when smaller.
// Thread-safety: concurrent calls need distinct scratch vectors (OpenBLAS pthread build).
#ifndef HOGWILD_KERNELS_CPU_IM2COL_CONV2D_H_
#define HOGWILD_KERNELS_CPU_IM2COL_CONV2D_H_

#include <vector>

#include "kernels/conv_shapes.h"

namespace hogwild::cpu {

// col [C*KH*KW, OH*OW] = the receptive fields of one example x_n [C, H, W], zeros for padding.
void Im2Col(const Conv2dShape& s, const float* x_n, float* col);

// dx_n [C, H, W] = the sum of col [C*KH*KW, OH*OW] back over the receptive fields (the adjoint
// of Im2Col); overwrites dx_n.
void Col2Im(const Conv2dShape& s, const float* col, float* dx_n);

// The three passes; contracts as Backend::Conv2dForward / BackwardData / BackwardFilter.
void Conv2dForward(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                   float* y, std::vector<float>& scratch);
void Conv2dBackwardData(const Conv2dShape& s, const float* w, const float* dy, float* dx,
                        std::vector<float>& scratch);
void Conv2dBackwardFilter(const Conv2dShape& s, const float* x, const float* dy, float* dw,
                          float* db, std::vector<float>& scratch);

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_IM2COL_CONV2D_H_
