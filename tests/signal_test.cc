// SIGINT/SIGTERM become an orderly stop (issue 5): the flag is set by the signal, training
// finishes its current step, writes a checkpoint and returns OK with stopped_early, and the run
// resumes from it.
#include "trainer/cli/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

bool WaitFor(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return flag.load();
}

TEST(StopOnSignals, FirstSignalSetsTheFlagAndCallsBack) {
  for (int signo : {SIGINT, SIGTERM}) {
    std::atomic<int> seen{0};
    auto stop = StopOnSignals::Install(/*exit_on_second=*/false, [&](int s) { seen = s; });
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_FALSE((*stop)->stop_requested().load());
    EXPECT_EQ(StopOnSignals::Install(false, nullptr).status().code(),
              absl::StatusCode::kFailedPrecondition);
    ASSERT_EQ(kill(getpid(), signo), 0);  // process-directed, like a user's kill or Ctrl-C
    ASSERT_TRUE(WaitFor((*stop)->stop_requested()));
    EXPECT_EQ((*stop)->signal(), signo);
    while (seen.load() == 0) std::this_thread::yield();
    EXPECT_EQ(seen.load(), signo);
    // A second signal without exit_on_second changes nothing (and does not kill the test).
    ASSERT_EQ(kill(getpid(), signo), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ((*stop)->signal(), signo);
  }
}

TEST(StopOnSignals, UninstallRestoresThePreviousHandler) {
  static std::atomic<int> previous_handler_calls{0};
  struct sigaction action {};
  action.sa_handler = [](int) { previous_handler_calls++; };
  sigemptyset(&action.sa_mask);
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGTERM, &action, &old), 0);
  { auto stop = StopOnSignals::Install(false, nullptr); ASSERT_TRUE(stop.ok()); }
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(previous_handler_calls.load(), 1);
  sigaction(SIGTERM, &old, nullptr);
}

TEST(StopOnSignals, SignalDuringTrainingStopsAtAStepBoundaryWithACheckpoint) {
  const Dataset data = testing::SyntheticDataset(400, 8, 3, 2);
  const char* tmp = std::getenv("TEST_TMPDIR");
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    const std::string dir = std::string(tmp ? tmp : "/tmp") + "/signal_" + ModeName(mode);
    std::filesystem::remove_all(dir);
    auto stop = StopOnSignals::Install(false, nullptr);
    ASSERT_TRUE(stop.ok());
    TrainerOptions o;
    o.mode = mode;
    o.num_workers = 3;
    o.batch_size = 4;
    o.epochs = 1000;  // would take minutes: only the signal ends it
    o.model = ModelSpec{.name = "mlp", .hidden = {8}};
    o.eval_every_epochs = 0;
    o.checkpoint_dir = dir;
    o.stop_requested = &(*stop)->stop_requested();
    o.step_hook = [](int worker, int64_t step) {
      if (worker == 0 && step == 20) kill(getpid(), SIGTERM);
      return absl::OkStatus();
    };
    auto result = testing::WithWatchdog(30, "training stopped by SIGTERM",
                                        [&] { return Train(o, data, Dataset()); });
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->stopped_early);
    auto checkpoint = ReadLatestCheckpoint(dir);
    ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value()) << checkpoint.status();
    EXPECT_EQ((*checkpoint)->global_step, result->steps);
    EXPECT_EQ((*checkpoint)->params, result->params);
  }
}

}  // namespace
}  // namespace hogwild
