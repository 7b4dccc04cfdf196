// Stale synchronous parallel (sync/stale_synchronous.h): the clock gap never exceeds the bound,
// waiting workers are released by the slowest one's progress, by a finished worker and by
// Cancel(), and whole runs with any bound finish and train every batch once. (One worker equals
// sequential SGD bitwise: tests/async_equivalence_test.cc; failures and stops of every worker:
// tests/fault_injection_test.cc.)
#include "sync/stale_synchronous.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "sync/parameter_store.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

constexpr double kWatchdogS = 20.0;

// W workers take `steps` steps each on a [P] model. Worker 0 does not start until every other
// worker is blocked on the bound (or, were the policy broken, has finished), so the others run
// as far ahead as the policy lets them. After every BeginStep the worker checks its clock gap
// against the slowest; the gap can only shrink between the policy's admission and the check
// (only the others' clocks move), so a gap above the bound here is one the policy let through.
TEST(StaleSynchronous, NoWorkerStartsAStepMoreThanTheBoundAheadOfTheSlowest) {
  constexpr int kWorkers = 3;
  constexpr int64_t kSteps = 25;
  for (int64_t bound : {0, 1, 3}) {
    SCOPED_TRACE(absl::StrFormat("bound %d", bound));
    ParameterStore store(8);
    StaleSynchronous policy(&store, kWorkers, SgdOptions{}, bound);
    std::atomic<int> finished_others{0};
    std::atomic<int64_t> max_gap{0};
    bool others_blocked = false;
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        if (w == 0) {
          while (policy.num_waiting() < kWorkers - 1 && finished_others.load() < kWorkers - 1) {
            std::this_thread::yield();
          }
          others_blocked = policy.num_waiting() == kWorkers - 1;
        }
        const std::vector<float> grad(8, 0.01f);
        for (int64_t s = 0; s < kSteps; ++s) {
          ASSERT_TRUE(policy.BeginStep(w).ok());
          const int64_t gap = policy.clock(w) - policy.min_clock();
          int64_t seen = max_gap.load();
          while (gap > seen && !max_gap.compare_exchange_weak(seen, gap)) {
          }
          ASSERT_TRUE(policy.FinishStep(w, DeviceSpan<const float>(grad.data(), 8), 0.1f).ok());
        }
        ASSERT_TRUE(policy.WorkerDone(w).ok());
        if (w != 0) ++finished_others;
      });
    }
    testing::WithWatchdog(kWatchdogS, "ssp workers", [&] {
      for (std::thread& t : threads) t.join();
      return 0;
    });
    EXPECT_TRUE(others_blocked) << "the fast workers were never held back";
    // The fast workers ran right up to the bound: the check above is not vacuous.
    EXPECT_EQ(max_gap.load(), bound);
    EXPECT_EQ(store.version(), static_cast<uint64_t>(kWorkers * kSteps));
    for (int w = 0; w < kWorkers; ++w) EXPECT_EQ(policy.clock(w), kSteps);
  }
}

TEST(StaleSynchronous, AFinishedWorkerNoLongerHoldsTheOthersBack) {
  ParameterStore store(4);
  StaleSynchronous policy(&store, 2, SgdOptions{}, /*staleness_bound=*/0);
  const std::vector<float> grad(4, 0.0f);
  const DeviceSpan<const float> g(grad.data(), 4);
  ASSERT_TRUE(policy.BeginStep(1).ok());
  ASSERT_TRUE(policy.FinishStep(1, g, 0.1f).ok());
  // Worker 1 is one step ahead of worker 0, which has no data: without WorkerDone(0) the next
  // BeginStep(1) would wait forever.
  ASSERT_TRUE(policy.WorkerDone(0).ok());
  auto params =
      testing::WithWatchdog(kWatchdogS, "after WorkerDone", [&] { return policy.BeginStep(1); });
  EXPECT_TRUE(params.ok()) << params.status();
}

TEST(StaleSynchronous, CancelReleasesAWorkerWaitingOnTheBound) {
  ParameterStore store(4);
  StaleSynchronous policy(&store, 2, SgdOptions{}, /*staleness_bound=*/0);
  const std::vector<float> grad(4, 0.0f);
  ASSERT_TRUE(policy.BeginStep(1).ok());
  ASSERT_TRUE(policy.FinishStep(1, DeviceSpan<const float>(grad.data(), 4), 0.1f).ok());
  absl::Status waited;
  std::thread ahead([&] { waited = policy.BeginStep(1).status(); });
  while (policy.num_waiting() == 0) std::this_thread::yield();
  policy.Cancel();
  testing::WithWatchdog(kWatchdogS, "cancelled waiter", [&] {
    ahead.join();
    return 0;
  });
  EXPECT_EQ(waited.code(), absl::StatusCode::kCancelled) << waited;
  EXPECT_EQ(policy.BeginStep(0).status().code(), absl::StatusCode::kCancelled);
}

TrainerOptions SspOptions(int workers, int64_t bound) {
  TrainerOptions o;
  o.mode = Mode::kSsp;
  o.num_workers = workers;
  o.staleness_bound = bound;
  o.batch_size = 4;
  o.epochs = 3;
  o.lr.base_lr = 0.05f;
  o.sgd.momentum = 0.5f;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.eval_every_epochs = 0;
  return o;
}

// 203 examples over 4 workers in batches of 2: shards of 50 and 51 examples, so 25 or 26 steps
// an epoch: unequal step counts, which a bound of 0 must survive (a finished worker releases
// the others); the largest bound never waits (async).
TEST(StaleSynchronous, RunsWithAnyBoundTrainEveryBatchOnce) {
  const Dataset data = testing::SyntheticDataset(203, 6, 3, 9);
  for (int64_t bound : {int64_t{0}, int64_t{1}, int64_t{3}, kMaxStalenessBound}) {
    SCOPED_TRACE(absl::StrFormat("bound %d", bound));
    TrainerOptions o = SspOptions(4, bound);
    o.batch_size = 2;
    auto result =
        testing::WithWatchdog(kWatchdogS, "ssp run", [&] { return Train(o, data, Dataset()); });
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->mode, Mode::kSsp);
    EXPECT_EQ(result->examples, 203 * 3);
    // Shards 50, 51, 51, 51 (floor splits) in batches of 2: 25 + 26 * 3 steps an epoch.
    EXPECT_EQ(result->steps, 3 * (25 + 26 * 3));
  }
}

TEST(StaleSynchronous, BadOptionsAreRefusedByName) {
  const Dataset data = testing::SyntheticDataset(40, 4, 2, 1);
  TrainerOptions o = SspOptions(2, -1);
  auto result = Train(o, data, Dataset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            absl::StrFormat("TrainerOptions::staleness_bound=-1 is out of range; it must be in "
                            "[0, %d]",
                            kMaxStalenessBound));
  o = SspOptions(2, 1);
  o.checkpoint_dir = "/tmp/unused";
  result = Train(o, data, Dataset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "TrainerOptions::checkpoint_dir: ssp writes no checkpoints for dense networks yet (its "
            "state has no checkpoint format); checkpoints are for async and sync");
  o = SspOptions(2, 1);
  o.mode = Mode::kAsync;
  result = Train(o, data, Dataset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "TrainerOptions::staleness_bound=1 has no effect in async mode; it bounds the clock "
            "gap of ssp mode only");
}

}  // namespace
}  // namespace hogwild
