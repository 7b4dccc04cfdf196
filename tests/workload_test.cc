// The Workload seam (trainer/workloads/workload.h) against independent references: each
// workload's gradient against float64 finite differences of its loss written from the
// definitions, its regularizer term exactly, and the sparse workloads' step against their
// trainers (one worker, index order) bitwise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sparse/linear_loss.h"
#include "sparse/matrix_factorization.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "trainer/data/dataset.h"
#include "trainer/workloads/dense_workload.h"
#include "trainer/workloads/mf_workload.h"
#include "trainer/workloads/sparse_linear.h"

namespace hogwild {
namespace {

using sparse::LinearModel;
using sparse::Ratings;
using sparse::SparseDataset;

SparseDataset SyntheticSparse(int64_t n, int64_t d, int nnz, uint64_t seed = 1) {
  absl::StatusOr<sparse::SyntheticData> out = sparse::GenerateRcv1Like(
      {.num_examples = n, .num_features = d, .mean_nnz = nnz, .noise_std = 0.1, .seed = seed});
  EXPECT_TRUE(out.ok()) << out.status();
  return std::move(out->data);
}

Ratings RandomRatings(int64_t users, int64_t items, int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Ratings r{.num_users = users, .num_items = items};
  for (int64_t k = 0; k < count; ++k) {
    r.users.push_back(static_cast<int32_t>(rng() % users));
    r.items.push_back(static_cast<int32_t>(rng() % items));
    r.values.push_back(static_cast<float>(1 + rng() % 5));
  }
  return r;
}

std::vector<float> RandomParams(int64_t p, float scale, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(p));
  for (float& x : v) x = u(rng);
  return v;
}

// d(loss sum / denominator)/d(params[j]) by central differences of `loss` (float64).
template <typename Loss>
double CentralDifference(const Loss& loss, std::vector<double> at, int64_t j, double h) {
  at[j] += h;
  const double up = loss(at);
  at[j] -= 2 * h;
  const double down = loss(at);
  return (up - down) / (2 * h);
}

std::vector<double> ToDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

constexpr float kWd = 0.3f;  // weight decay of the finite-difference tests

TEST(SparseLinearWorkload, GradientMatchesFloat64FiniteDifferences) {
  const SparseDataset data = SyntheticSparse(40, 30, 6);
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    SCOPED_TRACE(sparse::LinearModelName(model));
    absl::StatusOr<std::unique_ptr<SparseLinearWorkload>> workload =
        SparseLinearWorkload::Create(model, &data, nullptr, kWd);
    ASSERT_TRUE(workload.ok()) << workload.status();
    auto worker = (*workload)->CreateWorker(8);
    ASSERT_TRUE(worker.ok());
    const std::vector<int64_t> rows = {3, 7, 7, 12, 30};  // a repeated row counts twice
    const int64_t denominator = 8;
    const std::vector<float> params = RandomParams(30, 0.3f, 5);
    std::vector<float> grad(30, 99.0f);
    absl::StatusOr<double> loss_sum = (*worker)->Gradient(
        params, {.rows = rows, .denominator = denominator}, absl::MakeSpan(grad));
    ASSERT_TRUE(loss_sum.ok()) << loss_sum.status();
    // The loss from the definitions (linear_loss.h), in double, with (regularized) and without
    // each example's regularizer (kWd / 2) sum over its support of w_j^2.
    auto loss = [&](const std::vector<double>& w, bool regularized) {
      double sum = 0.0;
      for (int64_t i : rows) {
        double m = 0.0, squares = 0.0;
        for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
          m += w[data.indices[k]] * data.values[k];
          squares += w[data.indices[k]] * w[data.indices[k]];
        }
        const double y = data.labels[i] > 0 ? 1.0 : -1.0;
        sum += model == LinearModel::kHinge ? std::max(0.0, 1.0 - y * m)
                                            : std::log1p(std::exp(-y * m));
        if (regularized) sum += 0.5 * kWd * squares;
      }
      return sum;
    };
    EXPECT_NEAR(*loss_sum, loss(ToDouble(params), false), 1e-5);
    auto objective = [&](const std::vector<double>& w) { return loss(w, true); };
    for (int64_t j = 0; j < 30; ++j) {
      const double expected = CentralDifference(objective, ToDouble(params), j, 1e-6) / denominator;
      EXPECT_NEAR(grad[j], expected, 1e-5) << "coordinate " << j;
    }
  }
}

TEST(SparseLinearWorkload, WeightDecayIsOnTheTouchedCoordinatesOnly) {
  const SparseDataset data = SyntheticSparse(20, 50, 4);
  const float wd = 0.25f;
  auto plain = SparseLinearWorkload::Create(LinearModel::kLogistic, &data, nullptr, 0.0f);
  auto decayed = SparseLinearWorkload::Create(LinearModel::kLogistic, &data, nullptr, wd);
  ASSERT_TRUE(plain.ok() && decayed.ok());
  auto a = (*plain)->CreateWorker(2);
  auto b = (*decayed)->CreateWorker(2);
  const std::vector<int64_t> rows = {1, 2};
  const std::vector<float> params = RandomParams(50, 1.0f, 9);
  std::vector<float> ga(50), gb(50);
  ASSERT_TRUE((*a)->Gradient(params, {rows, 2}, absl::MakeSpan(ga)).ok());
  ASSERT_TRUE((*b)->Gradient(params, {rows, 2}, absl::MakeSpan(gb)).ok());
  std::vector<int> examples(50, 0);  // the batch's examples touching each coordinate
  for (int64_t i : rows) {
    for (int32_t j : data.row_indices(i)) ++examples[j];
  }
  for (int j = 0; j < 50; ++j) {
    EXPECT_EQ(gb[j], examples[j] > 0 ? ga[j] + wd * params[j] * (examples[j] * 0.5f) : 0.0f) << j;
  }
}

// One worker of TrainSparse in index order (shuffle off) is sequential SGD: its sync mode's
// minibatch step (without weight decay, which it applies once per update where the workload's
// is per example) and its batch-1 steps, sync's and async's fused one, with weight decay. The
// workload's gradient with plain SGD (the update's weight decay 0) is the same arithmetic,
// bitwise.
TEST(SparseLinearWorkload, OneWorkerEqualsTheSparseTrainerBitwise) {
  const SparseDataset data = SyntheticSparse(300, 120, 8);
  struct Case {
    Mode mode;
    int batch;
    float weight_decay;
  };
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    for (const Case& c :
         {Case{Mode::kSync, 7, 0.0f}, Case{Mode::kSync, 1, 0.01f}, Case{Mode::kAsync, 1, 0.01f}}) {
      SCOPED_TRACE(absl::StrFormat("%s, %s, batch %d, weight decay %g",
                                   sparse::LinearModelName(model), ModeName(c.mode), c.batch,
                                   c.weight_decay));
      const sparse::SparseTrainOptions options{.model = model,
                                               .mode = c.mode,
                                               .num_workers = 1,
                                               .batch_size = c.batch,
                                               .epochs = 2,
                                               .lr = 0.3f,
                                               .weight_decay = c.weight_decay,
                                               .shuffle = false};
      absl::StatusOr<sparse::SparseTrainResult> trained =
          sparse::TrainSparse(options, data, nullptr);
      ASSERT_TRUE(trained.ok()) << trained.status();
      auto workload = SparseLinearWorkload::Create(model, &data, nullptr, options.weight_decay);
      ASSERT_TRUE(workload.ok());
      auto worker = (*workload)->CreateWorker(options.batch_size);
      std::vector<float> params(static_cast<size_t>((*workload)->num_params()));
      (*workload)->InitParams(options.seed, absl::MakeSpan(params));
      std::vector<float> grad(params.size());
      const SgdMomentumFn sgd{.lr = options.lr, .momentum = 0.0f, .weight_decay = 0.0f};
      const int64_t n = data.num_examples();
      for (int epoch = 0; epoch < options.epochs; ++epoch) {
        for (int64_t start = 0; start < n; start += options.batch_size) {
          std::vector<int64_t> rows(
              static_cast<size_t>(std::min(n, start + options.batch_size) - start));
          std::iota(rows.begin(), rows.end(), start);
          ASSERT_TRUE((*worker)
                          ->Gradient(params, {rows, static_cast<int64_t>(rows.size())},
                                     absl::MakeSpan(grad))
                          .ok());
          float velocity = 0.0f;
          for (size_t j = 0; j < params.size(); ++j) params[j] = sgd(params[j], grad[j], velocity);
        }
      }
      ASSERT_EQ(params.size(), trained->weights.size());
      for (size_t j = 0; j < params.size(); ++j) {
        ASSERT_EQ(params[j], trained->weights[j]) << "coordinate " << j;
      }
    }
  }
}

// Invariant 3 at the workload level: the gradients of two towers over a split of the rows, each
// scaled by the whole batch, sum to the gradient of the whole batch (regularizers included).
TEST(Workloads, TowerGradientsAddUpToTheGlobalBatchGradient) {
  const SparseDataset data = SyntheticSparse(60, 40, 6);
  const Ratings ratings = RandomRatings(6, 5, 60, 8);
  auto linear = SparseLinearWorkload::Create(LinearModel::kLogistic, &data, nullptr, kWd);
  auto mf = MfWorkload::Create(3, &ratings, nullptr, kWd);
  ASSERT_TRUE(linear.ok() && mf.ok());
  for (const Workload* workload :
       {static_cast<const Workload*>(linear->get()), static_cast<const Workload*>(mf->get())}) {
    SCOPED_TRACE(workload->name());
    std::vector<float> params = RandomParams(workload->num_params(), 0.5f, 3);
    auto worker = workload->CreateWorker(12);
    const std::vector<int64_t> rows = {2, 5, 9, 9, 14, 20, 21, 33, 40, 41, 50, 59};
    const size_t p = params.size();
    std::vector<float> whole(p), first(p), second(p);
    ASSERT_TRUE(worker.ok());
    ASSERT_TRUE((*worker)->Gradient(params, {rows, 12}, absl::MakeSpan(whole)).ok());
    const absl::Span<const int64_t> all(rows);
    ASSERT_TRUE((*worker)->Gradient(params, {all.subspan(0, 5), 12}, absl::MakeSpan(first)).ok());
    ASSERT_TRUE((*worker)->Gradient(params, {all.subspan(5), 12}, absl::MakeSpan(second)).ok());
    for (size_t j = 0; j < p; ++j) {
      EXPECT_NEAR(first[j] + second[j], whole[j], 1e-6f * (1 + std::fabs(whole[j]))) << j;
    }
  }
}

TEST(MfWorkload, GradientMatchesFloat64FiniteDifferences) {
  const Ratings ratings = RandomRatings(5, 4, 30, 2);
  const int rank = 3;
  auto workload = MfWorkload::Create(rank, &ratings, nullptr, kWd);
  ASSERT_TRUE(workload.ok()) << workload.status();
  auto worker = (*workload)->CreateWorker(10);
  const std::vector<int64_t> rows = {0, 4, 4, 9, 17, 22};
  const int64_t denominator = 10;
  std::vector<float> params(static_cast<size_t>((*workload)->num_params()));
  (*workload)->InitParams(3, absl::MakeSpan(params));
  std::vector<float> grad(params.size(), 7.0f);
  absl::StatusOr<double> loss_sum =
      (*worker)->Gradient(params, {rows, denominator}, absl::MakeSpan(grad));
  ASSERT_TRUE(loss_sum.ok()) << loss_sum.status();
  const double mean = (*workload)->mean();
  // Each rating's loss, with (regularized) and without its (kWd / 2)(|p_u|^2 + |q_i|^2).
  auto loss = [&](const std::vector<double>& w, bool regularized) {
    double sum = 0.0;
    for (int64_t r : rows) {
      const double* p = w.data() + ratings.users[r] * rank;
      const double* q = w.data() + (ratings.num_users + ratings.items[r]) * rank;
      double prediction = mean, squares = 0.0;
      for (int f = 0; f < rank; ++f) {
        prediction += p[f] * q[f];
        squares += p[f] * p[f] + q[f] * q[f];
      }
      const double e = prediction - ratings.values[r];
      sum += 0.5 * e * e + (regularized ? 0.5 * kWd * squares : 0.0);
    }
    return sum;
  };
  EXPECT_NEAR(*loss_sum, loss(ToDouble(params), false), 1e-4);
  auto objective = [&](const std::vector<double>& w) { return loss(w, true); };
  for (size_t j = 0; j < params.size(); ++j) {
    const double expected =
        CentralDifference(objective, ToDouble(params), static_cast<int64_t>(j), 1e-6) / denominator;
    EXPECT_NEAR(grad[j], expected, 1e-5) << "parameter " << j;
  }
}

// One worker of the matrix-factorization trainer in rating order (shuffle off) is per-rating
// SGD; the workload's batch-1 gradient with plain SGD is the same arithmetic, bitwise.
TEST(MfWorkload, OneWorkerEqualsTheFactorizationTrainerBitwise) {
  const Ratings ratings = RandomRatings(30, 20, 400, 4);
  const sparse::MfOptions options{.rank = 4,
                                  .num_workers = 1,
                                  .epochs = 2,
                                  .lr = 0.02f,
                                  .weight_decay = 0.05f,
                                  .seed = 7,
                                  .shuffle = false};
  absl::StatusOr<sparse::MfResult> trained =
      sparse::TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(trained.ok()) << trained.status();
  auto workload = MfWorkload::Create(options.rank, &ratings, nullptr, options.weight_decay);
  ASSERT_TRUE(workload.ok());
  EXPECT_EQ((*workload)->mean(), trained->mean);
  auto worker = (*workload)->CreateWorker(1);
  std::vector<float> params(static_cast<size_t>((*workload)->num_params()));
  (*workload)->InitParams(options.seed, absl::MakeSpan(params));
  std::vector<float> grad(params.size());
  const SgdMomentumFn sgd{.lr = options.lr, .momentum = 0.0f, .weight_decay = 0.0f};
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    for (int64_t r = 0; r < ratings.size(); ++r) {
      const int64_t row[] = {r};
      ASSERT_TRUE((*worker)->Gradient(params, {row, 1}, absl::MakeSpan(grad)).ok());
      float velocity = 0.0f;
      for (size_t j = 0; j < params.size(); ++j) params[j] = sgd(params[j], grad[j], velocity);
    }
  }
  ASSERT_EQ(params.size(), trained->factors.size());
  for (size_t j = 0; j < params.size(); ++j) {
    ASSERT_EQ(params[j], trained->factors[j]) << "parameter " << j;
  }
  absl::StatusOr<EvalResult> rmse = (*workload)->Evaluate(params, Workload::Split::kTrain);
  ASSERT_TRUE(rmse.ok());
  EXPECT_EQ(rmse->loss, trained->epochs.back().train_loss);
}

// The dense workload's gradient is the network's: central differences of its own training-set
// loss (Evaluate on a set of exactly the batch's rows: the mean cross-entropy, in double over
// float32 forward passes) agree to the forward pass's float32 rounding.
TEST(DenseWorkload, GradientMatchesFiniteDifferencesOfItsLoss) {
  Dataset data{.name = "tiny", .example_shape = {1, 2, 3}, .num_classes = 3};
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal;
  for (int i = 0; i < 5; ++i) {
    for (int k = 0; k < 6; ++k) data.features.push_back(normal(rng));
    data.labels.push_back(i % 3);
  }
  auto workload = DenseWorkload::Create(ModelSpec{.name = "mlp", .hidden = {4}}, &data, nullptr);
  ASSERT_TRUE(workload.ok()) << workload.status();
  const int64_t p = (*workload)->num_params();
  std::vector<float> params(static_cast<size_t>(p));
  (*workload)->InitParams(1, absl::MakeSpan(params));
  auto worker = (*workload)->CreateWorker(5);
  std::vector<float> grad(params.size());
  const std::vector<int64_t> rows = {0, 1, 2, 3, 4};
  absl::StatusOr<double> loss_sum = (*worker)->Gradient(params, {rows, 5}, absl::MakeSpan(grad));
  ASSERT_TRUE(loss_sum.ok()) << loss_sum.status();
  auto loss = [&](const std::vector<double>& w) {
    std::vector<float> f(w.begin(), w.end());
    absl::StatusOr<EvalResult> e = (*workload)->Evaluate(f, Workload::Split::kTrain);
    EXPECT_TRUE(e.ok());
    return e->loss;  // the mean over the 5 rows = the loss sum / denominator
  };
  EXPECT_NEAR(*loss_sum / 5, loss(ToDouble(params)), 1e-5);
  for (int64_t j = 0; j < p; ++j) {
    const double expected = CentralDifference(loss, ToDouble(params), j, 1e-2);
    EXPECT_NEAR(grad[j], expected, 2e-3) << "parameter " << j;
  }
  EXPECT_FALSE((*workload)->Evaluate(params, Workload::Split::kTest).ok());
}

}  // namespace
}  // namespace hogwild
