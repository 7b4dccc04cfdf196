// CPU max pooling on NCHW float32 host memory: direct loops over each window. CpuBackend's
// pooling ops call these; contracts as Backend::MaxPool2dForward / MaxPool2dBackward, shapes in
// kernels/conv_shapes.h (`shape` must pass ValidatePool2dShape).
//
// The backward pass recomputes each window's maximum from x instead of keeping argmax indices
// from the forward pass: the model's layers share one scratch buffer between passes, and cuDNN's
// pooling backward takes x and y the same way. Ties go to the first maximum in row-major window
// order; NaNs are never the maximum (a window of NaNs routes its gradient to its first element).
// The 2x2, stride-2, unpadded pool, the CNNs' usual one, has its own path (four windows per SSE2
// instruction, each dx element written once) with the same comparisons in the same order.
// Thread-safety: pure functions of their arguments.
#ifndef HOGWILD_KERNELS_CPU_DIRECT_MAX_POOL2D_H_
#define HOGWILD_KERNELS_CPU_DIRECT_MAX_POOL2D_H_

#include "kernels/conv_shapes.h"

namespace hogwild::cpu {

void MaxPool2dForward(const Pool2dShape& s, const float* x, float* y);
void MaxPool2dBackward(const Pool2dShape& s, const float* x, const float* dy, float* dx);

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_DIRECT_MAX_POOL2D_H_
