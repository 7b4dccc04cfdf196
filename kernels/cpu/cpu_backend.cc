#include "kernels/cpu/cpu_backend.h"

#include <cblas.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "absl/strings/str_format.h"
#include "kernels/cpu/batch_norm.h"
#include "kernels/cpu/direct_max_pool2d.h"
#include "kernels/cpu/im2col_conv2d.h"
#include "kernels/cpu/onednn_conv2d.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"

namespace hogwild {
namespace {

// 64 bytes: a cache line, and the widest vector load (AVX-512) OpenBLAS may use.
constexpr size_t kAlignment = 64;

absl::Status CheckSizes(const char* op, int64_t a, int64_t b = 0, int64_t c = 0) {
  if (a < 0 || b < 0 || c < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: negative size (%d, %d, %d)", op, a, b, c));
  }
  // cblas takes int (blasint) sizes.
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (a > kMax || b > kMax || c > kMax) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: size over the BLAS limit %d: (%d, %d, %d)", op, kMax, a, b, c));
  }
  return absl::OkStatus();
}

}  // namespace

CpuBackend::CpuBackend(CpuConvKernel conv) : conv_kernel_(conv) {
  // One GEMM thread per call: the trainer already runs one worker per core, and OpenBLAS's own
  // threads would oversubscribe them. Process-wide setting, done once.
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

CpuBackend::~CpuBackend() = default;

absl::StatusOr<cpu::OnednnConv2d*> CpuBackend::Onednn() {
  if (onednn_ == nullptr) {
    auto created = cpu::OnednnConv2d::Create();
    if (!created.ok()) return created.status();
    onednn_ = *std::move(created);
  }
  return onednn_.get();
}

absl::StatusOr<void*> CpuBackend::Allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* ptr = std::aligned_alloc(kAlignment, rounded);
  if (ptr == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cpu: could not allocate %d bytes of host memory", bytes));
  }
  return ptr;
}

void CpuBackend::Free(void* ptr) { std::free(ptr); }

absl::Status CpuBackend::CopyToDevice(void* dst, const void* src_host, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src_host, bytes);
  return absl::OkStatus();
}

absl::Status CpuBackend::CopyToHost(void* dst_host, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst_host, src, bytes);
  return absl::OkStatus();
}

absl::Status CpuBackend::CopyOnDevice(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memmove(dst, src, bytes);
  return absl::OkStatus();
}

absl::Status CpuBackend::Fill(int64_t count, float value, float* x) {
  for (int64_t i = 0; i < count; ++i) x[i] = value;
  return absl::OkStatus();
}

absl::Status CpuBackend::Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                              float alpha, const float* a, const float* b, float beta, float* c) {
  if (auto s = CheckSizes("Gemm", m, n, k); !s.ok()) return s;
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    // BLAS leaves C alone for k == 0 only when beta == 1; make beta == 0 write zeros (the
    // contract says C is write-only then) so an empty shard yields a zero gradient.
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return absl::OkStatus();
  }
  const bool ta = trans_a == Transpose::kYes;
  const bool tb = trans_b == Transpose::kYes;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(ta ? m : k), b, static_cast<int>(tb ? k : n), beta, c,
              static_cast<int>(n));
  return absl::OkStatus();
}

absl::Status CpuBackend::AddBias(int64_t rows, int64_t cols, const float* bias, float* x) {
  if (auto s = CheckSizes("AddBias", rows, cols); !s.ok()) return s;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    for (int64_t c = 0; c < cols; ++c) row[c] += bias[c];
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::SumRows(int64_t rows, int64_t cols, const float* dy, float* db) {
  if (auto s = CheckSizes("SumRows", rows, cols); !s.ok()) return s;
  for (int64_t c = 0; c < cols; ++c) db[c] = 0.0f;
  // Row by row (not column by column) so the inner loop is contiguous and vectorizes.
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = dy + r * cols;
    for (int64_t c = 0; c < cols; ++c) db[c] += row[c];
  }
  return absl::OkStatus();
}

// ReLU and its gradient in SSE (the x86-64 baseline), four lanes at a time. GCC compiles the
// functors' `x > 0 ? x : 0` to a compare and a branch, and on activations whose signs are
// random that branch mispredicted so often that the ReLU cost a fifth of the GEMMs. The vector
// forms give bitwise the functors' results: maxps(x, 0) returns its second operand when x is
// NaN or not greater than 0 (so NaN -> 0 and -0 -> +0, as x > 0 ? x : 0), and cmpgtps is false
// for NaN.
absl::Status CpuBackend::Relu(int64_t n, const float* x, float* y) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_max_ps(_mm_loadu_ps(x + i), zero));
#endif
  const ReluFn f;
  for (; i < n; ++i) y[i] = f(x[i]);
  return absl::OkStatus();
}

absl::Status CpuBackend::ReluGrad(int64_t n, const float* y, const float* dy, float* dx) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  for (; i + 4 <= n; i += 4) {
    const __m128 positive = _mm_cmpgt_ps(_mm_loadu_ps(y + i), zero);
    _mm_storeu_ps(dx + i, _mm_and_ps(positive, _mm_loadu_ps(dy + i)));
  }
#endif
  const ReluGradFn f;
  for (; i < n; ++i) dx[i] = f(y[i], dy[i]);
  return absl::OkStatus();
}

absl::Status CpuBackend::SoftmaxCrossEntropy(int64_t rows, int64_t classes, const float* logits,
                                             const int32_t* labels, float scale, float* dlogits,
                                             float* loss_sum) {
  if (auto s = CheckSizes("SoftmaxCrossEntropy", rows, classes); !s.ok()) return s;
  if (classes == 0) return absl::InvalidArgumentError("SoftmaxCrossEntropy: 0 classes");
  // The sum is accumulated in double: it is a scalar, and this keeps the reported loss
  // independent of the row count's rounding.
  double sum = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    sum += SoftmaxCrossEntropyRow(logits + r * classes, static_cast<int>(classes), labels[r], scale,
                                  dlogits + r * classes);
  }
  *loss_sum = static_cast<float>(sum);
  return absl::OkStatus();
}

absl::Status CpuBackend::Accumulate(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
  return absl::OkStatus();
}

absl::Status CpuBackend::SgdUpdate(int64_t n, float lr, float momentum, float weight_decay,
                                   const float* grad, float* velocity, float* params) {
  if (momentum != 0.0f && velocity == nullptr) {
    return absl::InvalidArgumentError("SgdUpdate: momentum != 0 needs a velocity buffer");
  }
  cpu::SgdUpdate(SgdMomentumFn{lr, momentum, weight_decay}, absl::MakeConstSpan(grad, n),
                 momentum != 0.0f ? absl::MakeSpan(velocity, n) : absl::Span<float>(),
                 absl::MakeSpan(params, n));
  return absl::OkStatus();
}

absl::Status CpuBackend::Conv2dForward(const Conv2dShape& shape, const float* x, const float* w,
                                       const float* bias, float* y) {
  if (auto s = ValidateConv2dShape(shape, "Conv2dForward"); !s.ok()) return s;
  if (conv_kernel_ == CpuConvKernel::kOnednn) {
    auto onednn = Onednn();
    if (!onednn.ok()) return onednn.status();
    return (*onednn)->Forward(shape, x, w, bias, y);
  }
  cpu::Conv2dForward(shape, x, w, bias, y, conv_scratch_);
  return absl::OkStatus();
}

absl::Status CpuBackend::Conv2dBackwardData(const Conv2dShape& shape, const float* w,
                                            const float* dy, float* dx) {
  if (auto s = ValidateConv2dShape(shape, "Conv2dBackwardData"); !s.ok()) return s;
  if (conv_kernel_ == CpuConvKernel::kOnednn) {
    auto onednn = Onednn();
    if (!onednn.ok()) return onednn.status();
    return (*onednn)->BackwardData(shape, w, dy, dx);
  }
  cpu::Conv2dBackwardData(shape, w, dy, dx, conv_scratch_);
  return absl::OkStatus();
}

absl::Status CpuBackend::Conv2dBackwardFilter(const Conv2dShape& shape, const float* x,
                                              const float* dy, float* dw, float* db) {
  if (auto s = ValidateConv2dShape(shape, "Conv2dBackwardFilter"); !s.ok()) return s;
  if (conv_kernel_ == CpuConvKernel::kOnednn) {
    auto onednn = Onednn();
    if (!onednn.ok()) return onednn.status();
    return (*onednn)->BackwardFilter(shape, x, dy, dw, db);
  }
  cpu::Conv2dBackwardFilter(shape, x, dy, dw, db, conv_scratch_);
  return absl::OkStatus();
}

absl::Status CpuBackend::Conv2dBackward(const Conv2dShape& shape, const float* x, const float* w,
                                        const float* dy, float* dx, float* dw, float* db) {
  if (conv_kernel_ != CpuConvKernel::kOnednn)
    return Backend::Conv2dBackward(shape, x, w, dy, dx, dw, db);
  if (auto s = ValidateConv2dShape(shape, "Conv2dBackward"); !s.ok()) return s;
  auto onednn = Onednn();
  if (!onednn.ok()) return onednn.status();
  return (*onednn)->Backward(shape, x, w, dy, dx, dw, db);
}

absl::Status CpuBackend::MaxPool2dForward(const Pool2dShape& shape, const float* x, float* y) {
  if (auto s = ValidatePool2dShape(shape, "MaxPool2dForward"); !s.ok()) return s;
  cpu::MaxPool2dForward(shape, x, y);
  return absl::OkStatus();
}

absl::Status CpuBackend::MaxPool2dBackward(const Pool2dShape& shape, const float* x,
                                           const float* /*y*/, const float* dy, float* dx) {
  if (auto s = ValidatePool2dShape(shape, "MaxPool2dBackward"); !s.ok()) return s;
  cpu::MaxPool2dBackward(shape, x, dy, dx);
  return absl::OkStatus();
}

absl::Status CpuBackend::BatchNormForwardTraining(const BatchNormShape& shape, const float* x,
                                                  const float* gamma, const float* beta, float* y) {
  if (auto s = ValidateBatchNormShape(shape, "BatchNormForwardTraining"); !s.ok()) return s;
  cpu::BatchNormForwardTraining(shape, x, gamma, beta, y);
  return absl::OkStatus();
}

absl::Status CpuBackend::BatchNormForwardInference(const BatchNormShape& shape, const float* x,
                                                   const float* gamma, const float* beta,
                                                   const float* mean, const float* var, float* y) {
  if (auto s = ValidateBatchNormShape(shape, "BatchNormForwardInference"); !s.ok()) return s;
  cpu::BatchNormForwardInference(shape, x, gamma, beta, mean, var, y);
  return absl::OkStatus();
}

absl::Status CpuBackend::BatchNormBackward(const BatchNormShape& shape, const float* x,
                                           const float* dy, const float* gamma, float* dx,
                                           float* dgamma, float* dbeta) {
  if (auto s = ValidateBatchNormShape(shape, "BatchNormBackward"); !s.ok()) return s;
  cpu::BatchNormBackward(shape, x, dy, gamma, dx, dgamma, dbeta);
  return absl::OkStatus();
}

absl::Status CpuBackend::BatchNormStatistics(const BatchNormShape& shape, const float* x,
                                             float weight, float* mean, float* var) {
  if (auto s = ValidateBatchNormShape(shape, "BatchNormStatistics"); !s.ok()) return s;
  cpu::BatchNormStatistics(shape, x, weight, mean, var);
  return absl::OkStatus();
}

}  // namespace hogwild
