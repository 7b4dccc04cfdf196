// The straggler model (trainer/straggler.h): delays exactly as specified and reproducible, the
// options checked by name, the delay's sleep cancellable, and a run's log recording the delays.
#include "trainer/straggler.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using testing::ExpectError;

TEST(StragglerModel, ASlowedWorkerWaitsFactorMinusOneTimesItsStep) {
  StragglerModel model(StragglerOptions{.slowdown = {{1, 3.0}, {2, 1.5}}}, 7);
  EXPECT_TRUE(model.enabled());
  for (int64_t step : {0, 1, 99}) {
    EXPECT_EQ(model.DelayAfter(0, step, absl::Milliseconds(10)), absl::ZeroDuration());
    EXPECT_EQ(model.DelayAfter(1, step, absl::Milliseconds(10)), absl::Milliseconds(20));
    EXPECT_EQ(model.DelayAfter(2, step, absl::Milliseconds(10)), absl::Milliseconds(5));
  }
  EXPECT_FALSE(StragglerModel(StragglerOptions{}, 7).enabled());
}

TEST(StragglerModel, RandomDelaysAreReproducibleAndFollowTheirDistribution) {
  const StragglerOptions options{.delay_probability = 0.25, .delay_mean = absl::Milliseconds(40)};
  const StragglerModel a(options, 11), b(options, 11), other_seed(options, 12);
  int delayed = 0, differ = 0;
  double sum_ms = 0.0;
  constexpr int kWorkers = 4, kSteps = 10000, kDraws = kWorkers * kSteps;
  for (int w = 0; w < kWorkers; ++w) {
    for (int64_t s = 0; s < kSteps; ++s) {
      const absl::Duration d = a.DelayAfter(w, s, absl::Milliseconds(1));
      ASSERT_EQ(d, b.DelayAfter(w, s, absl::Milliseconds(1))) << "not a function of the seed";
      differ += d != other_seed.DelayAfter(w, s, absl::Milliseconds(1));
      if (d > absl::ZeroDuration()) {
        ++delayed;
        sum_ms += absl::ToDoubleMilliseconds(d);
      }
    }
  }
  // Binomial(40000, 0.25): sd 87, so 5 sd is 435 draws. Exponential mean over ~10,000 draws: sd
  // of the mean 0.4 ms, so 5 sd is 2 ms.
  EXPECT_NEAR(delayed, 0.25 * kDraws, 435);
  EXPECT_NEAR(sum_ms / delayed, 40.0, 2.0);
  EXPECT_GT(differ, kDraws / 10);
}

TEST(StragglerOptions, SpecsParseAndBadOnesAreRefusedByName) {
  auto slow = ParseSlowdown("stragglers", "1:3,0:1.5");
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(*slow, (std::vector<std::pair<int, double>>{{1, 3.0}, {0, 1.5}}));
  for (const char* bad : {"x", "1", "1:", ":2", "1:2:3", "1:fast", "1:3;2:2"}) {
    ExpectError(ParseSlowdown("stragglers", bad).status(), absl::StatusCode::kInvalidArgument,
                {std::string("--stragglers=") + bad, "WORKER:FACTOR"});
  }
  StragglerOptions o;
  ASSERT_TRUE(ParseRandomDelay("straggler_delay", "50ms@0.1", o).ok());
  EXPECT_EQ(o.delay_mean, absl::Milliseconds(50));
  EXPECT_EQ(o.delay_probability, 0.1);
  for (const char* bad : {"50@0.1", "50ms", "50ms@", "@0.1", "50ms@x"}) {
    ExpectError(ParseRandomDelay("straggler_delay", bad, o), absl::StatusCode::kInvalidArgument,
                {std::string("--straggler_delay=") + bad, "MEAN@PROBABILITY"});
  }

  const struct {
    StragglerOptions options;
    std::vector<std::string> parts;
  } cases[] = {
      {{.slowdown = {{2, 2.0}}}, {"slowdown worker=2", "[0, 1]"}},
      {{.slowdown = {{-1, 2.0}}}, {"slowdown worker=-1"}},
      {{.slowdown = {{0, 0.5}}}, {"slowdown factor=0.5", "[1, 1000]"}},
      {{.slowdown = {{0, NAN}}}, {"slowdown factor=nan"}},
      {{.slowdown = {{0, 2.0}, {0, 3.0}}}, {"worker 0 twice"}},
      {{.delay_probability = 1.5, .delay_mean = absl::Milliseconds(1)},
       {"delay_probability=1.5", "[0, 1]"}},
      {{.delay_probability = 0.5}, {"delay_mean=0", "(0, 1m]"}},
      {{.delay_probability = 0.5, .delay_mean = absl::Hours(1)}, {"delay_mean=1h"}},
      {{.delay_mean = absl::Milliseconds(5)}, {"delay_mean=5ms has no effect"}},
  };
  for (const auto& c : cases) {
    const absl::Status status = ValidateStragglerOptions(c.options, 2);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    for (const std::string& part : c.parts) {
      EXPECT_NE(status.message().find(part), std::string::npos)
          << "no '" << part << "' in: " << status;
    }
  }
  EXPECT_TRUE(
      ValidateStragglerOptions(
          {.slowdown = {{1, 1000.0}}, .delay_probability = 1.0, .delay_mean = absl::Minutes(1)}, 2)
          .ok());
}

TEST(DelayGate, CancelAndStopEndALongDelayAtOnce) {
  for (bool by_stop : {false, true}) {
    std::atomic<bool> stop{false};
    DelayGate gate(&stop);
    testing::WithWatchdog(20, "a cancelled 1 h delay", [&] {
      std::thread sleeper([&] { gate.SleepFor(absl::Hours(1)); });
      if (by_stop) {
        stop = true;
      } else {
        gate.Cancel();
        gate.Cancel();  // idempotent
      }
      sleeper.join();
      return 0;
    });
  }
}

std::string TempPath(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path path = std::filesystem::path(base ? base : "/tmp") / name;
  std::filesystem::remove_all(path);
  return path.string();
}

// Every train row of the slowed worker records a delay, and no row of the other worker does,
// in every mode; with random delays on every step, every train row records one.
TEST(Stragglers, TheLogRecordsEachStepsDelay) {
  const Dataset train = testing::SyntheticDataset(96, 6, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kSync, Mode::kSsp, Mode::kBackup, Mode::kLocalSgd}) {
    for (bool random : {false, true}) {
      SCOPED_TRACE(std::string(ModeName(mode)) + (random ? " random" : " slowdown"));
      TrainerOptions o;
      o.mode = mode;
      o.num_workers = 2;
      o.batch_size = 8;
      o.epochs = 1;
      o.eval_every_epochs = 0;
      o.model = ModelSpec{.name = "mlp", .hidden = {8}};
      o.log_every_steps = 1;
      o.log_path = TempPath("straggler_log.csv");
      if (random) {
        o.stragglers = {.delay_probability = 1.0, .delay_mean = absl::Microseconds(200)};
      } else {
        o.stragglers = {.slowdown = {{1, 3.0}}};
      }
      auto result = testing::WithWatchdog(30, "a run with stragglers",
                                          [&] { return Train(o, train, Dataset()); });
      ASSERT_TRUE(result.ok()) << result.status();
      std::ifstream in(o.log_path);
      std::string line;
      std::getline(in, line);
      const std::vector<std::string> header = absl::StrSplit(line, ',');
      const size_t delay_column =
          std::find(header.begin(), header.end(), "delay_s") - header.begin();
      ASSERT_LT(delay_column, header.size()) << line;
      int rows[2] = {0, 0};
      while (std::getline(in, line)) {
        const std::vector<std::string> f = absl::StrSplit(line, ',');
        ASSERT_EQ(f.size(), header.size()) << line;
        if (f[1] != "train") continue;
        int worker = 0;
        double delay = 0.0;
        ASSERT_TRUE(absl::SimpleAtoi(f[5], &worker) && absl::SimpleAtod(f[delay_column], &delay));
        ++rows[worker];
        if (random || worker == 1) {
          EXPECT_GT(delay, 0.0) << line;
        } else {
          EXPECT_EQ(delay, 0.0) << line;
        }
      }
      EXPECT_GT(rows[0], 0);
      EXPECT_GT(rows[1], 0);
    }
  }
}

// A worker that fails while the others sit in long delays stops the run at once: the seed is
// chosen (from the model itself) so that workers 0 and 2 wait over 30 s after their first step
// and worker 1 not at all before its failure, so only the gate's cancellation can end the run
// within the watchdog's 20 s.
TEST(Stragglers, AFailingWorkerEndsTheOthersDelays) {
  const StragglerOptions stragglers{.delay_probability = 0.5, .delay_mean = absl::Seconds(60)};
  uint64_t seed = 1;
  auto fits = [&](uint64_t s) {
    const StragglerModel m(stragglers, s);
    const absl::Duration t = absl::Milliseconds(1);
    return m.DelayAfter(0, 0, t) > absl::Seconds(30) && m.DelayAfter(2, 0, t) > absl::Seconds(30) &&
           m.DelayAfter(1, 0, t) == absl::ZeroDuration() &&
           m.DelayAfter(1, 1, t) == absl::ZeroDuration();
  };
  while (!fits(seed)) ++seed;
  const Dataset train = testing::SyntheticDataset(96, 6, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kSync, Mode::kSsp, Mode::kLocalSgd}) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions o;
    o.mode = mode;
    o.num_workers = 3;
    o.batch_size = 6;
    o.epochs = 1;
    o.seed = seed;
    o.eval_every_epochs = 0;
    o.model = ModelSpec{.name = "mlp", .hidden = {8}};
    o.stragglers = stragglers;
    // Async and SSP (bound 3): worker 1 runs steps 0 and 1 undelayed and fails before step 2.
    // Sync and local SGD: it fails before step 1, whose barrier (local SGD: averaging every
    // step) the delayed workers would reach only after their delays. (Backup workers would not
    // wait for them at all.)
    const int64_t fail_at = mode == Mode::kAsync || mode == Mode::kSsp ? 2 : 1;
    if (mode == Mode::kLocalSgd) o.average_every = 1;
    o.step_hook = [fail_at](int worker, int64_t step) {
      return worker == 1 && step == fail_at ? absl::InternalError("injected") : absl::OkStatus();
    };
    auto result = testing::WithWatchdog(20, "a failure among delayed workers",
                                        [&] { return Train(o, train, Dataset()); });
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find("injected"), std::string::npos) << result.status();
  }
}

}  // namespace
}  // namespace hogwild
