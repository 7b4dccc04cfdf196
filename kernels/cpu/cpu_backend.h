// The CPU backend: GEMM through OpenBLAS limited to one thread per call (one worker per core, so
// BLAS must not add threads of its own), element-wise ops as plain loops over the functors in
// kernels/functors.h. Convolutions go through oneDNN by default (kernels/cpu/onednn_conv2d.h, its
// primitives built per shape on first use and pinned to the calling thread), or im2col + GEMM per
// example (kernels/cpu/im2col_conv2d.h, CpuConvKernel::kIm2col); max pooling is direct loops
// (kernels/cpu/direct_max_pool2d.h). Conv state (primitives, im2col columns) is this backend's,
// i.e. its worker's.
// Every op runs to completion before it returns; memory is ordinary 64-byte-aligned host memory.
// Thread-safety: one CpuBackend per worker thread; distinct objects are independent.
#ifndef HOGWILD_KERNELS_CPU_CPU_BACKEND_H_
#define HOGWILD_KERNELS_CPU_CPU_BACKEND_H_

#include <memory>
#include <vector>

#include "kernels/backend.h"

namespace hogwild {

namespace cpu {
class OnednnConv2d;
}  // namespace cpu

// Which kernels the CPU backend's convolutions use.
enum class CpuConvKernel {
  kOnednn,  // oneDNN's direct convolution over the whole batch (default; faster, see
            // benchmarks/results/2026-12-02-cnn.md "CNN step: oneDNN vs im2col")
  kIm2col,  // im2col + one OpenBLAS sgemm per example
};

class CpuBackend final : public Backend {
 public:
  // Sets OpenBLAS to one thread per call, process-wide (once). `conv` picks the convolution
  // kernels; oneDNN's engine is created on the first convolution (its failure is that call's
  // status).
  explicit CpuBackend(CpuConvKernel conv = CpuConvKernel::kOnednn);
  ~CpuBackend() override;

  std::string name() const override { return "cpu"; }

  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;
  absl::Status CopyToDevice(void* dst, const void* src_host, size_t bytes) override;
  absl::Status CopyToHost(void* dst_host, const void* src, size_t bytes) override;
  absl::Status CopyOnDevice(void* dst, const void* src, size_t bytes) override;
  absl::Status Fill(int64_t count, float value, float* x) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }

  absl::Status Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                    float alpha, const float* a, const float* b, float beta, float* c) override;
  absl::Status AddBias(int64_t rows, int64_t cols, const float* bias, float* x) override;
  absl::Status SumRows(int64_t rows, int64_t cols, const float* dy, float* db) override;
  absl::Status Relu(int64_t n, const float* x, float* y) override;
  absl::Status ReluGrad(int64_t n, const float* y, const float* dy, float* dx) override;
  absl::Status SoftmaxCrossEntropy(int64_t rows, int64_t classes, const float* logits,
                                   const int32_t* labels, float scale, float* dlogits,
                                   float* loss_sum) override;
  absl::Status Accumulate(int64_t n, const float* x, float* y) override;
  absl::Status SgdUpdate(int64_t n, float lr, float momentum, float weight_decay, const float* grad,
                         float* velocity, float* params) override;

  absl::Status Conv2dForward(const Conv2dShape& shape, const float* x, const float* w,
                             const float* bias, float* y) override;
  absl::Status Conv2dBackwardData(const Conv2dShape& shape, const float* w, const float* dy,
                                  float* dx) override;
  absl::Status Conv2dBackwardFilter(const Conv2dShape& shape, const float* x, const float* dy,
                                    float* dw, float* db) override;
  absl::Status Conv2dBackward(const Conv2dShape& shape, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* db) override;
  absl::Status MaxPool2dForward(const Pool2dShape& shape, const float* x, float* y) override;
  absl::Status MaxPool2dBackward(const Pool2dShape& shape, const float* x, const float* y,
                                 const float* dy, float* dx) override;
  absl::Status BatchNormForwardTraining(const BatchNormShape& shape, const float* x,
                                        const float* gamma, const float* beta, float* y) override;
  absl::Status BatchNormForwardInference(const BatchNormShape& shape, const float* x,
                                         const float* gamma, const float* beta, const float* mean,
                                         const float* var, float* y) override;
  absl::Status BatchNormBackward(const BatchNormShape& shape, const float* x, const float* dy,
                                 const float* gamma, float* dx, float* dgamma,
                                 float* dbeta) override;
  absl::Status BatchNormStatistics(const BatchNormShape& shape, const float* x, float weight,
                                   float* mean, float* var) override;

 private:
  // The oneDNN kernels, created on first use; null with kIm2col.
  absl::StatusOr<cpu::OnednnConv2d*> Onednn();

  CpuConvKernel conv_kernel_;
  std::unique_ptr<cpu::OnednnConv2d> onednn_;
  // im2col columns of one example, [C*KH*KW, OH*OW] of the largest conv seen.
  std::vector<float> conv_scratch_;
};

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_CPU_CPU_BACKEND_H_
