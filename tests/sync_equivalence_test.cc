// Invariant 3 (DESIGN.md): sync with W workers and global batch B gives the parameters of one
// worker with batch B, for any W (uneven splits, W > B with empty shards), to float rounding;
// and two sync runs with the same seed are bitwise equal.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

TrainerOptions SyncOptions(int workers, int64_t global_batch) {
  TrainerOptions o;
  o.mode = Mode::kSync;
  o.num_workers = workers;
  o.batch_size = global_batch;
  o.epochs = 2;
  o.lr.base_lr = 0.1f;
  o.sgd.momentum = 0.9f;
  o.sgd.weight_decay = 1e-4f;
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.eval_every_epochs = 0;
  o.seed = 11;
  return o;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double{a[i]} - b[i]));
  return m;
}

class SyncEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(SyncEquivalence, WorkersMatchOneWorkerWithTheSameGlobalBatch) {
  const int workers = GetParam();
  // 203 examples, global batch 10: the last batch has 3 examples, so W = 4 and 7 also see
  // shards that are empty; 10 is not divisible by 3, 4 or 7.
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  const Dataset empty;
  auto reference = Train(SyncOptions(1, 10), train, empty);
  ASSERT_TRUE(reference.ok()) << reference.status();
  auto run = Train(SyncOptions(workers, 10), train, empty);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->steps, reference->steps);
  EXPECT_EQ(run->examples, reference->examples);
  // Different association of the per-tower gradient sums: a few ulps per step over 42 steps.
  EXPECT_LT(MaxAbsDiff(run->params, reference->params), 1e-4);
  // And training moved the parameters (the comparison is not vacuous).
  auto untrained = SyncOptions(1, 10);
  untrained.lr.base_lr = 1e-30f;
  auto init = Train(untrained, train, empty);
  ASSERT_TRUE(init.ok());
  EXPECT_GT(MaxAbsDiff(run->params, init->params), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Workers, SyncEquivalence, ::testing::Values(1, 2, 3, 4, 7));

TEST(SyncEquivalence, GlobalBatchSmallerThanWorkers) {
  const Dataset train = testing::SyntheticDataset(50, 6, 3, 9);
  auto reference = Train(SyncOptions(1, 3), train, Dataset());
  auto run = Train(SyncOptions(7, 3), train, Dataset());
  ASSERT_TRUE(reference.ok() && run.ok());
  EXPECT_LT(MaxAbsDiff(run->params, reference->params), 1e-4);
}

TEST(SyncEquivalence, SameSeedIsBitwiseReproducible) {
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  auto a = Train(SyncOptions(3, 10), train, Dataset());
  auto b = Train(SyncOptions(3, 10), train, Dataset());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->params, b->params);
}

}  // namespace
}  // namespace hogwild
