// Sync with backup workers (sync/backup_sync.h): with b = 0 it is sync mode bitwise; with b = 1
// the late gradient is dropped and the update is the example-weighted average of the others;
// a late worker catches up without blocking anyone; bad settings are refused by name. (Failures
// and stops of every worker: tests/fault_injection_test.cc.)
#include "sync/backup_sync.h"

#include <atomic>
#include <bit>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sync/parameter_store.h"
#include "tests/bitwise.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;

constexpr double kWatchdogS = 20.0;

TrainerOptions SyncLikeOptions(Mode mode, int workers) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = workers;
  o.batch_size = 10;
  o.epochs = 3;
  o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                    .base_lr = 0.1f,
                    .decay_rate = 0.5f,
                    .decay_steps = 20};
  o.sgd = SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f};
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.eval_every_epochs = 0;
  return o;
}

TEST(BackupSync, NoBackupWorkersIsSyncModeBitwise) {
  // 203 examples in global batches of 10: uneven splits across 3 workers and a short last
  // batch of 3 every epoch.
  const Dataset data = testing::SyntheticDataset(203, 8, 3, 21);
  for (int workers : {1, 3}) {
    SCOPED_TRACE(absl::StrFormat("%d workers", workers));
    auto sync = Train(SyncLikeOptions(Mode::kSync, workers), data, Dataset());
    auto backup = Train(SyncLikeOptions(Mode::kBackup, workers), data, Dataset());
    ASSERT_TRUE(sync.ok() && backup.ok()) << sync.status() << backup.status();
    EXPECT_EQ(backup->mode, Mode::kBackup);
    EXPECT_EQ(backup->steps, sync->steps);
    EXPECT_EQ(CountBitwiseDifferences(backup->params, sync->params), 0);
  }
}

// Three workers, one backup: all three read the step's parameters, then workers 0 and 1 arrive
// and their update is applied before worker 2 even calls FinishStep (it waits for both to
// return), so worker 2 is late by construction and its gradient must be dropped.
TEST(BackupSync, TheLateGradientIsDroppedAndTheOthersAreAveragedByExamples) {
  constexpr int64_t kP = 5;
  ParameterStore store(kP);
  const std::vector<float> initial = {1.0f, -2.0f, 0.5f, 3.0f, 0.25f};
  std::copy(initial.begin(), initial.end(), store.unsafe_values().begin());
  BackupSync policy(&store, 3, SgdOptions{}, /*backup_workers=*/1);
  // Step batch of 10 examples: 3, 3 and 4 per worker; gradients pre-scaled by 1/10.
  const int64_t examples[3] = {3, 3, 4};
  const std::vector<std::vector<float>> grads = {{0.1f, 0.2f, -0.3f, 0.4f, 0.5f},
                                                 {-0.05f, 0.1f, 0.2f, 0.3f, -0.1f},
                                                 {9.0f, 9.0f, 9.0f, 9.0f, 9.0f}};
  constexpr float kLr = 0.5f;
  std::vector<StepStats> stats(3);
  for (int w = 0; w < 3; ++w) {
    ASSERT_TRUE(policy.SetStepExamples(w, examples[w], 10).ok());
    auto params = policy.BeginStep(w);
    ASSERT_TRUE(params.ok()) << params.status();
    // Every worker of step 0 reads the initial parameters.
    EXPECT_EQ(std::vector<float>(params->data(), params->data() + kP), initial);
  }
  auto finish = [&](int w) {
    auto s = policy.FinishStep(w, DeviceSpan<const float>(grads[w].data(), kP), kLr);
    ASSERT_TRUE(s.ok()) << s.status();
    stats[w] = *s;
  };
  testing::WithWatchdog(kWatchdogS, "backup step", [&] {
    std::thread first(finish, 0), second(finish, 1);
    first.join();
    second.join();
    finish(2);
    return 0;
  });
  EXPECT_FALSE(stats[0].dropped);
  EXPECT_FALSE(stats[1].dropped);
  EXPECT_TRUE(stats[2].dropped);
  EXPECT_EQ(policy.dropped(2), 1);
  EXPECT_EQ(policy.dropped(0), 0);
  EXPECT_EQ(store.version(), 1u);

  // The expected update, with the policy's float operations: the two gradients summed in worker
  // order, rescaled from the 10 examples of the step to the 6 used, one SGD step.
  const float rescale = 10.0f / 6.0f;
  const SgdMomentumFn sgd{kLr, 0.0f, 0.0f};
  std::vector<float> expected(kP);
  float unused_velocity = 0.0f;
  for (int64_t i = 0; i < kP; ++i) {
    const float g = (grads[0][i] + grads[1][i]) * rescale;
    expected[i] = sgd(initial[i], g, unused_velocity);
  }
  std::vector<float> got(kP);
  ASSERT_TRUE(policy.ReadParams(absl::MakeSpan(got)).ok());
  EXPECT_EQ(CountBitwiseDifferences(got, expected), 0);
  // Not vacuous: with worker 2's gradient in, or without the rescaling, it would differ.
  for (int64_t i = 0; i < kP; ++i) {
    EXPECT_NE(got[i], initial[i] - kLr * (grads[0][i] + grads[1][i] + grads[2][i]));
    EXPECT_NE(got[i], initial[i] - kLr * (grads[0][i] + grads[1][i]));
  }

  // The late worker's next step starts from the updated parameters.
  auto next = policy.BeginStep(2);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(std::vector<float>(next->data(), next->data() + kP), got);
}

TEST(BackupSync, CancelReleasesContributorsWaitingForTheStep) {
  ParameterStore store(4);
  BackupSync policy(&store, 3, SgdOptions{}, /*backup_workers=*/1);
  const std::vector<float> grad(4, 0.1f);
  ASSERT_TRUE(policy.BeginStep(0).ok());
  absl::Status waited;
  // One of the two gradients the step needs: worker 0 waits for a second.
  std::thread waiting([&] {
    waited = policy.FinishStep(0, DeviceSpan<const float>(grad.data(), 4), 0.1f).status();
  });
  policy.Cancel();
  testing::WithWatchdog(kWatchdogS, "cancelled contributor", [&] {
    waiting.join();
    return 0;
  });
  EXPECT_EQ(waited.code(), absl::StatusCode::kCancelled) << waited;
  EXPECT_EQ(store.version(), 0u);
}

// Through the trainer: the last worker is held at every step until the others have started the
// next one (so its gradient is always late), and the run still ends with every step taken.
TEST(BackupSync, ARunWithAPermanentStragglerTakesEveryStep) {
  constexpr int kWorkers = 3;
  const Dataset data = testing::SyntheticDataset(120, 6, 3, 4);
  TrainerOptions o = SyncLikeOptions(Mode::kBackup, kWorkers);
  o.backup_workers = 1;
  o.lr = LrSchedule{.base_lr = 0.1f};
  const int64_t steps_per_epoch = 12;  // 120 examples / 10
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> started(kWorkers, -1);  // guarded by mu
  bool cancelled = false;                      // guarded by mu
  o.step_hook = [&](int worker, int64_t step) -> absl::Status {
    std::unique_lock<std::mutex> lock(mu);
    started[worker] = step;
    cv.notify_all();
    if (worker != kWorkers - 1 || (step + 1) % steps_per_epoch == 0) return absl::OkStatus();
    // Hold the straggler until the others have started step + 1 (their step `step` is done).
    cv.wait(lock, [&] { return cancelled || (started[0] > step && started[1] > step); });
    return absl::OkStatus();
  };
  auto result = testing::WithWatchdog(kWatchdogS, "straggler run", [&] {
    auto r = Train(o, data, Dataset());
    std::lock_guard<std::mutex> lock(mu);
    cancelled = true;
    cv.notify_all();
    return r;
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->steps, steps_per_epoch * o.epochs);
}

TEST(BackupSync, BackupWorkersOutOfRangeAreRefusedByName) {
  const Dataset data = testing::SyntheticDataset(40, 4, 2, 1);
  for (int b : {3, 7, -1}) {
    TrainerOptions o = SyncLikeOptions(Mode::kBackup, 3);
    o.backup_workers = b;
    auto result = Train(o, data, Dataset());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().message(),
              absl::StrFormat("TrainerOptions::backup_workers=%d is out of range; it must be in "
                              "[0, 2] (fewer than the 3 workers)",
                              b));
  }
  TrainerOptions o = SyncLikeOptions(Mode::kSync, 3);
  o.backup_workers = 1;
  auto result = Train(o, data, Dataset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "TrainerOptions::backup_workers=1 has no effect in sync mode; it drops late "
            "gradients in backup mode only");
}

}  // namespace
}  // namespace hogwild
