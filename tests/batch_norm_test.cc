// Batch normalization (trainer/layers/batch_norm.h, kernels/cpu/batch_norm.h): the CPU ops against
// a float64 reference of the definitions, the layer's gradients against float64 central finite
// differences of that reference, the inference phase with the moving statistics, the tower's
// statistics slots, and the cnn_bn model's layout.
//
// Tolerances: the CPU loops accumulate in double and round to float once per output, so the
// forward outputs agree with the float64 reference to a few float ulps (1e-5 relative to the
// output scale leaves a wide margin). The finite differences (h = 1e-6, float64 objective) have
// truncation error ~1e-12 and rounding error ~1e-10; the slack (1e-4 of the gradient scale) is
// for the float32 inputs and outputs of the code under test.
#include "trainer/layers/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

constexpr float kEps = 1e-5f;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
using Vec = std::vector<double>;

// Values with a per-channel offset and scale, so that normalization matters.
std::vector<float> Activations(const BatchNormShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(s.size());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c)
      for (int64_t i = 0; i < s.spatial; ++i)
        x[(n * s.channels + c) * s.spatial + i] = 2.0f * c - 3.0f + (0.5f + c) * normal(rng);
  return x;
}

std::vector<float> Random(int64_t n, uint64_t seed, float mean, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(mean, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

struct RefStats {
  Vec mean, biased_var, unbiased_var;
};

RefStats ReferenceStats(const BatchNormShape& s, const Vec& x) {
  RefStats r{Vec(s.channels), Vec(s.channels), Vec(s.channels)};
  const double count = static_cast<double>(s.per_channel());
  for (int64_t c = 0; c < s.channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t i = 0; i < s.spatial; ++i) sum += x[(n * s.channels + c) * s.spatial + i];
    const double mean = sum / count;
    double sq = 0.0;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t i = 0; i < s.spatial; ++i) {
        const double d = x[(n * s.channels + c) * s.spatial + i] - mean;
        sq += d * d;
      }
    r.mean[c] = mean;
    r.biased_var[c] = sq / count;
    r.unbiased_var[c] = sq / (count - 1.0);
  }
  return r;
}

// y = gamma (x - mean) / sqrt(var + eps) + beta with the given mean and variance.
Vec ReferenceNormalize(const BatchNormShape& s, const Vec& x, const Vec& gamma, const Vec& beta,
                       const Vec& mean, const Vec& var) {
  Vec y(x.size());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c)
      for (int64_t i = 0; i < s.spatial; ++i) {
        const int64_t at = (n * s.channels + c) * s.spatial + i;
        y[at] = gamma[c] * (x[at] - mean[c]) / std::sqrt(var[c] + kEps) + beta[c];
      }
  return y;
}

Vec ReferenceTraining(const BatchNormShape& s, const Vec& x, const Vec& gamma, const Vec& beta) {
  const RefStats st = ReferenceStats(s, x);
  return ReferenceNormalize(s, x, gamma, beta, st.mean, st.biased_var);
}

Vec D(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

void ExpectNear(const std::vector<float>& got, const Vec& want, double rel, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * scale) << what << " at " << i;
  }
}

class BatchNormOps : public ::testing::TestWithParam<BatchNormShape> {};

TEST_P(BatchNormOps, ForwardAndStatisticsMatchTheFloat64Reference) {
  const BatchNormShape s = GetParam();
  const std::vector<float> x = Activations(s, 1);
  const std::vector<float> gamma = Random(s.channels, 2, 1.0f, 0.5f);
  const std::vector<float> beta = Random(s.channels, 3, 0.0f, 1.0f);
  const std::vector<float> mean = Random(s.channels, 4, 0.0f, 2.0f);
  std::vector<float> var = Random(s.channels, 5, 0.0f, 1.0f);
  for (float& v : var) v = v * v + 0.1f;
  CpuBackend backend;

  std::vector<float> y(s.size(), kNaN);
  ASSERT_TRUE(
      backend.BatchNormForwardTraining(s, x.data(), gamma.data(), beta.data(), y.data()).ok());
  ExpectNear(y, ReferenceTraining(s, D(x), D(gamma), D(beta)), 1e-5, "training forward");

  std::vector<float> z(s.size(), kNaN);
  ASSERT_TRUE(backend
                  .BatchNormForwardInference(s, x.data(), gamma.data(), beta.data(), mean.data(),
                                             var.data(), z.data())
                  .ok());
  ExpectNear(z, ReferenceNormalize(s, D(x), D(gamma), D(beta), D(mean), D(var)), 1e-5,
             "inference forward");

  const RefStats st = ReferenceStats(s, D(x));
  const float weight = 0.375f;
  std::vector<float> got_mean(s.channels, kNaN), got_var(s.channels, kNaN);
  ASSERT_TRUE(
      backend.BatchNormStatistics(s, x.data(), weight, got_mean.data(), got_var.data()).ok());
  Vec want_mean(s.channels), want_var(s.channels);
  for (int64_t c = 0; c < s.channels; ++c) {
    want_mean[c] = weight * st.mean[c];
    want_var[c] = weight * st.unbiased_var[c];  // PyTorch's running_var: unbiased
  }
  ExpectNear(got_mean, want_mean, 1e-6, "weighted mean");
  ExpectNear(got_var, want_var, 1e-6, "weighted unbiased variance");
}

// The objective sum(y * r) of the float64 training forward, differentiated by central
// differences in each input, gamma and beta, against BatchNormBackward.
TEST_P(BatchNormOps, BackwardMatchesFiniteDifferences) {
  const BatchNormShape s = GetParam();
  const std::vector<float> x = Activations(s, 11);
  const std::vector<float> gamma = Random(s.channels, 12, 1.0f, 0.5f);
  const std::vector<float> beta = Random(s.channels, 13, 0.0f, 1.0f);
  const std::vector<float> r = Random(s.size(), 14, 0.0f, 1.0f);
  CpuBackend backend;
  std::vector<float> dx(s.size(), kNaN), dgamma(s.channels, kNaN), dbeta(s.channels, kNaN);
  ASSERT_TRUE(backend
                  .BatchNormBackward(s, x.data(), r.data(), gamma.data(), dx.data(), dgamma.data(),
                                     dbeta.data())
                  .ok());
  const auto objective = [&](const Vec& xv, const Vec& g, const Vec& b) {
    const Vec y = ReferenceTraining(s, xv, g, b);
    double sum = 0.0;
    for (size_t i = 0; i < y.size(); ++i) sum += y[i] * r[i];
    return sum;
  };
  constexpr double h = 1e-6;
  const auto fd = [&](Vec& v, size_t i, auto eval) {
    const double keep = v[i];
    v[i] = keep + h;
    const double up = eval();
    v[i] = keep - h;
    const double down = eval();
    v[i] = keep;
    return (up - down) / (2 * h);
  };
  Vec xv = D(x), g = D(gamma), b = D(beta);
  const auto eval = [&] { return objective(xv, g, b); };
  Vec want_dx(s.size()), want_dg(s.channels), want_db(s.channels);
  for (size_t i = 0; i < xv.size(); ++i) want_dx[i] = fd(xv, i, eval);
  for (size_t c = 0; c < g.size(); ++c) want_dg[c] = fd(g, c, eval);
  for (size_t c = 0; c < b.size(); ++c) want_db[c] = fd(b, c, eval);
  ExpectNear(dx, want_dx, 1e-4, "dx");
  ExpectNear(dgamma, want_dg, 1e-4, "dgamma");
  ExpectNear(dbeta, want_db, 1e-4, "dbeta");
  // Without dx the parameter gradients are the same.
  std::vector<float> dgamma2(s.channels, kNaN), dbeta2(s.channels, kNaN);
  ASSERT_TRUE(backend
                  .BatchNormBackward(s, x.data(), r.data(), gamma.data(), nullptr, dgamma2.data(),
                                     dbeta2.data())
                  .ok());
  EXPECT_EQ(dgamma2, dgamma);
  EXPECT_EQ(dbeta2, dbeta);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchNormOps,
                         ::testing::Values(BatchNormShape{.batch = 3, .channels = 4, .spatial = 6},
                                           BatchNormShape{.batch = 7, .channels = 5, .spatial = 1},
                                           BatchNormShape{
                                               .batch = 1, .channels = 2, .spatial = 9}));

TEST(BatchNormOps, BadShapesAndEmptyBatches) {
  CpuBackend backend;
  float one = 1.0f;
  const absl::Status bad = backend.BatchNormForwardTraining(
      BatchNormShape{.batch = 2, .channels = 0, .spatial = 1}, &one, &one, &one, &one);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("channels 0"), std::string::npos) << bad;
  // A batch of 0: gradients and statistics become zeros (a sync tower without examples).
  const BatchNormShape empty{.batch = 0, .channels = 2, .spatial = 3};
  std::vector<float> g(2, kNaN), b(2, kNaN), m(2, kNaN), v(2, kNaN);
  const float gamma[2] = {1.0f, 2.0f};
  ASSERT_TRUE(
      backend.BatchNormBackward(empty, nullptr, nullptr, gamma, nullptr, g.data(), b.data()).ok());
  ASSERT_TRUE(backend.BatchNormStatistics(empty, nullptr, 0.0f, m.data(), v.data()).ok());
  EXPECT_EQ(g, std::vector<float>(2, 0.0f));
  EXPECT_EQ(b, std::vector<float>(2, 0.0f));
  EXPECT_EQ(m, std::vector<float>(2, 0.0f));
  EXPECT_EQ(v, std::vector<float>(2, 0.0f));
}

TEST(BatchNormLayer, InferenceUsesTheMovingStatisticsAndTrainingTheBatchs) {
  auto layer = BatchNorm::Create({3, 2, 2});
  ASSERT_TRUE(layer.ok()) << layer.status();
  BatchNorm& bn = **layer;
  EXPECT_EQ(bn.num_params(), 12);
  EXPECT_EQ(bn.num_bias_params(), 6);
  EXPECT_EQ(bn.num_stat_params(), 6);
  std::vector<float> params(12, kNaN);
  std::mt19937_64 rng(1);
  bn.InitParams(rng, absl::MakeSpan(params));
  EXPECT_EQ(params, (std::vector<float>{1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1}));  // PyTorch's
  // gamma, beta, moving mean, moving var:
  params = {1.5f, 0.5f, 2.0f, 0.1f, -0.2f, 0.3f, 1.0f, -2.0f, 0.5f, 4.0f, 0.25f, 9.0f};
  const BatchNormShape s{.batch = 2, .channels = 3, .spatial = 4};
  const std::vector<float> x = Activations(s, 21);
  CpuBackend backend;
  std::vector<float> y(s.size(), kNaN);
  ASSERT_TRUE(bn.Forward(backend, 2, params.data(), x.data(), y.data()).ok());
  const auto slice = [&](int at) { return Vec(params.begin() + at, params.begin() + at + 3); };
  ExpectNear(y, ReferenceNormalize(s, D(x), slice(0), slice(3), slice(6), slice(9)), 1e-5,
             "inference");
  ASSERT_TRUE(bn.ForwardTraining(backend, 2, params.data(), x.data(), y.data()).ok());
  ExpectNear(y, ReferenceTraining(s, D(x), slice(0), slice(3)), 1e-5, "training");
  // One example in inference is fine (the batch's own statistics play no part).
  std::vector<float> y1(s.channels * s.spatial, kNaN);
  ASSERT_TRUE(bn.Forward(backend, 1, params.data(), x.data(), y1.data()).ok());
  EXPECT_EQ(y1[0], y1[0]);
}

TEST(BatchNormLayer, RefusesOtherShapes) {
  EXPECT_EQ(BatchNorm::Create({2, 3}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BatchNorm::Create({0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BatchNorm::Create({4}, 0.0f).status().code(), absl::StatusCode::kInvalidArgument);
}

// The cnn_bn layout of docs/workloads.md's Models table and the ranges the policies use.
TEST(CnnBnModel, LayoutBiasAndStatisticsRanges) {
  auto model = Model::Create(ModelSpec{.name = "cnn_bn", .input_shape = {1, 28, 28}});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->num_params(), 859146);
  // conv1 832 | bn1 gamma, beta [832, 896) stats [896, 960) | conv2 [960, 52224) | bn2 ...
  const auto stats = (*model)->StatRanges();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0], (std::pair<int64_t, int64_t>{896, 960}));
  EXPECT_EQ(stats[1], (std::pair<int64_t, int64_t>{52352, 52480}));
  EXPECT_EQ(stats[2].second - stats[2].first, 512);
  int64_t stat_total = 0;
  for (const auto& [b, e] : stats) stat_total += e - b;
  EXPECT_EQ(stat_total, 704);
  const auto biases = (*model)->BiasRanges();
  // conv1's b, bn1's gamma and beta (ending where its statistics begin), conv2's b, ...
  ASSERT_EQ(biases.size(), 7u);
  EXPECT_EQ(biases[0], (std::pair<int64_t, int64_t>{800, 832}));
  EXPECT_EQ(biases[1], (std::pair<int64_t, int64_t>{832, 896}));
  for (const auto& [b, e] : biases)
    for (const auto& [sb, se] : stats) EXPECT_TRUE(e <= sb || b >= se);
  auto plain = Model::Create(ModelSpec{.name = "cnn", .input_shape = {1, 28, 28}});
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE((*plain)->StatRanges().empty());
  auto flat = Model::Create(ModelSpec{.name = "cnn_bn", .input_shape = {784}});
  EXPECT_EQ(flat.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(flat.status().message().find("--model=cnn_bn"), std::string::npos) << flat.status();
}

// Tower::ForwardBackward writes grad_scale * batch * (mean, unbiased var) of each batch-norm
// layer's input into the statistics slots; Tower::Forward (evaluation) reads the moving ones.
TEST(CnnBnModel, TowerWritesWeightedStatisticsAndEvaluatesWithTheMovingOnes) {
  auto model =
      Model::Create(ModelSpec{.name = "cnn_bn", .input_shape = {1, 6, 6}, .num_classes = 3});
  ASSERT_TRUE(model.ok()) << model.status();
  const Model& m = **model;
  std::vector<float> params(m.num_params());
  m.InitParams(7, absl::MakeSpan(params));
  CpuBackend backend;
  auto tower = Tower::Create(&m, &backend, 4);
  ASSERT_TRUE(tower.ok());
  const std::vector<float> x = Random(4 * 36, 31, 0.5f, 1.0f);
  const std::vector<int32_t> labels = {0, 1, 2, 1};
  std::vector<float> grad(m.num_params(), kNaN);
  const float grad_scale = 1.0f / 10.0f;  // as a sync tower of 4 examples in a global batch of 10
  ASSERT_TRUE(
      (*tower)
          ->ForwardBackward(params.data(), 4, x.data(), labels.data(), grad_scale, grad.data())
          .ok());
  for (float g : grad) ASSERT_TRUE(std::isfinite(g));
  // The first batch norm sees conv1's output: recompute it with the conv layer's own Forward
  // (tested against its float64 reference elsewhere) and the statistics in float64.
  const auto& conv1 = *m.layers()[0];
  std::vector<float> c1(4 * NumElements(conv1.output_shape()));
  ASSERT_TRUE(conv1.name().find("conv") == 0);
  ASSERT_TRUE(
      const_cast<Layer&>(conv1).Forward(backend, 4, params.data(), x.data(), c1.data()).ok());
  const BatchNormShape s{.batch = 4, .channels = 32, .spatial = 36};
  const RefStats st = ReferenceStats(s, D(c1));
  const auto [begin, end] = m.StatRanges()[0];
  const double weight = grad_scale * 4.0;
  for (int64_t c = 0; c < 32; ++c) {
    EXPECT_NEAR(grad[begin + c], weight * st.mean[c], 1e-6 * (1 + std::abs(st.mean[c])));
    EXPECT_NEAR(grad[begin + 32 + c], weight * st.unbiased_var[c], 1e-6 * (1 + st.unbiased_var[c]));
  }
  // Evaluation: the logits depend on the moving statistics (a batch-statistics forward would
  // ignore them), and one example evaluates.
  auto logits = (*tower)->Forward(params.data(), 1, x.data());
  ASSERT_TRUE(logits.ok());
  const std::vector<float> before(*logits, *logits + 3);
  for (int64_t i = begin; i < begin + 32; ++i) params[i] += 0.5f;  // moving mean of bn1
  logits = (*tower)->Forward(params.data(), 1, x.data());
  ASSERT_TRUE(logits.ok());
  EXPECT_NE(std::vector<float>(*logits, *logits + 3), before);
}

}  // namespace
}  // namespace hogwild
