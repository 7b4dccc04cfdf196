// The sparse SGD step (sparse/sparse_sgd.h): gradients against dense finite differences, the
// batch-1 step against the minibatch path, and updates confined to the example's support.
#include "sparse/sparse_sgd.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "sparse/linear_loss.h"
#include "sparse/sparse_dataset.h"

namespace hogwild::sparse {
namespace {

// N examples over D features, each with a few random non-zeros, labels +1/-1.
SparseDataset RandomData(int n, int d, int per_row, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  SparseDataset data;
  data.num_features = d;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> row;
    for (int j = 0; j < d; ++j) {
      if (static_cast<int>(rng() % d) < per_row) row.push_back(j);
    }
    for (int32_t j : row) {
      data.indices.push_back(j);
      data.values.push_back(value(rng));
    }
    data.row_offsets.push_back(static_cast<int64_t>(data.indices.size()));
    data.labels.push_back(rng() % 2 ? 1.0f : -1.0f);
  }
  return data;
}

// The mean loss over `rows` at dense weights w, in double: the definition of linear_loss.h.
double MeanLoss(LinearModel model, const std::vector<double>& w, const SparseDataset& data,
                const std::vector<int64_t>& rows) {
  double total = 0.0;
  for (int64_t i : rows) {
    double m = 0.0;
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      m += w[data.indices[k]] * data.values[k];
    }
    const double z = SignedLabel(data.labels[i]) * m;
    total += model == LinearModel::kHinge ? std::max(0.0, 1.0 - z) : std::log1p(std::exp(-z));
  }
  return total / rows.size();
}

TEST(SparseGradient, MatchesDenseFiniteDifferencesForBothModels) {
  const SparseDataset data = RandomData(12, 30, 6, 7);
  ASSERT_TRUE(ValidateSparseDataset(data).ok());
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.7f);
  std::vector<float> w(30);
  for (float& x : w) x = normal(rng);
  const std::vector<int64_t> rows = {0, 3, 4, 7, 11};
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    SCOPED_TRACE(LinearModelName(model));
    SparseGradient gradient(30);
    double loss = 0.0;
    for (int64_t i : rows)
      loss += AddExample(model, data, i, 1.0f / rows.size(), w.data(), gradient);
    std::vector<double> wd(w.begin(), w.end());
    EXPECT_NEAR(loss / rows.size(), MeanLoss(model, wd, data, rows), 1e-5);
    // Every coordinate of the dense gradient: the touched ones against central differences, the
    // others must be untouched and have zero derivative.
    std::vector<bool> touched(30, false);
    for (int32_t j : gradient.touched()) touched[j] = true;
    for (int j = 0; j < 30; ++j) {
      const double h = 1e-4;
      std::vector<double> plus = wd, minus = wd;
      plus[j] += h;
      minus[j] -= h;
      const double numeric =
          (MeanLoss(model, plus, data, rows) - MeanLoss(model, minus, data, rows)) / (2 * h);
      const double analytic = touched[j] ? gradient.value(j) : 0.0;
      EXPECT_NEAR(analytic, numeric, 1e-4 + 1e-3 * std::fabs(numeric)) << "coordinate " << j;
      bool in_support = false;
      for (int64_t i : rows) {
        for (int32_t k : data.row_indices(i)) in_support |= k == j;
      }
      EXPECT_EQ(touched[j], in_support) << "coordinate " << j;
    }
  }
}

TEST(SparseGradient, LogisticLossIsStableForLargeMargins) {
  for (float m : {-200.0f, -30.0f, 0.0f, 30.0f, 200.0f}) {
    const LossAndSlope ls = LinearLoss(LinearModel::kLogistic, m, 1.0f);
    EXPECT_TRUE(std::isfinite(ls.loss) && std::isfinite(ls.slope)) << m;
    EXPECT_NEAR(ls.loss, std::log1p(std::exp(-static_cast<double>(m))), 1e-4 * (1 + std::fabs(m)));
    EXPECT_NEAR(ls.slope, -1.0 / (1.0 + std::exp(static_cast<double>(m))), 1e-6);
  }
}

TEST(SparseSgdStep, EqualsTheMinibatchPathOfOneExampleBitwiseAndTouchesOnlyItsSupport) {
  const SparseDataset data = RandomData(20, 50, 8, 11);
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    for (float weight_decay : {0.0f, 0.01f}) {
      const SgdMomentumFn sgd{.lr = 0.3f, .momentum = 0.0f, .weight_decay = weight_decay};
      std::vector<float> a(50, 0.25f), b(50, 0.25f);
      SparseGradient gradient(50);
      for (int64_t i = 0; i < data.num_examples(); ++i) {
        const std::vector<float> before = a;
        SparseSgdStep(model, sgd, data, i, a.data());
        gradient.Clear();
        AddExample(model, data, i, 1.0f, b.data(), gradient);
        ApplySparseGradient(sgd, gradient, b.data());
        ASSERT_EQ(a, b) << "example " << i;
        std::vector<bool> support(50, false);
        for (int32_t j : data.row_indices(i)) support[j] = true;
        for (int j = 0; j < 50; ++j) {
          if (!support[j]) {
            ASSERT_EQ(a[j], before[j]) << "example " << i << " coordinate " << j;
          }
        }
      }
    }
  }
}

TEST(EvaluateLinear, CountsAccuracyAndMeanLoss) {
  SparseDataset data;
  data.num_features = 2;
  data.row_offsets = {0, 1, 2};
  data.indices = {0, 1};
  data.values = {1.0f, 1.0f};
  data.labels = {1.0f, 0.0f};                 // 0 is the negative class
  const std::vector<float> w = {2.0f, 3.0f};  // right on the first, wrong on the second
  const LinearEvaluation hinge = EvaluateLinear(LinearModel::kHinge, w, data);
  EXPECT_DOUBLE_EQ(hinge.accuracy, 0.5);
  EXPECT_DOUBLE_EQ(hinge.mean_loss, (0.0 + 4.0) / 2);
  const LinearEvaluation logistic = EvaluateLinear(LinearModel::kLogistic, w, data);
  EXPECT_NEAR(logistic.mean_loss, (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(3.0))) / 2,
              1e-12);
}

}  // namespace
}  // namespace hogwild::sparse
