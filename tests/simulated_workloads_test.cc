// The simulator on every workload (sim/simulator.h SimulateWorkload): the sparse linear models
// and matrix factorization learn under every simulated policy, and simulated sync with W towers
// equals one worker with the same global batch (the workloads' gradients add over towers).
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sparse/synthetic.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/workloads/mf_workload.h"
#include "trainer/workloads/sparse_linear.h"

namespace hogwild {
namespace {

using sparse::LinearModel;

sparse::SparseDataset SyntheticSparse(int64_t n, int64_t d, int nnz, uint64_t seed) {
  absl::StatusOr<sparse::SyntheticData> out = sparse::GenerateRcv1Like(
      {.num_examples = n, .num_features = d, .mean_nnz = nnz, .noise_std = 0.1, .seed = seed});
  EXPECT_TRUE(out.ok()) << out.status();
  return std::move(out->data);
}

sparse::Ratings LowRankRatings(int64_t users, int64_t items, int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> u(users), v(items);
  for (float& x : u) x = normal(rng);
  for (float& x : v) x = normal(rng);
  sparse::Ratings r{.num_users = users, .num_items = items};
  for (int64_t k = 0; k < count; ++k) {
    const int32_t a = static_cast<int32_t>(rng() % users), b = static_cast<int32_t>(rng() % items);
    r.users.push_back(a);
    r.items.push_back(b);
    r.values.push_back(3.0f + u[a] * v[b]);
  }
  return r;
}

SimOptions Options(Mode mode, int workers, int batch, float lr) {
  SimOptions o;
  o.trainer.mode = mode;
  o.trainer.num_workers = workers;
  o.trainer.batch_size = batch;
  o.trainer.epochs = 3;
  o.trainer.seed = 7;
  o.trainer.lr = LrSchedule{.base_lr = lr};
  o.trainer.eval_every_epochs = 0;
  o.trainer.eval_every_steps = 0;
  if (mode == Mode::kSsp) o.trainer.staleness_bound = 2;
  if (mode == Mode::kBackup) o.trainer.backup_workers = 1;
  if (mode == Mode::kLocalSgd) o.trainer.average_every = 4;
  o.compute.jitter = 0.3;
  return o;
}

double TrainLoss(const Workload& workload, const std::vector<float>& params) {
  absl::StatusOr<EvalResult> e = workload.Evaluate(params, Workload::Split::kTrain);
  EXPECT_TRUE(e.ok()) << e.status();
  return e->loss;
}

TEST(SimulatedWorkloads, SparseAndFactorizationLearnUnderEverySimulatedPolicy) {
  const sparse::SparseDataset data = SyntheticSparse(800, 300, 10, 3);
  const sparse::Ratings ratings = LowRankRatings(40, 30, 900, 5);
  auto svm = SparseLinearWorkload::Create(LinearModel::kHinge, &data, nullptr, 1e-4f);
  auto logreg = SparseLinearWorkload::Create(LinearModel::kLogistic, &data, nullptr, 0.0f);
  auto mf = MfWorkload::Create(4, &ratings, nullptr, 0.01f);
  ASSERT_TRUE(svm.ok() && logreg.ok() && mf.ok());
  struct Case {
    const Workload* workload;
    int batch;
    float lr;
    double lowered_to;  // the fraction of the initial training loss each policy must beat
  };
  for (const Case& c : {Case{svm->get(), 4, 0.2f, 0.8}, Case{logreg->get(), 4, 0.5f, 0.9},
                        Case{mf->get(), 1, 0.1f, 0.95}}) {
    std::vector<float> start(static_cast<size_t>(c.workload->num_params()));
    c.workload->InitParams(7, absl::MakeSpan(start));
    const double before = TrainLoss(*c.workload, start);
    for (Mode mode : {Mode::kAsync, Mode::kSync, Mode::kSsp, Mode::kBackup, Mode::kLocalSgd}) {
      SCOPED_TRACE(absl::StrFormat("%s, %s", c.workload->name(), ModeName(mode)));
      // The policies that split a global batch of 4 workers' batches take a quarter of the
      // steps: the linear scaling rule keeps their progress per epoch comparable.
      const bool global = SplitsGlobalBatch(mode);
      absl::StatusOr<SimResult> r = SimulateWorkload(
          Options(mode, 4, global ? 4 * c.batch : c.batch, global ? 4 * c.lr : c.lr), *c.workload);
      ASSERT_TRUE(r.ok()) << r.status();
      const double after = TrainLoss(*c.workload, r->params);
      EXPECT_LT(after, c.lowered_to * before) << "from " << before;
      if (mode == Mode::kAsync) {
        EXPECT_GT(r->staleness_max, 0u);
      }
    }
  }
}

TEST(SimulatedWorkloads, SyncTowersEqualOneWorkerWithTheGlobalBatch) {
  const sparse::SparseDataset data = SyntheticSparse(300, 120, 8, 9);
  const sparse::Ratings ratings = LowRankRatings(20, 15, 300, 2);
  auto svm = SparseLinearWorkload::Create(LinearModel::kHinge, &data, nullptr, 1e-3f);
  auto mf = MfWorkload::Create(3, &ratings, nullptr, 0.02f);
  ASSERT_TRUE(svm.ok() && mf.ok());
  for (const Workload* workload :
       {static_cast<const Workload*>(svm->get()), static_cast<const Workload*>(mf->get())}) {
    SCOPED_TRACE(workload->name());
    auto one = SimulateWorkload(Options(Mode::kSync, 1, 12, 0.1f), *workload);
    auto four = SimulateWorkload(Options(Mode::kSync, 4, 12, 0.1f), *workload);
    ASSERT_TRUE(one.ok() && four.ok()) << one.status() << four.status();
    ASSERT_EQ(one->steps, four->steps);
    for (size_t j = 0; j < one->params.size(); ++j) {
      ASSERT_NEAR(four->params[j], one->params[j], 1e-4f * (1 + std::fabs(one->params[j]))) << j;
    }
  }
}

// Invariant 2 for the sparse workloads: with one worker every simulated policy is sequential
// SGD over BatchPlan's data order (the workload's gradient, w <- w - lr g), bitwise.
TEST(SimulatedWorkloads, OneWorkerIsSequentialSgdUnderEveryPolicy) {
  const sparse::SparseDataset data = SyntheticSparse(200, 80, 6, 4);
  const sparse::Ratings ratings = LowRankRatings(12, 10, 150, 6);
  auto svm = SparseLinearWorkload::Create(LinearModel::kHinge, &data, nullptr, 1e-3f);
  auto mf = MfWorkload::Create(3, &ratings, nullptr, 0.02f);
  ASSERT_TRUE(svm.ok() && mf.ok());
  constexpr int kBatch = 3;
  constexpr float kLr = 0.05f;
  for (const Workload* workload :
       {static_cast<const Workload*>(svm->get()), static_cast<const Workload*>(mf->get())}) {
    SCOPED_TRACE(workload->name());
    SimOptions options = Options(Mode::kAsync, 1, kBatch, kLr);
    // The reference, written from the definitions with the workload's gradient only.
    std::vector<float> expected(static_cast<size_t>(workload->num_params()));
    workload->InitParams(options.trainer.seed, absl::MakeSpan(expected));
    std::vector<float> grad(expected.size());
    auto worker = workload->CreateWorker(kBatch);
    ASSERT_TRUE(worker.ok());
    const BatchPlan plan(workload->num_train_examples(),
                         PipelineOptions{.mode = Mode::kAsync,
                                         .num_workers = 1,
                                         .batch_size = kBatch,
                                         .epochs = options.trainer.epochs,
                                         .seed = options.trainer.seed});
    for (int64_t epoch = 0; epoch < options.trainer.epochs; ++epoch) {
      for (const auto& [rows, denominator] : plan.EpochBatches(0, plan.EpochPermutation(epoch))) {
        ASSERT_TRUE((*worker)->Gradient(expected, {rows, denominator}, absl::MakeSpan(grad)).ok());
        for (size_t j = 0; j < expected.size(); ++j) expected[j] -= kLr * grad[j];
      }
    }
    for (Mode mode : kPolicyModes) {
      SCOPED_TRACE(ModeName(mode));
      options = Options(mode, 1, kBatch, kLr);
      if (mode == Mode::kBackup) options.trainer.backup_workers = 0;
      if (mode == Mode::kSsp) options.trainer.staleness_bound = 0;
      absl::StatusOr<SimResult> r = SimulateWorkload(options, *workload);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->params.size(), expected.size());
      int differ = 0;
      for (size_t j = 0; j < expected.size(); ++j) differ += r->params[j] != expected[j];
      EXPECT_EQ(differ, 0);
    }
  }
}

}  // namespace
}  // namespace hogwild
