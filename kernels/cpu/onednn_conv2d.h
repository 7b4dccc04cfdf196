// CPU 2-D convolution on NCHW float32 host memory through oneDNN (Debian's libdnnl 2.6, the
// library behind PyTorch's CPU convolutions): its JIT direct-convolution kernels over the whole
// batch, in the channel-blocked layouts it picks (nChw8c / OIhw8i8o on AVX2), with reorders from
// and to the caller's NCHW / FCHW arrays on every call. CpuBackend's conv ops call these by
// default (kernels/cpu/cpu_backend.h); contracts as Backend::Conv2dForward / BackwardData /
// BackwardFilter, shapes in kernels/conv_shapes.h (`shape` must pass ValidateConv2dShape).
//
// One pass is not oneDNN's: the filter gradient of a layer whose input oneDNN reads in NCHW (a
// first layer, C < 8: no AVX2 JIT kernel for it in oneDNN 2.6) runs im2col + OpenBLAS
// (im2col_conv2d.h), which is faster there.
//
// Primitives (and their reorders, blocked buffers and scratchpad) are built on the first call of
// each shape, batch included, and kept: later calls of that shape allocate nothing.
//
// Threads: Debian builds oneDNN on OpenMP (DNNL_CPU_RUNTIME = OMP). Every call first sets the
// calling thread's OpenMP thread count to 1 (omp_set_num_threads, a per-thread setting in
// libgomp), so oneDNN runs its kernels inline on the caller and starts no OpenMP team: the
// trainer already runs one worker per core. tests/onednn_conv2d_test.cc checks that no thread is
// started.
//
// Errors: a dnnl::error (unsupported shape, out of memory) becomes a status naming the oneDNN
// call, this file:line and its dnnl_status_t (out of memory: kResourceExhausted, else kInternal).
// Thread-safety: one object per worker thread; distinct objects may run concurrently (each has
// its own primitives' scratchpad; oneDNN's primitive cache is thread-safe).
#ifndef HOGWILD_KERNELS_CPU_ONEDNN_CONV2D_H_
#define HOGWILD_KERNELS_CPU_ONEDNN_CONV2D_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/conv_shapes.h"

namespace hogwild::cpu {

class OnednnConv2d {
 public:
  // Creates the CPU engine and stream. Errors: kInternal when oneDNN has no CPU engine.
  static absl::StatusOr<std::unique_ptr<OnednnConv2d>> Create();
  ~OnednnConv2d();

  // y [N, F, OH, OW] = conv(x [N, C, H, W], w [F, C, KH, KW]) + bias [F] (bias may be null).
  absl::Status Forward(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                       float* y);
  // dx [N, C, H, W] = conv_transpose(dy [N, F, OH, OW], w), overwriting dx.
  absl::Status BackwardData(const Conv2dShape& s, const float* w, const float* dy, float* dx);
  // dw [F, C, KH, KW] and db [F] (may be null) summed over the batch, overwriting both.
  absl::Status BackwardFilter(const Conv2dShape& s, const float* x, const float* dy, float* dw,
                              float* db);
  // BackwardFilter, then BackwardData when dx is not null, converting dy to the primitives'
  // blocked layout once where both passes read it in the same one (conv2's dy: one reorder of
  // 3.2 MB saved per step at batch 64).
  absl::Status Backward(const Conv2dShape& s, const float* x, const float* w, const float* dy,
                        float* dx, float* dw, float* db);

 private:
  struct Impl;
  struct Plan;
  explicit OnednnConv2d(std::unique_ptr<Impl> impl);
  // The primitives of `s`, built on first use (throws dnnl::error; callers convert).
  Plan& GetPlan(const Conv2dShape& s);

  std::unique_ptr<Impl> impl_;
};

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_ONEDNN_CONV2D_H_
