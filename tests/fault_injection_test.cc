// No hang, no lost error (DESIGN.md invariant 6, issue 5): a worker that fails at step k (an
// error status, an exception, a NaN/Inf) stops every worker, in every mode (kModes), for any
// worker count,
// and the first error reaches the caller with the worker id and the step. Every run is wrapped
// in a watchdog: a hang fails the test instead of stalling the suite.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/finite_check.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

// Bounds a hang only: generous for TSan; a healthy run takes milliseconds.
constexpr double kWatchdogS = 20.0;

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(base ? base : "/tmp") / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

// Every update policy; a new one is added here and so runs every test below.
constexpr Mode kModes[] = {Mode::kAsync, Mode::kSync, Mode::kSsp, Mode::kBackup, Mode::kLocalSgd};

TrainerOptions Options(Mode mode, int workers) {
  TrainerOptions o;
  o.mode = mode;
  // ssp: the tightest bound that still lets workers drift apart.
  if (mode == Mode::kSsp) o.staleness_bound = 1;
  // backup: one gradient dropped per step where there are two or more workers.
  if (mode == Mode::kBackup) o.backup_workers = workers > 1 ? 1 : 0;
  // local_sgd: averagings within the failures' steps.
  if (mode == Mode::kLocalSgd) o.average_every = 2;
  o.num_workers = workers;
  o.batch_size = 4;
  o.epochs = 2;
  o.lr.base_lr = 0.05f;
  o.sgd.momentum = 0.5f;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.eval_every_epochs = 0;
  o.prefetch = 2;
  return o;
}

const Dataset& SmallData() {
  static const Dataset* data = new Dataset(testing::SyntheticDataset(200, 8, 3, 7));
  return *data;
}

struct FaultCase {
  Mode mode;
  int workers;
  int failing_worker;
  int64_t step;
  bool exception;
  bool checkpoints;
};

std::string Name(const FaultCase& c) {
  return absl::StrFormat("%s W=%d worker %d fails at step %d by %s%s", ModeName(c.mode),
                         c.workers, c.failing_worker, c.step,
                         c.exception ? "exception" : "status",
                         c.checkpoints ? " (checkpointing)" : "");
}

std::vector<FaultCase> AllCases() {
  std::vector<FaultCase> cases;
  for (Mode mode : kModes) {
    for (int w = 1; w <= 4; ++w) {
      for (int64_t step : {0, 1, 7}) {
        for (int failing : {0, w - 1}) {
          for (bool exception : {false, true}) {
            cases.push_back({mode, w, failing, step, exception,
                             SupportsCheckpoints(mode) && (step + failing) % 2 == 1});
            if (failing == w - 1 && w == 1) break;
          }
          if (w == 1) break;
        }
      }
    }
  }
  return cases;
}

TEST(FaultInjection, AnyWorkerFailingAtAnyStepStopsEveryoneAndReportsIt) {
  for (const FaultCase& c : AllCases()) {
    SCOPED_TRACE(Name(c));
    TrainerOptions o = Options(c.mode, c.workers);
    if (c.checkpoints) {
      o.checkpoint_dir = TempDir("fault");
      o.checkpoint_every_steps = 2;
    }
    o.step_hook = [&](int worker, int64_t step) -> absl::Status {
      if (worker != c.failing_worker || step != c.step) return absl::OkStatus();
      if (c.exception) throw std::runtime_error("injected exception");
      return absl::InternalError("injected failure");
    };
    auto result = testing::WithWatchdog(kWatchdogS, Name(c),
                                        [&] { return Train(o, SmallData(), Dataset()); });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
    const std::string where = absl::StrFormat("worker %d, step %d:", c.failing_worker, c.step);
    EXPECT_NE(result.status().message().find(where), std::string::npos) << result.status();
    EXPECT_NE(result.status().message().find(c.exception ? "exception: injected exception"
                                                         : "injected failure"),
              std::string::npos)
        << result.status();
    if (c.checkpoints) {
      // No checkpoint after the failure: whatever is on disk is a complete, earlier state.
      auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
      ASSERT_TRUE(kept.ok()) << kept.status();
      if (kept->has_value()) {
        EXPECT_NE(result.status().message().find("last good checkpoint"), std::string::npos);
        if (c.mode == Mode::kSync) {
          EXPECT_LE((*kept)->global_step, c.step);
        }
      }
    }
  }
}

TEST(FaultInjection, StopRequestEndsEveryWorkerCleanly) {
  for (Mode mode : kModes) {
    for (int w = 1; w <= 4; ++w) {
      for (bool checkpoints : {false, true}) {
        if (checkpoints && !SupportsCheckpoints(mode)) continue;
        const std::string name =
            absl::StrFormat("%s W=%d stop%s", ModeName(mode), w, checkpoints ? " + ckpt" : "");
        SCOPED_TRACE(name);
        TrainerOptions o = Options(mode, w);
        if (checkpoints) o.checkpoint_dir = TempDir("stop");
        std::atomic<bool> stop{false};
        o.stop_requested = &stop;
        // The last worker asks for the stop; with backup workers, whichever reaches step 5
        // first, since the others never wait for a late one (under a sanitizer the last worker
        // can be so late that the run ends before its step 5).
        o.step_hook = [&](int worker, int64_t step) {
          if ((worker == w - 1 || mode == Mode::kBackup) && step == 5) stop = true;
          return absl::OkStatus();
        };
        auto result =
            testing::WithWatchdog(kWatchdogS, name, [&] { return Train(o, SmallData(), Dataset()); });
        ASSERT_TRUE(result.ok()) << result.status();
        EXPECT_TRUE(result->stopped_early);
        auto full = Train(Options(mode, w), SmallData(), Dataset());
        ASSERT_TRUE(full.ok());
        EXPECT_LT(result->steps, full->steps);
        if (checkpoints) {
          auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
          ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
          EXPECT_EQ((*kept)->global_step, result->steps);
          EXPECT_EQ(result->last_checkpoint_step, result->steps);
        }
      }
    }
  }
}

TEST(FaultInjection, DivergenceStopsTrainingAndKeepsTheLastGoodCheckpoint) {
  for (Mode mode : kModes) {
    for (int w : {1, 3}) {
      const std::string name = absl::StrFormat("%s W=%d diverging", ModeName(mode), w);
      SCOPED_TRACE(name);
      TrainerOptions o = Options(mode, w);
      const bool checkpoints = SupportsCheckpoints(mode);
      if (checkpoints) {
        o.checkpoint_dir = TempDir("diverge");
        o.checkpoint_every_steps = 1;
      }
      o.epochs = 50;
      o.sgd.momentum = 0.0f;
      o.lr.base_lr = 1e30f;  // the parameters overflow within a few steps
      auto result =
          testing::WithWatchdog(kWatchdogS, name, [&] { return Train(o, SmallData(), Dataset()); });
      ASSERT_FALSE(result.ok());
      const std::string message(result.status().message());
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << message;
      // Whichever check found it (the loss, the gradient, the checkpoint write), one wording.
      EXPECT_NE(message.find("training diverged: "), std::string::npos) << message;
      if (checkpoints) {
        auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
        ASSERT_TRUE(kept.ok()) << kept.status();  // finite parameters or the load would refuse
      }
      EXPECT_NE(message.find("global step"), std::string::npos) << message;
      // A checkpoint does not record the learning rate; the worker's and final checks name it.
      if (message.find("previous checkpoint is kept") == std::string::npos) {
        EXPECT_NE(message.find("learning rate 1e+30"), std::string::npos) << message;
      }
    }
  }
}

// The worker's guard checks a step's loss and gradient, not the parameters its update makes: a
// divergence on the very last step is caught by the final check, before the final checkpoint
// would replace the last good one and before a result is reported.
TEST(FaultInjection, DivergenceOnTheLastStepIsAnErrorAndKeepsTheLastGoodCheckpoint) {
  TrainerOptions o = Options(Mode::kAsync, 1);
  o.checkpoint_dir = TempDir("diverge_last");
  o.batch_size = static_cast<int64_t>(SmallData().size());  // one step per epoch
  o.sgd.momentum = 0.0f;
  o.epochs = 1;
  ASSERT_TRUE(Train(o, SmallData(), SmallData()).ok());
  o.resume = true;
  o.epochs = 2;
  // Step 1's update sends the parameters to ~1e37: finite, but the outputs overflow.
  o.lr.base_lr = 1e38f;
  auto result = testing::WithWatchdog(kWatchdogS, "diverge on the last step",
                                      [&] { return Train(o, SmallData(), SmallData()); });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "training diverged: the final test loss is nan at global step 2 (learning rate "
            "1e+38); lower --lr (or --weight_decay or --momentum); the last good checkpoint "
            "(global step 1) is kept in " +
                o.checkpoint_dir + ": resume from it with --resume");
  auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
  EXPECT_EQ((*kept)->global_step, 1);
}

// The gradient check on its own: parameters whose loss is finite but whose gradient overflows,
// so the loss check cannot be what stops the run. mlp 8 -> 8 -> 3 (dense W [in, out] then b),
// all-zero features, every label 1: hidden unit 0 is b1[0] = 1e-37, whose weights to classes 0
// and 1 are +-3.4e38, so the logits are (34, -34, 0) (loss 68 per example) while each
// example's gradient for b1[0] is 3.4e38 (0.25 + 0.25) = 1.7e38 and the batch of 4 sums to inf.
TEST(FaultInjection, AGradientThatOverflowsWithAFiniteLossStopsTraining) {
  Dataset data;
  data.name = "zeros";
  data.example_shape = {8};
  data.num_classes = 3;
  data.features.assign(4 * 8, 0.0f);
  data.labels.assign(4, 1);
  TrainerOptions o = Options(Mode::kAsync, 1);
  o.checkpoint_dir = TempDir("gradient_overflow");
  o.batch_size = 4;
  o.sgd.momentum = 0.0f;
  o.epochs = 1;
  ASSERT_TRUE(Train(o, data, Dataset()).ok());
  auto read = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(read.ok() && read->has_value()) << read.status();
  Checkpoint c = **read;
  ASSERT_EQ(c.params.size(), 99u);
  std::fill(c.params.begin(), c.params.end(), 0.0f);
  c.params[64] = 1e-37f;    // b1[0]
  c.params[72] = 3.4e38f;   // W2[0][0]
  c.params[73] = -3.4e38f;  // W2[0][1]
  ASSERT_TRUE(WriteCheckpoint(o.checkpoint_dir, c).ok());
  o.resume = true;
  o.epochs = 2;
  auto result = testing::WithWatchdog(kWatchdogS, "gradient overflow",
                                      [&] { return Train(o, data, Dataset()); });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "worker 0, step 1: training diverged: gradient element 64 is inf at global step 1 "
            "(learning rate 0.05); lower --lr (or --weight_decay or --momentum); the last good "
            "checkpoint (global step 1) is kept in " +
                o.checkpoint_dir + ": resume from it with --resume");
}

TEST(FaultInjection, EmptyShardsAndShortLastBatchesNeverDeadlock) {
  struct Case {
    Mode mode;
    int workers;
    int64_t examples, batch;
  };
  // async: 3 examples for 4 workers leaves worker 0 with an empty shard (a batch larger than
  // every shard is refused, so B=1 there); sync: the last global batch of 203 = 20 * 10 + 3
  // examples has fewer examples than the 7 workers.
  const Case cases[] = {
      {Mode::kAsync, 4, 3, 1},       {Mode::kAsync, 4, 5, 2},     {Mode::kSsp, 4, 3, 1},
      {Mode::kSsp, 4, 5, 2},         {Mode::kSync, 7, 203, 10},   {Mode::kSync, 4, 3, 2},
      {Mode::kSync, 3, 1, 1},        {Mode::kBackup, 7, 203, 10}, {Mode::kBackup, 4, 3, 2},
      {Mode::kLocalSgd, 7, 203, 10}, {Mode::kLocalSgd, 3, 4, 3}};
  for (const Case& c : cases) {
    for (bool checkpoints : {false, true}) {
      if (checkpoints && !SupportsCheckpoints(c.mode)) continue;
      const std::string name = absl::StrFormat("%s W=%d N=%d B=%d", ModeName(c.mode), c.workers,
                                               c.examples, c.batch);
      SCOPED_TRACE(name);
      TrainerOptions o = Options(c.mode, c.workers);
      o.batch_size = c.batch;
      o.epochs = 3;
      if (checkpoints) {
        o.checkpoint_dir = TempDir("shards");
        o.checkpoint_every_steps = 1;
      }
      const Dataset data = testing::SyntheticDataset(c.examples, 4, 2, 3);
      auto result = testing::WithWatchdog(kWatchdogS, name, [&] { return Train(o, data, Dataset()); });
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->examples, c.examples * o.epochs);
      if (checkpoints) {
        auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
        ASSERT_TRUE(kept.ok() && kept->has_value());
        EXPECT_EQ((*kept)->global_step, result->steps);  // the final checkpoint
      }
    }
  }
}

TEST(FiniteCheck, FindsTheFirstNanOrInfinityAnywhere) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(3000, 1.0f);
  v[5] = std::numeric_limits<float>::max();
  v[6] = -std::numeric_limits<float>::max();
  v[7] = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(FirstNonFinite(v), -1);
  EXPECT_EQ(FirstNonFinite({}), -1);
  for (size_t at : {size_t{0}, size_t{1023}, size_t{1024}, size_t{2999}}) {
    for (float bad : {nan, -nan, inf, -inf}) {
      std::vector<float> w = v;
      w[at] = bad;
      w[2999] = nan;  // a later one must not hide the first
      EXPECT_EQ(FirstNonFinite(w), static_cast<int64_t>(at)) << at << " " << bad;
    }
  }
}

// A second, independent check of the vectorized scan: against std::isfinite for every sign,
// every exponent at its edges (0, 1, 0x7e, 0xfe, 0xff) and mantissa extremes, placed at the
// edges of the 1024-value blocks and in the tail, then for random bit patterns anywhere.
TEST(FiniteCheck, AgreesWithStdIsfiniteForEveryBitPatternClass) {
  auto naive = [](const std::vector<float>& v) -> int64_t {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) return static_cast<int64_t>(i);
    }
    return -1;
  };
  auto from_bits = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  };
  std::vector<float> v(2050, 0.5f);  // two blocks and a tail of 2
  for (uint32_t sign : {0u, 1u}) {
    for (uint32_t exponent : {0u, 1u, 0x7eu, 0xfeu, 0xffu}) {
      for (uint32_t mantissa : {0u, 1u, 0x400000u, 0x7fffffu}) {
        const float value = from_bits(sign << 31 | exponent << 23 | mantissa);
        for (size_t at : {0, 1, 511, 1023, 1024, 1500, 2047, 2048, 2049}) {
          std::vector<float> w = v;
          w[at] = value;
          ASSERT_EQ(FirstNonFinite(w), naive(w))
              << std::hex << sign << " " << exponent << " " << mantissa << std::dec << " at " << at;
        }
      }
    }
  }
  std::mt19937 rng(3);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<float> w = v;
    for (int k = 0; k < 3; ++k) w[rng() % w.size()] = from_bits(static_cast<uint32_t>(rng()));
    ASSERT_EQ(FirstNonFinite(w), naive(w)) << "trial " << trial;
  }
}

TEST(Divergence, InfiniteLossStopsTrainingNamingTheStepAndSuggestingALowerLr) {
  const Dataset data = testing::SyntheticDataset(64, 8, 3, 2);
  for (Mode mode : kModes) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions o;
    o.model = ModelSpec{.name = "mlp", .hidden = {8}};
    o.eval_every_epochs = 0;
    o.mode = mode;
    o.num_workers = SplitsGlobalBatch(mode) ? 2 : 1;
    o.batch_size = 8;
    o.epochs = 3;
    o.lr.base_lr = 1e30f;
    // Step 0 starts from the initial parameters (finite loss); its update sends them to ~1e29,
    // so the loss of step 1 is no longer finite.
    auto result = testing::WithWatchdog(kWatchdogS, ModeName(mode),
                                        [&] { return Train(o, data, Dataset()); });
    testing::ExpectError(result.status(), absl::StatusCode::kInvalidArgument,
                         {"diverged", "step 1", "lower --lr"});
  }
}

}  // namespace
}  // namespace hogwild
