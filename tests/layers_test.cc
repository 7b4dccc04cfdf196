// Invariant 1 (DESIGN.md): every layer and the loss have gradients that match float64 central
// finite differences. The finite differences are taken of an independent float64 forward pass
// written here (not of the float32 code under test), evaluated at the very float32 inputs the
// layer saw, so the only disagreement is the float32 rounding of the code under test.
//
// Tolerances: |g - g_fd| <= kAbsTol * max(1, max_j |g_fd_j|) + kRelTol * |g_fd|. The float64
// difference quotient with h = 1e-6 has truncation error O(h^2) ~ 1e-12 and rounding error
// ~1e-16 / h = 1e-10, so all the slack is for the float32 arithmetic of the code under test. The
// largest error measured is 2e-7 on gradients of magnitude up to 4.4 (5e-8 of the scale);
// kAbsTol = 1e-6 and kRelTol = 1e-5 leave a margin of about 20x.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/layers/dense.h"
#include "trainer/layers/relu.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

constexpr double kStep = 1e-6;
constexpr double kAbsTol = 1e-6;
constexpr double kRelTol = 1e-5;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using Vec = std::vector<double>;

std::vector<float> RandomFloats(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

Vec ToDouble(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

// ---- The float64 reference forward pass ---------------------------------------------------------

// y = x W + b.   x: [batch, in], W: [in, out] (row-major), b: [out].
Vec RefDense(const Vec& x, const double* w, const double* b, int64_t batch, int64_t in,
             int64_t out) {
  Vec y(batch * out);
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double s = b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * w[i * out + o];
      y[r * out + o] = s;
    }
  }
  return y;
}

Vec RefRelu(Vec x) {
  for (double& v : x) v = v > 0.0 ? v : 0.0;
  return x;
}

// Sum over rows of -log softmax(logits)[label], via a max-shifted log-sum-exp.
double RefCrossEntropySum(const Vec& logits, const std::vector<int32_t>& labels, int64_t classes) {
  double total = 0.0;
  for (size_t r = 0; r < labels.size(); ++r) {
    const double* z = logits.data() + r * classes;
    const double m = *std::max_element(z, z + classes);
    double s = 0.0;
    for (int64_t k = 0; k < classes; ++k) s += std::exp(z[k] - m);
    total += m + std::log(s) - z[labels[r]];
  }
  return total;
}

// <a, b>, the scalar objective sum(y * r) whose gradient with respect to y is r.
double Dot(const Vec& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Central differences of f at x, one coordinate at a time.
Vec FiniteDifferences(const std::function<double(const Vec&)>& f, Vec x) {
  Vec g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double up = f(x);
    x[i] = saved - kStep;
    const double down = f(x);
    x[i] = saved;
    g[i] = (up - down) / (2 * kStep);
  }
  return g;
}

// Checks `actual` against `expected` with the tolerances above, reporting the first few misses.
void ExpectGradientNear(const std::vector<float>& actual, const Vec& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 1.0;
  for (double e : expected) scale = std::max(scale, std::fabs(e));
  int failures = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double err = std::fabs(actual[i] - expected[i]);
    const double tol = kAbsTol * scale + kRelTol * std::fabs(expected[i]);
    if (!(err <= tol) && ++failures <= 5) {
      ADD_FAILURE() << what << "[" << i << "]: " << actual[i] << " vs finite difference "
                    << expected[i] << " (error " << err << ", tolerance " << tol << ")";
    }
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << expected.size()
                         << " elements out of tolerance";
}

// ---- Dense
// ----------------------------------------------------------------------------------------

TEST(Dense, ForwardMatchesFloat64Reference) {
  constexpr int64_t kBatch = 5, kIn = 7, kOut = 4;
  CpuBackend backend;
  Dense dense(kIn, kOut);
  const std::vector<float> params = RandomFloats(dense.num_params(), 1);
  const std::vector<float> x = RandomFloats(kBatch * kIn, 2);
  std::vector<float> y(kBatch * kOut, kNaN);
  ASSERT_TRUE(dense.Forward(backend, kBatch, params.data(), x.data(), y.data()).ok());
  const Vec p = ToDouble(params);
  const Vec expected = RefDense(ToDouble(x), p.data(), p.data() + kIn * kOut, kBatch, kIn, kOut);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TEST(Dense, ParamAndInputGradientsMatchFiniteDifferences) {
  constexpr int64_t kBatch = 6, kIn = 9, kOut = 5;
  CpuBackend backend;
  Dense dense(kIn, kOut);
  const std::vector<float> params = RandomFloats(dense.num_params(), 3);
  const std::vector<float> x = RandomFloats(kBatch * kIn, 4);
  const std::vector<float> dy = RandomFloats(kBatch * kOut, 5);  // dL/dy for L = <y, dy>
  std::vector<float> y(kBatch * kOut), dparams(dense.num_params(), kNaN), dx(x.size(), kNaN);
  ASSERT_TRUE(dense.Forward(backend, kBatch, params.data(), x.data(), y.data()).ok());
  ASSERT_TRUE(dense
                  .Backward(backend, kBatch, params.data(), x.data(), y.data(), dy.data(),
                            dparams.data(), dx.data())
                  .ok());

  const Vec x64 = ToDouble(x), p64 = ToDouble(params);
  const Vec fd_params = FiniteDifferences(
      [&](const Vec& p) {
        return Dot(RefDense(x64, p.data(), p.data() + kIn * kOut, kBatch, kIn, kOut), dy);
      },
      p64);
  const Vec fd_x = FiniteDifferences(
      [&](const Vec& xs) {
        return Dot(RefDense(xs, p64.data(), p64.data() + kIn * kOut, kBatch, kIn, kOut), dy);
      },
      x64);
  ExpectGradientNear(dparams, fd_params, "dparams");
  ExpectGradientNear(dx, fd_x, "dx");
}

TEST(Dense, EmptyBatchGivesZeroParamGradient) {
  CpuBackend backend;
  Dense dense(3, 2);
  const std::vector<float> params = RandomFloats(dense.num_params(), 6);
  std::vector<float> dparams(dense.num_params(), kNaN);
  float unused = 0.0f;
  ASSERT_TRUE(
      dense.Backward(backend, 0, params.data(), &unused, &unused, &unused, dparams.data(), nullptr)
          .ok());
  for (float g : dparams) EXPECT_EQ(g, 0.0f);
}

// ---- ReLU
// -----------------------------------------------------------------------------------------

TEST(Relu, InputGradientMatchesFiniteDifferences) {
  constexpr int64_t kBatch = 4, kWidth = 11;
  CpuBackend backend;
  Relu relu(Shape{kWidth});
  std::vector<float> x = RandomFloats(kBatch * kWidth, 7);
  // Keep every input away from the kink at 0, where the derivative is not defined and a
  // difference quotient straddling it would be meaningless.
  for (float& v : x) v = v >= 0 ? v + 0.01f : v - 0.01f;
  const std::vector<float> dy = RandomFloats(x.size(), 8);
  std::vector<float> y(x.size(), kNaN), dx(x.size(), kNaN);
  ASSERT_TRUE(relu.Forward(backend, kBatch, nullptr, x.data(), y.data()).ok());
  const Vec expected_y = RefRelu(ToDouble(x));
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], expected_y[i]) << i;
  ASSERT_TRUE(
      relu.Backward(backend, kBatch, nullptr, x.data(), y.data(), dy.data(), nullptr, dx.data())
          .ok());
  const Vec fd =
      FiniteDifferences([&](const Vec& xs) { return Dot(RefRelu(xs), dy); }, ToDouble(x));
  ExpectGradientNear(dx, fd, "dx");
  EXPECT_EQ(relu.num_params(), 0);
}

// ---- Softmax cross-entropy
// ------------------------------------------------------------------------

TEST(SoftmaxCrossEntropy, LossAndGradientMatchFiniteDifferences) {
  constexpr int64_t kRows = 7, kClasses = 6;
  CpuBackend backend;
  const std::vector<float> logits = RandomFloats(kRows * kClasses, 9, 3.0f);
  std::vector<int32_t> labels(kRows);
  for (int64_t r = 0; r < kRows; ++r) labels[r] = static_cast<int32_t>((r * 5 + 1) % kClasses);
  const float scale = 1.0f / kRows;
  std::vector<float> dlogits(logits.size(), kNaN);
  float loss_sum = kNaN;
  ASSERT_TRUE(backend
                  .SoftmaxCrossEntropy(kRows, kClasses, logits.data(), labels.data(), scale,
                                       dlogits.data(), &loss_sum)
                  .ok());
  const Vec z = ToDouble(logits);
  EXPECT_NEAR(loss_sum, RefCrossEntropySum(z, labels, kClasses), 1e-5 * kRows);
  Vec fd =
      FiniteDifferences([&](const Vec& zs) { return RefCrossEntropySum(zs, labels, kClasses); }, z);
  for (double& g : fd) g *= scale;
  ExpectGradientNear(dlogits, fd, "dlogits");
}

// ---- A whole model through Tower::ForwardBackward
// ------------------------------------------------

// The float64 loss sum of an mlp with the flat parameter layout of trainer/model.h:
// [W1 (D x H1), b1, W2 (H1 x H2), b2, ..., Wout (Hn x K), bout].
double RefMlpLossSum(const Vec& params, const Vec& x, const std::vector<int32_t>& labels,
                     int64_t batch, const std::vector<int64_t>& widths, double* min_abs_preact) {
  Vec act = x;
  const double* p = params.data();
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const int64_t in = widths[l], out = widths[l + 1];
    act = RefDense(act, p, p + in * out, batch, in, out);
    p += in * out + out;
    if (l + 2 < widths.size()) {
      for (double v : act) *min_abs_preact = std::min(*min_abs_preact, std::fabs(v));
      act = RefRelu(std::move(act));
    }
  }
  return RefCrossEntropySum(act, labels, widths.back());
}

void CheckTowerAgainstFiniteDifferences(const ModelSpec& spec, int64_t batch, uint64_t seed) {
  auto model = Model::Create(spec);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<int64_t> widths = {(*model)->input_features()};
  for (int64_t h : spec.hidden) widths.push_back(h);
  widths.push_back(spec.num_classes);

  std::vector<float> params((*model)->num_params());
  (*model)->InitParams(seed, absl::MakeSpan(params));
  const std::vector<float> x = RandomFloats(batch * widths[0], seed + 1);
  std::vector<int32_t> labels(batch);
  for (int64_t r = 0; r < batch; ++r)
    labels[r] = static_cast<int32_t>((r * 7 + 3) % spec.num_classes);

  CpuBackend backend;
  auto tower = Tower::Create(model->get(), &backend, batch + 3);  // max_batch > batch on purpose
  ASSERT_TRUE(tower.ok()) << tower.status();
  const float grad_scale = 1.0f / batch;
  std::vector<float> grad(params.size(), kNaN);
  auto loss = (*tower)->ForwardBackward(params.data(), batch, x.data(), labels.data(), grad_scale,
                                        grad.data());
  ASSERT_TRUE(loss.ok()) << loss.status();

  const Vec x64 = ToDouble(x);
  double min_abs_preact = std::numeric_limits<double>::infinity();
  const double ref_loss =
      RefMlpLossSum(ToDouble(params), x64, labels, batch, widths, &min_abs_preact);
  // The finite differences are meaningless if a ReLU input sits within a step of its kink.
  ASSERT_GT(min_abs_preact, 100 * kStep) << "pick another seed";
  EXPECT_NEAR(*loss, ref_loss, 1e-5 * std::max(1.0, ref_loss));

  double unused = 0.0;
  Vec fd = FiniteDifferences(
      [&](const Vec& p) { return RefMlpLossSum(p, x64, labels, batch, widths, &unused); },
      ToDouble(params));
  for (double& g : fd) g *= grad_scale;
  ExpectGradientNear(grad, fd, "grad");
}

TEST(Tower, MlpForwardBackwardMatchesFiniteDifferences) {
  CheckTowerAgainstFiniteDifferences(
      ModelSpec{.name = "mlp", .hidden = {6, 5}, .input_shape = {2, 2, 2}, .num_classes = 4},
      /*batch=*/9, /*seed=*/21);
}

TEST(Tower, LogregForwardBackwardMatchesFiniteDifferences) {
  CheckTowerAgainstFiniteDifferences(
      ModelSpec{.name = "logreg", .hidden = {}, .input_shape = {10}, .num_classes = 3},
      /*batch=*/5, /*seed=*/22);
}

TEST(Tower, EmptyBatchGivesZeroLossAndZeroGradient) {
  auto model =
      Model::Create(ModelSpec{.name = "mlp", .hidden = {4}, .input_shape = {3}, .num_classes = 2})
          .value();
  std::vector<float> params(model->num_params());
  model->InitParams(1, absl::MakeSpan(params));
  CpuBackend backend;
  auto tower = Tower::Create(model.get(), &backend, 8).value();
  std::vector<float> grad(params.size(), kNaN);
  float unused_x = 0.0f;
  int32_t unused_label = 0;
  auto loss = tower->ForwardBackward(params.data(), 0, &unused_x, &unused_label, 1.0f, grad.data());
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(*loss, 0.0);
  for (float g : grad) EXPECT_EQ(g, 0.0f);
}

}  // namespace
}  // namespace hogwild
