// The compute primitives behind every layer, as one interface with a CPU implementation
// (kernels/cpu, OpenBLAS) and a CUDA implementation (kernels/cuda, cuBLAS, cuDNN and own kernels).
//
// Conventions for every op:
// - Tensors are dense, row-major float32 (labels int32) in the backend's memory: host memory for
//   the CPU backend, device memory of the backend's GPU for the CUDA backend. Shapes use the
//   glossary B batch, D input features, H hidden units, K classes, P parameters.
// - Ops are enqueued in order on the backend's stream; results are visible to later ops of the
//   same backend. Host code must call Synchronize() (or a CopyToHost, which synchronizes) before
//   reading results. The CPU backend runs every op to completion before returning.
// - Thread-safety: a Backend belongs to one worker thread. Distinct Backend objects may be used
//   concurrently from different threads.
// - Errors: a bad size returns kInvalidArgument; a failed device call returns a status naming the
//   call, the file:line and the device; allocation failure returns kResourceExhausted.
#ifndef HOGWILD_KERNELS_BACKEND_H_
#define HOGWILD_KERNELS_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/batch_norm_shape.h"
#include "kernels/conv_shapes.h"

namespace hogwild {

enum class Transpose { kNo, kYes };

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda:<device>".
  virtual std::string name() const = 0;

  // ---- Memory ----------------------------------------------------------------------------------
  // Allocates `bytes` of backend memory (never managed memory on a GPU). Free() releases it;
  // Free(nullptr) is a no-op. Errors: kResourceExhausted with the bytes asked and free.
  virtual absl::StatusOr<void*> Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  // Copies between host memory and backend memory. CopyToHost waits for all enqueued work.
  virtual absl::Status CopyToDevice(void* dst, const void* src_host, size_t bytes) = 0;
  virtual absl::Status CopyToHost(void* dst_host, const void* src, size_t bytes) = 0;
  // Copies within backend memory.
  virtual absl::Status CopyOnDevice(void* dst, const void* src, size_t bytes) = 0;
  // Sets `count` floats to `value`.
  virtual absl::Status Fill(int64_t count, float value, float* x) = 0;
  // Waits until every enqueued op has finished; returns the first asynchronous error.
  virtual absl::Status Synchronize() = 0;

  // ---- Dense algebra ---------------------------------------------------------------------------
  // C = alpha * op(A) * op(B) + beta * C, BLAS sgemm on row-major matrices.
  //   op(A): [m, k] (A stored [m, k], or [k, m] when trans_a == kYes)
  //   op(B): [k, n] (B stored [k, n], or [n, k] when trans_b == kYes)
  //   C:     [m, n]; with beta == 0 C is write-only (NaNs in it are not propagated).
  // m, n or k == 0 is allowed (C is scaled by beta, or untouched when k == 0 and beta == 1).
  virtual absl::Status Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, const float* b, float beta, float* c) = 0;

  // x[r, c] += bias[c].   x: [rows, cols], bias: [cols].
  virtual absl::Status AddBias(int64_t rows, int64_t cols, const float* bias, float* x) = 0;

  // db[c] = sum_r dy[r, c] (the bias gradient; a column sum).   dy: [rows, cols], db: [cols].
  virtual absl::Status SumRows(int64_t rows, int64_t cols, const float* dy, float* db) = 0;

  // y = max(x, 0) element-wise; y may alias x.   x, y: [n].
  virtual absl::Status Relu(int64_t n, const float* x, float* y) = 0;

  // dx = dy * (y > 0), the ReLU gradient from the forward *output* y; dx may alias dy.
  virtual absl::Status ReluGrad(int64_t n, const float* y, const float* dy, float* dx) = 0;

  // Softmax cross-entropy with its gradient (kernels/functors.h SoftmaxCrossEntropyRow per row).
  //   logits:   [rows, classes] float32
  //   labels:   [rows] int32 in [0, classes) (checked by the dataset reader, not here)
  //   scale:    gradient scale, typically 1 / (global batch size)
  //   dlogits:  [rows, classes] out, scale * (softmax - onehot)
  //   loss_sum: [1] out, the sum over rows of the unscaled per-row loss
  virtual absl::Status SoftmaxCrossEntropy(int64_t rows, int64_t classes, const float* logits,
                                           const int32_t* labels, float scale, float* dlogits,
                                           float* loss_sum) = 0;

  // y += x element-wise (the gradient reduction of the synchronous mode).   x, y: [n].
  virtual absl::Status Accumulate(int64_t n, const float* x, float* y) = 0;

  // One SGD step (kernels/functors.h SgdMomentumFn) on n elements. `velocity` may be null when
  // momentum == 0.   params, grad, velocity: [n].
  virtual absl::Status SgdUpdate(int64_t n, float lr, float momentum, float weight_decay,
                                 const float* grad, float* velocity, float* params) = 0;

  // ---- Convolution and pooling (NCHW, shapes and glossary in kernels/conv_shapes.h) -----------
  // High-level ops rather than im2col pieces so that the CUDA backend maps each to one cuDNN call
  // (its algorithm chosen once per shape) and the CPU backend to im2col + GEMM. Scratch memory
  // (im2col columns, cuDNN workspace) is owned by the backend, i.e. by its worker, and grows to
  // the largest shape seen: the first call with a new, larger shape allocates, later ones do not.
  // The shape is checked with ValidateConv2dShape/ValidatePool2dShape (kInvalidArgument);
  // batch == 0 is allowed. Outputs must not overlap inputs.
  //
  // The in-tree backends implement all five (and Conv2dBackward, which has a working default); the
  // defaults return kUnimplemented naming the backend and the op, so a backend without convolutions
  // (a test double, say) still compiles.

  // y = conv(x, w) + bias (bias may be null: no bias).
  //   x: [N, C, H, W], w: [F, C, KH, KW], bias: [F], y: [N, F, OH, OW] (write-only).
  virtual absl::Status Conv2dForward(const Conv2dShape& shape, const float* x, const float* w,
                                     const float* bias, float* y);

  // The input gradient dx = conv_transpose(dy, w), overwriting dx.
  //   w: [F, C, KH, KW], dy: [N, F, OH, OW], dx: [N, C, H, W].
  virtual absl::Status Conv2dBackwardData(const Conv2dShape& shape, const float* w, const float* dy,
                                          float* dx);

  // The filter and bias gradients summed over the batch, overwriting dw and db (db may be null);
  // with batch == 0 both become zeros.
  //   x: [N, C, H, W], dy: [N, F, OH, OW], dw: [F, C, KH, KW], db: [F].
  virtual absl::Status Conv2dBackwardFilter(const Conv2dShape& shape, const float* x,
                                            const float* dy, float* dw, float* db);

  // Both gradients of one dy, as a layer's backward pass needs them: Conv2dBackwardFilter, then
  // Conv2dBackwardData when dx is not null, with their contracts. A backend may share work
  // between the two (the CPU backend's oneDNN path converts dy to its blocked layout once); the
  // default calls the two ops.
  virtual absl::Status Conv2dBackward(const Conv2dShape& shape, const float* x, const float* w,
                                      const float* dy, float* dx, float* dw, float* db);

  // Max pooling.   x: [N, C, H, W], y: [N, C, OH, OW] (write-only).
  virtual absl::Status MaxPool2dForward(const Pool2dShape& shape, const float* x, float* y);

  // dx = the max-pooling gradient: each dy element is added to the input element that was its
  // window's maximum (overlapping windows add up), every other dx element is 0. The maximum is
  // recomputed from x (y is the forward output, for backends that use it), so no state is kept
  // between the passes. On ties the CPU backend picks the first maximum in row-major window order;
  // cuDNN may pick another one.
  //   x: [N, C, H, W], y, dy: [N, C, OH, OW], dx: [N, C, H, W] (write-only).
  virtual absl::Status MaxPool2dBackward(const Pool2dShape& shape, const float* x, const float* y,
                                         const float* dy, float* dx);

  // ---- Batch normalization (Ioffe & Szegedy 2015; PyTorch's nn.BatchNorm2d/1d conventions) ----
  // Over each channel c of x [N, C, S] (kernels/batch_norm_shape.h): mean_c, the biased variance
  // var_c (divided by N * S) and y = gamma_c * (x - mean_c) / sqrt(var_c + eps) + beta_c.
  // gamma, beta, mean, var: [C]. Shapes are checked with ValidateBatchNormShape
  // (kInvalidArgument); batch == 0 is allowed (nothing to normalize; gradients become zeros).
  // The defaults return kUnimplemented, like the convolutions'. No state is kept between calls:
  // the backward pass recomputes the batch's statistics from x.

  // Training: normalizes with the batch's own mean and biased variance.   y: [N, C, S]
  // (write-only, may not alias x).
  virtual absl::Status BatchNormForwardTraining(const BatchNormShape& shape, const float* x,
                                                const float* gamma, const float* beta, float* y);

  // Inference: normalizes with the given (moving) mean and variance.   y: [N, C, S] (write-only).
  virtual absl::Status BatchNormForwardInference(const BatchNormShape& shape, const float* x,
                                                 const float* gamma, const float* beta,
                                                 const float* mean, const float* var, float* y);

  // The gradients of the training forward: dgamma, dbeta ([C], overwritten) and, when dx is not
  // null, dx ([N, C, S], overwritten; may not alias dy or x).   dy: [N, C, S].
  virtual absl::Status BatchNormBackward(const BatchNormShape& shape, const float* x,
                                         const float* dy, const float* gamma, float* dx,
                                         float* dgamma, float* dbeta);

  // The batch's statistics for the moving averages, times `weight`: mean[c] = weight * mean_c and
  // var[c] = weight * the unbiased variance (divided by N * S - 1; by 1 when N * S == 1), as
  // PyTorch's running_var uses. With batch == 0 both become zeros.   mean, var: [C] out.
  virtual absl::Status BatchNormStatistics(const BatchNormShape& shape, const float* x,
                                           float weight, float* mean, float* var);
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_BACKEND_H_
