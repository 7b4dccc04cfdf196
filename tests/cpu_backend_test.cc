// Every CpuBackend op against a float64 reference written here. Write-only outputs are filled
// with NaN first, so an element the op forgets to write fails the comparison.
//
// Tolerances: a float32 sum of k products has error at most about k * 2^-24 * sum_i |a_i b_i|
// (Higham, Accuracy and Stability of Numerical Algorithms, 3.1); the GEMM check allows 2x that
// bound. Element-wise ops are compared exactly or within a few ulps of the float64 value.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"

namespace hogwild {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kEps32 = 1.0 / (1 << 24);

std::vector<float> RandomFloats(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// ---- GEMM -----------------------------------------------------------------------------------------

struct GemmCase {
  Transpose ta, tb;
  int64_t m, n, k;
  float alpha, beta;
};

std::string Name(const GemmCase& c) {
  return std::string(c.ta == Transpose::kYes ? "T" : "N") + (c.tb == Transpose::kYes ? "T" : "N") +
         " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta);
}

void CheckGemm(const GemmCase& c) {
  SCOPED_TRACE(Name(c));
  CpuBackend backend;
  // A is stored [m, k] or, transposed, [k, m]; B is stored [k, n] or [n, k].
  const std::vector<float> a = RandomFloats(c.m * c.k, 1);
  const std::vector<float> b = RandomFloats(c.k * c.n, 2);
  const std::vector<float> c_in = RandomFloats(c.m * c.n, 3);
  // With beta == 0 the contract makes C write-only, so poison it.
  std::vector<float> out = c.beta == 0.0f ? std::vector<float>(c.m * c.n, kNaN) : c_in;
  auto a_at = [&](int64_t i, int64_t p) {  // op(A)[i, p]
    return double{c.ta == Transpose::kYes ? a[p * c.m + i] : a[i * c.k + p]};
  };
  auto b_at = [&](int64_t p, int64_t j) {  // op(B)[p, j]
    return double{c.tb == Transpose::kYes ? b[j * c.k + p] : b[p * c.n + j]};
  };
  ASSERT_TRUE(backend.Gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), b.data(), c.beta,
                           out.data())
                  .ok());
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double dot = 0.0, magnitude = 0.0;
      for (int64_t p = 0; p < c.k; ++p) {
        dot += a_at(i, p) * b_at(p, j);
        magnitude += std::fabs(a_at(i, p) * b_at(p, j));
      }
      const double prior = c.beta == 0.0f ? 0.0 : double{c.beta} * c_in[i * c.n + j];
      const double expected = c.alpha * dot + prior;
      const double tol =
          2 * (c.k + 2) * kEps32 * (std::fabs(c.alpha) * magnitude + std::fabs(prior)) + 1e-30;
      EXPECT_NEAR(out[i * c.n + j], expected, tol) << "C[" << i << ", " << j << "]";
    }
  }
}

TEST(CpuBackend, GemmMatchesFloat64ReferenceForAllTransposes) {
  for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      // Non-square with m, n, k all different, so a swapped leading dimension shows.
      CheckGemm({ta, tb, 5, 3, 7, 1.0f, 0.0f});
      CheckGemm({ta, tb, 4, 9, 2, -0.5f, 1.5f});
      CheckGemm({ta, tb, 1, 1, 33, 2.0f, 0.0f});
    }
  }
}

TEST(CpuBackend, GemmWithEmptyInnerDimensionAndBetaZeroWritesZeros) {
  CpuBackend backend;
  std::vector<float> c(6, kNaN);
  float unused = 0.0f;
  ASSERT_TRUE(
      backend.Gemm(Transpose::kNo, Transpose::kNo, 2, 3, 0, 1.0f, &unused, &unused, 0.0f, c.data())
          .ok());
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST(CpuBackend, GemmWithEmptyInnerDimensionScalesByBeta) {
  CpuBackend backend;
  std::vector<float> c = {1.0f, -2.0f, 3.0f, 4.0f};
  float unused = 0.0f;
  ASSERT_TRUE(
      backend.Gemm(Transpose::kYes, Transpose::kNo, 2, 2, 0, 1.0f, &unused, &unused, 1.0f, c.data())
          .ok());
  EXPECT_EQ(c, (std::vector<float>{1.0f, -2.0f, 3.0f, 4.0f}));
  ASSERT_TRUE(
      backend.Gemm(Transpose::kNo, Transpose::kYes, 2, 2, 0, 1.0f, &unused, &unused, 0.5f, c.data())
          .ok());
  EXPECT_EQ(c, (std::vector<float>{0.5f, -1.0f, 1.5f, 2.0f}));
}

TEST(CpuBackend, GemmWithEmptyOutputTouchesNothing) {
  CpuBackend backend;
  float sentinel = 42.0f, unused = 0.0f;
  EXPECT_TRUE(backend.Gemm(Transpose::kNo, Transpose::kNo, 0, 3, 4, 1.0f, &unused, &unused, 0.0f,
                           &sentinel)
                  .ok());
  EXPECT_TRUE(backend.Gemm(Transpose::kNo, Transpose::kNo, 3, 0, 4, 1.0f, &unused, &unused, 0.0f,
                           &sentinel)
                  .ok());
  EXPECT_EQ(sentinel, 42.0f);
}

TEST(CpuBackend, GemmRejectsNegativeSizes) {
  CpuBackend backend;
  float unused = 0.0f;
  const absl::Status s =
      backend.Gemm(Transpose::kNo, Transpose::kNo, 2, -3, 4, 1.0f, &unused, &unused, 0.0f, &unused);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("-3"), std::string::npos) << s;
}

// ---- Bias -----------------------------------------------------------------------------------------

TEST(CpuBackend, AddBiasAddsTheBiasToEveryRow) {
  CpuBackend backend;
  constexpr int64_t kRows = 4, kCols = 5;
  std::vector<float> x = RandomFloats(kRows * kCols, 4);
  const std::vector<float> x0 = x;
  const std::vector<float> bias = RandomFloats(kCols, 5);
  ASSERT_TRUE(backend.AddBias(kRows, kCols, bias.data(), x.data()).ok());
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      // One float32 addition: exactly the rounded float64 sum.
      EXPECT_EQ(x[r * kCols + c], static_cast<float>(double{x0[r * kCols + c]} + bias[c]));
    }
  }
}

TEST(CpuBackend, SumRowsIsTheColumnSum) {
  CpuBackend backend;
  constexpr int64_t kRows = 37, kCols = 6;
  const std::vector<float> dy = RandomFloats(kRows * kCols, 6);
  std::vector<float> db(kCols, kNaN);
  ASSERT_TRUE(backend.SumRows(kRows, kCols, dy.data(), db.data()).ok());
  for (int64_t c = 0; c < kCols; ++c) {
    double sum = 0.0, magnitude = 0.0;
    for (int64_t r = 0; r < kRows; ++r) {
      sum += dy[r * kCols + c];
      magnitude += std::fabs(dy[r * kCols + c]);
    }
    EXPECT_NEAR(db[c], sum, 2 * kRows * kEps32 * magnitude) << c;
  }
  // Zero rows: a zero column sum (the bias gradient of an empty shard), not NaN.
  std::fill(db.begin(), db.end(), kNaN);
  ASSERT_TRUE(backend.SumRows(0, kCols, dy.data(), db.data()).ok());
  for (float v : db) EXPECT_EQ(v, 0.0f);
}

// ---- ReLU -----------------------------------------------------------------------------------------

TEST(CpuBackend, ReluAndReluGradMatchReference) {
  CpuBackend backend;
  std::vector<float> x = RandomFloats(50, 7);
  x[3] = 0.0f;
  x[4] = -0.0f;
  const std::vector<float> dy = RandomFloats(x.size(), 8);
  std::vector<float> y(x.size(), kNaN), dx(x.size(), kNaN);
  ASSERT_TRUE(backend.Relu(x.size(), x.data(), y.data()).ok());
  ASSERT_TRUE(backend.ReluGrad(x.size(), y.data(), dy.data(), dx.data()).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f) << i;
    // The subgradient at 0 is 0 (PyTorch's threshold_backward).
    EXPECT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.0f) << i;
  }
}

TEST(CpuBackend, ReluAndReluGradWorkInPlace) {
  CpuBackend backend;
  std::vector<float> x = RandomFloats(20, 9);
  const std::vector<float> x0 = x;
  std::vector<float> dy = RandomFloats(x.size(), 10);
  const std::vector<float> dy0 = dy;
  ASSERT_TRUE(backend.Relu(x.size(), x.data(), x.data()).ok());
  ASSERT_TRUE(backend.ReluGrad(x.size(), x.data(), dy.data(), dy.data()).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i], x0[i] > 0 ? x0[i] : 0.0f);
    EXPECT_EQ(dy[i], x0[i] > 0 ? dy0[i] : 0.0f);
  }
}

// ---- Softmax cross-entropy ------------------------------------------------------------------------

// Float64 reference of one row: loss and scale * (softmax - onehot).
double RefSoftmaxCrossEntropyRow(const float* z, int64_t classes, int32_t label, double scale,
                                 std::vector<double>& grad) {
  double m = z[0];
  for (int64_t k = 1; k < classes; ++k) m = std::max(m, double{z[k]});
  double s = 0.0;
  for (int64_t k = 0; k < classes; ++k) s += std::exp(z[k] - m);
  grad.resize(classes);
  for (int64_t k = 0; k < classes; ++k) {
    grad[k] = scale * (std::exp(z[k] - m) / s - (k == label ? 1.0 : 0.0));
  }
  return m + std::log(s) - z[label];
}

void CheckSoftmaxCrossEntropy(const std::vector<float>& logits, const std::vector<int32_t>& labels,
                              int64_t classes, float scale) {
  CpuBackend backend;
  const int64_t rows = labels.size();
  std::vector<float> dlogits(logits.size(), kNaN);
  float loss_sum = kNaN;
  ASSERT_TRUE(backend
                  .SoftmaxCrossEntropy(rows, classes, logits.data(), labels.data(), scale,
                                       dlogits.data(), &loss_sum)
                  .ok());
  double expected_loss = 0.0;
  std::vector<double> grad;
  for (int64_t r = 0; r < rows; ++r) {
    const double row_loss = RefSoftmaxCrossEntropyRow(logits.data() + r * classes, classes,
                                                      labels[r], scale, grad);
    expected_loss += row_loss;
    for (int64_t k = 0; k < classes; ++k) {
      ASSERT_TRUE(std::isfinite(dlogits[r * classes + k])) << "row " << r << " class " << k;
      EXPECT_NEAR(dlogits[r * classes + k], grad[k], 1e-6 * std::fabs(scale))
          << "row " << r << " class " << k;
    }
  }
  ASSERT_TRUE(std::isfinite(loss_sum));
  // The loss of a row is logsumexp - z[label]: with large logits the two terms cancel, so the
  // float32 error is relative to the logits' magnitude, not to the loss.
  double magnitude = 1.0;
  for (float z : logits) magnitude = std::max(magnitude, double{std::fabs(z)});
  EXPECT_NEAR(loss_sum, expected_loss, 8 * kEps32 * magnitude * rows + 1e-5 * rows);
}

TEST(CpuBackend, SoftmaxCrossEntropyMatchesReference) {
  constexpr int64_t kRows = 9, kClasses = 10;
  std::vector<int32_t> labels(kRows);
  for (int64_t r = 0; r < kRows; ++r) labels[r] = static_cast<int32_t>((3 * r + 2) % kClasses);
  CheckSoftmaxCrossEntropy(RandomFloats(kRows * kClasses, 11, 2.0f), labels, kClasses, 1.0f / 64);
}

TEST(CpuBackend, SoftmaxCrossEntropyIsStableForLargeLogits) {
  // exp(100) overflows float32 and exp(-200) underflows: an implementation without the max
  // subtraction returns inf or NaN here.
  const std::vector<float> logits = {1000.0f, 999.0f, -1000.0f,  // row 0: label 1, loss ~1.31
                                     -500.0f, -501.0f, -502.0f,  // row 1: all very negative
                                     88.0f,   100.0f,  -200.0f};  // row 2: label 2, loss ~300
  CheckSoftmaxCrossEntropy(logits, {1, 0, 2}, 3, 0.5f);
}

TEST(CpuBackend, SoftmaxCrossEntropyOfNoRowsIsZero) {
  CpuBackend backend;
  float loss_sum = kNaN, unused = 0.0f;
  int32_t label = 0;
  ASSERT_TRUE(backend.SoftmaxCrossEntropy(0, 10, &unused, &label, 1.0f, &unused, &loss_sum).ok());
  EXPECT_EQ(loss_sum, 0.0f);
}

// ---- Accumulate and the SGD update ---------------------------------------------------------------

TEST(CpuBackend, AccumulateAddsElementwise) {
  CpuBackend backend;
  const std::vector<float> x = RandomFloats(33, 12);
  std::vector<float> y = RandomFloats(33, 13);
  const std::vector<float> y0 = y;
  ASSERT_TRUE(backend.Accumulate(x.size(), x.data(), y.data()).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], static_cast<float>(double{y0[i]} + x[i])) << i;
  }
}

// torch.optim.SGD (dampening 0, nesterov False), from its documentation, in float64:
//   g_t = g_t + weight_decay * p_{t-1}
//   b_t = g_t                        (t == 1)
//   b_t = momentum * b_{t-1} + g_t   (t > 1)
//   p_t = p_{t-1} - lr * b_t
TEST(CpuBackend, SgdUpdateFollowsThePyTorchFormula) {
  constexpr int64_t kN = 17;
  constexpr int kSteps = 5;
  const float lrs[kSteps] = {0.1f, 0.05f, 0.2f, 0.01f, 0.1f};
  const float momentum = 0.9f, weight_decay = 0.01f;
  CpuBackend backend;
  std::vector<float> params = RandomFloats(kN, 14), velocity(kN, 0.0f);
  std::vector<double> p(params.begin(), params.end()), buf(kN, 0.0);
  for (int t = 1; t <= kSteps; ++t) {
    const std::vector<float> grad = RandomFloats(kN, 100 + t);
    ASSERT_TRUE(backend
                    .SgdUpdate(kN, lrs[t - 1], momentum, weight_decay, grad.data(),
                               velocity.data(), params.data())
                    .ok());
    for (int64_t i = 0; i < kN; ++i) {
      const double g = grad[i] + double{weight_decay} * p[i];
      buf[i] = t == 1 ? g : double{momentum} * buf[i] + g;
      p[i] -= double{lrs[t - 1]} * buf[i];
    }
  }
  for (int64_t i = 0; i < kN; ++i) {
    EXPECT_NEAR(params[i], p[i], 1e-5 * std::max(1.0, std::fabs(p[i]))) << i;
    EXPECT_NEAR(velocity[i], buf[i], 1e-5 * std::max(1.0, std::fabs(buf[i]))) << i;
  }
}

TEST(CpuBackend, SgdUpdateWithoutMomentumNeedsNoVelocity) {
  CpuBackend backend;
  std::vector<float> params = {1.0f, -2.0f, 0.5f};
  const std::vector<float> grad = {0.5f, 0.25f, -1.0f};
  ASSERT_TRUE(backend.SgdUpdate(3, 0.5f, 0.0f, 0.0f, grad.data(), nullptr, params.data()).ok());
  EXPECT_EQ(params, (std::vector<float>{0.75f, -2.125f, 1.0f}));
  // Weight decay alone: p - lr * (g + wd * p) = 0.75 - 0.5 * (0 + 0.5 * 0.75).
  const std::vector<float> zero(3, 0.0f);
  ASSERT_TRUE(backend.SgdUpdate(1, 0.5f, 0.0f, 0.5f, zero.data(), nullptr, params.data()).ok());
  EXPECT_EQ(params[0], 0.5625f);
}

TEST(CpuBackend, SgdUpdateWithMomentumRejectsAMissingVelocity) {
  CpuBackend backend;
  std::vector<float> params(3, 1.0f), grad(3, 1.0f);
  const absl::Status s =
      backend.SgdUpdate(3, 0.1f, 0.9f, 0.0f, grad.data(), nullptr, params.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("velocity"), std::string::npos) << s;
  EXPECT_EQ(params, std::vector<float>(3, 1.0f));
}

// ---- Memory ---------------------------------------------------------------------------------------

TEST(CpuBackend, AllocateCopyAndFillRoundTrip) {
  CpuBackend backend;
  auto ptr = backend.Allocate(10 * sizeof(float));
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*ptr) % 64, 0u) << "64-byte alignment";
  float* device = static_cast<float*>(*ptr);
  const std::vector<float> src = RandomFloats(10, 15);
  std::vector<float> dst(10, kNaN);
  ASSERT_TRUE(backend.CopyToDevice(device, src.data(), 10 * sizeof(float)).ok());
  ASSERT_TRUE(backend.CopyToHost(dst.data(), device, 10 * sizeof(float)).ok());
  EXPECT_EQ(dst, src);
  ASSERT_TRUE(backend.Fill(10, 3.5f, device).ok());
  ASSERT_TRUE(backend.CopyToHost(dst.data(), device, 10 * sizeof(float)).ok());
  EXPECT_EQ(dst, std::vector<float>(10, 3.5f));
  backend.Free(device);
  backend.Free(nullptr);
}

}  // namespace
}  // namespace hogwild
