// SIGINT/SIGTERM become an orderly stop (issue 5): the flag is set by the signal, training
// finishes its current step, writes a checkpoint and returns OK with stopped_early, and the run
// resumes from it.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cli/stop_signal.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

TEST(StopOnSignals, FirstSignalSetsTheFlagAndCallsBack) {
  for (int signo : {SIGINT, SIGTERM}) {
    // on_first runs on the watcher thread after the flag is set, for the first signal only.
    std::promise<int> first_seen;
    std::atomic<int> calls{0};
    auto stop = StopOnSignals::Install(/*exit_on_second=*/false, [&](int s) {
      if (calls.fetch_add(1) == 0) first_seen.set_value(s);
    });
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_FALSE((*stop)->stop_requested().load());
    EXPECT_EQ(StopOnSignals::Install(false, nullptr).status().code(),
              absl::StatusCode::kFailedPrecondition);
    ASSERT_EQ(kill(getpid(), signo), 0);  // process-directed, like a user's kill or Ctrl-C
    std::future<int> seen = first_seen.get_future();
    // The limit only bounds a hang: the watcher reacts in microseconds.
    ASSERT_EQ(seen.wait_for(std::chrono::seconds(30)), std::future_status::ready)
        << "the signal was never honoured";
    EXPECT_EQ(seen.get(), signo);
    EXPECT_TRUE((*stop)->stop_requested().load());
    EXPECT_EQ((*stop)->signal(), signo);
    // A second signal without exit_on_second changes nothing (and does not kill the test).
    // raise() runs the handler before it returns, so the signal's byte is in the watcher's pipe
    // ahead of the destructor's shutdown byte: once `stop` is gone the watcher has handled it.
    ASSERT_EQ(raise(signo), 0);
    EXPECT_EQ((*stop)->signal(), signo);
    stop->reset();
    EXPECT_EQ(calls.load(), 1) << "the second signal was taken as a first one";
  }
}

// exit_on_second: the same signal twice at once (GNU timeout's child-then-group delivery) is one
// stop request; a later repeat, or another signal, ends the process with 128 + its number.
TEST(StopOnSignalsDeathTest, ADuplicateIsOneRequestAndARealSecondSignalExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto run = [](int first, int second, std::chrono::milliseconds gap) {
    auto stop = StopOnSignals::Install(/*exit_on_second=*/true, nullptr);
    if (!stop.ok()) _exit(2);
    // raise() runs the handler before it returns, so the records are in the pipe in this order,
    // ahead of the destructor's shutdown record: the watcher has handled both once `stop` is gone.
    raise(first);
    std::this_thread::sleep_for(gap);
    raise(second);
    stop->reset();
    _exit(0);
  };
  const auto window = std::chrono::nanoseconds(StopOnSignals::kDuplicateWindowNs);
  EXPECT_EXIT(run(SIGTERM, SIGTERM, std::chrono::milliseconds(0)), ::testing::ExitedWithCode(0),
              "");
  EXPECT_EXIT(run(SIGINT, SIGINT, std::chrono::milliseconds(0)), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(run(SIGTERM, SIGTERM,
                  std::chrono::duration_cast<std::chrono::milliseconds>(window) +
                      std::chrono::milliseconds(50)),
              ::testing::ExitedWithCode(128 + SIGTERM), "second signal");
  EXPECT_EXIT(run(SIGTERM, SIGINT, std::chrono::milliseconds(0)),
              ::testing::ExitedWithCode(128 + SIGINT), "second signal");
}

TEST(StopOnSignals, UninstallRestoresThePreviousHandler) {
  static std::atomic<int> previous_handler_calls{0};
  struct sigaction action {};
  action.sa_handler = [](int) { previous_handler_calls++; };
  sigemptyset(&action.sa_mask);
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGTERM, &action, &old), 0);
  {
    auto stop = StopOnSignals::Install(false, nullptr);
    ASSERT_TRUE(stop.ok());
  }
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
