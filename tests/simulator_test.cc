// The simulation of sim/simulator.h: with one worker it is the real one-worker Hogwild! run
// (itself bitwise sequential SGD, tests/async_equivalence_test.cc), in sync mode it is the real
// tower-averaging run, without jitter the staleness is exactly W - 1 after the first W updates,
// a seed reproduces parameters, staleness and log bitwise, the compute-time model slows whom it
// names by the named factor (in simulated time, no sleeping), and bad options fail on one line.
#include "sim/simulator.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/compute_time.h"
#include "tests/bitwise.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;

using ::hogwild::testing::ExpectError;

TrainerOptions BaseOptions(Mode mode, int workers) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = workers;
  o.batch_size = 8;
  o.epochs = 2;
  o.seed = 1234;
  o.model = ModelSpec{.name = "mlp", .hidden = {16, 8}};
  o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                    .base_lr = 0.1f,
                    .decay_rate = 0.5f,
                    .decay_steps = 20};
  o.sgd = SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f};
  o.eval_every_epochs = 0;
  o.eval_every_steps = 0;
  return o;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Simulator, OneWorkerIsBitwiseTheRealOneWorkerRun) {
  // 203 examples, batch 8: every epoch ends with a short batch of 3.
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  const TrainerOptions options = BaseOptions(Mode::kAsync, 1);
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  SimOptions sim{.trainer = options};
  sim.compute.jitter = 0.5;  // time changes nothing with one worker
  auto simulated = Simulate(sim, train, Dataset());
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_EQ(simulated->steps, 2 * 26);
  EXPECT_EQ(simulated->steps, real->steps);
  EXPECT_EQ(simulated->examples, 2 * 203);
  EXPECT_EQ(simulated->staleness_max, 0u);
  EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
}

TEST(Simulator, OneLockedOrRoundRobinWorkerIsBitwiseTheRealOneWorkerRun) {
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  for (Mode mode : {Mode::kLocked, Mode::kRoundRobin}) {
    SCOPED_TRACE(ModeName(mode));
    const TrainerOptions options = BaseOptions(mode, 1);
    auto real = Train(options, train, Dataset());
    ASSERT_TRUE(real.ok()) << real.status();
    SimOptions sim{.trainer = options};
    sim.compute.jitter = 0.5;
    auto simulated = Simulate(sim, train, Dataset());
    ASSERT_TRUE(simulated.ok()) << simulated.status();
    EXPECT_EQ(simulated->steps, 2 * 26);
    EXPECT_EQ(simulated->steps, real->steps);
    EXPECT_EQ(simulated->staleness_max, 0u);
    EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
  }
}

// Simulated locked: the lock serializes whole steps, so no update is ever stale and the time is
// the sum of every step's compute time; FIFO service makes it a rotation while every worker
// has data.
TEST(Simulator, LockedUpdatesAreNeverStaleAndTheStepsDoNotOverlap) {
  constexpr int kWorkers = 4;
  const Dataset train = testing::SyntheticDataset(256, 6, 3, 9);
  SimOptions sim{.trainer = BaseOptions(Mode::kLocked, kWorkers)};
  sim.compute.step_time_s = 0.25;
  sim.compute.jitter = 0.3;
  auto result = Simulate(sim, train, Dataset());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->steps, 2 * 256 / 8);
  EXPECT_EQ(result->staleness_max, 0u);
  EXPECT_EQ(result->staleness_per_update, std::vector<uint32_t>(result->steps, 0));
  EXPECT_EQ(result->worker_steps, std::vector<int64_t>(kWorkers, 16));
  // Serial: about steps x the mean step time, where async's overlap would take a quarter.
  EXPECT_GT(result->simulated_time_s, 0.7 * 64 * 0.25);
}

// Simulated round_robin reads and applies as the real policy does, so with a constant learning
// rate (the real worker takes the rate of the global step it sees before its turn) the two are
// bitwise the same run, staleness included.
TEST(Simulator, RoundRobinIsBitwiseTheRealRoundRobinRun) {
  // 203 examples over 3 workers: shards of 67, 68, 68, so workers leave the rotation unevenly.
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  TrainerOptions options = BaseOptions(Mode::kRoundRobin, 3);
  options.lr = LrSchedule{.base_lr = 0.05f};
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  SimOptions sim{.trainer = options};
  sim.compute.jitter = 0.5;
  auto simulated = Simulate(sim, train, Dataset());
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_EQ(simulated->steps, real->steps);
  EXPECT_EQ(simulated->staleness_max, 2u);
  EXPECT_EQ(simulated->staleness_max, real->staleness_max);
  EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
}

TEST(Simulator, SyncIsBitwiseTheRealTowerAveragingRun) {
  // Global batch 10 over 4 towers (shards of 2 and 3) and a last batch of 3 (an empty shard).
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  TrainerOptions options = BaseOptions(Mode::kSync, 4);
  options.batch_size = 10;
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  SimOptions sim{.trainer = options};
  sim.compute = {.step_time_s = 0.01, .stragglers = {{2, 3.0}}};
  sim.allreduce_time_s = 0.002;
  auto simulated = Simulate(sim, train, Dataset());
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_EQ(simulated->steps, 2 * 21);
  EXPECT_EQ(simulated->steps, real->steps);
  EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
  // Not vacuous: the second epoch moved the parameters.
  sim.trainer.epochs = 1;
  auto one_epoch = Simulate(sim, train, Dataset());
  ASSERT_TRUE(one_epoch.ok()) << one_epoch.status();
  EXPECT_GT(CountBitwiseDifferences(simulated->params, one_epoch->params),
            static_cast<int64_t>(real->params.size()) / 2);
  // Every step waits for the straggler (3 x 10 ms), then the all-reduce.
  EXPECT_NEAR(simulated->simulated_time_s, 42 * (0.03 + 0.002), 1e-9);
  EXPECT_EQ(simulated->worker_steps, std::vector<int64_t>(4, 42));
}

// drop_last has one definition (BatchPlan): the real run and the simulation leave out the same
// short batches and end with bitwise the same parameters.
TEST(Simulator, DropLastLeavesOutTheSameBatchesAsTheRealTrainer) {
  // 203 examples at batch 10: 20 full steps and a short one of 3 per epoch.
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  for (const auto& [mode, workers] : {std::pair{Mode::kAsync, 1}, std::pair{Mode::kSync, 4}}) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions options = BaseOptions(mode, workers);
    options.batch_size = 10;
    options.drop_last = true;
    auto real = Train(options, train, Dataset());
    ASSERT_TRUE(real.ok()) << real.status();
    auto simulated = Simulate(SimOptions{.trainer = options}, train, Dataset());
    ASSERT_TRUE(simulated.ok()) << simulated.status();
    EXPECT_EQ(real->steps, 2 * 20);
    EXPECT_EQ(simulated->steps, 2 * 20);
    EXPECT_EQ(real->examples, 2 * 200);
    EXPECT_EQ(simulated->examples, 2 * 200);
    EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
  }
}

TEST(Simulator, WithoutJitterStalenessIsExactlyWMinusOneAfterTheFirstW) {
  constexpr int kWorkers = 8;
  // 256 examples: every worker's shard is 32 examples, 4 batches of 8 per epoch.
  const Dataset train = testing::SyntheticDataset(256, 6, 3, 9);
  SimOptions sim{.trainer = BaseOptions(Mode::kAsync, kWorkers)};
  sim.trainer.lr.base_lr = 0.01f;
  sim.compute.step_time_s = 0.25;
  auto result = Simulate(sim, train, Dataset());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->steps, 2 * 256 / 8);
  ASSERT_EQ(result->staleness_per_update.size(), static_cast<size_t>(result->steps));
  for (int64_t i = 0; i < result->steps; ++i) {
    // The first round's updates land in worker order, each on top of the earlier ones.
    const uint32_t expected = i < kWorkers ? static_cast<uint32_t>(i) : kWorkers - 1;
    EXPECT_EQ(result->staleness_per_update[i], expected) << "update " << i;
  }
  EXPECT_EQ(result->staleness_max, kWorkers - 1u);
  EXPECT_EQ(result->staleness_histogram[kWorkers - 1], result->steps - kWorkers + 1u);
  EXPECT_DOUBLE_EQ(result->simulated_time_s, 8 * 0.25);  // 8 steps per worker, in lockstep
  EXPECT_EQ(result->worker_steps, std::vector<int64_t>(kWorkers, 8));
}

// Without jitter every update after the first W has staleness W - 1 (above): a bound R = W - 2
// drops exactly those, a bound of W - 1 drops none and is bitwise the unbounded run, and the
// dropped updates' examples still count (they were computed).
TEST(Simulator, MaxDelayDropsTheUpdatesStalerThanItAndCountsTheirExamples) {
  constexpr int kWorkers = 8;
  const Dataset train = testing::SyntheticDataset(256, 6, 3, 9);
  SimOptions sim{.trainer = BaseOptions(Mode::kAsync, kWorkers)};
  sim.trainer.lr.base_lr = 0.01f;
  sim.compute.step_time_s = 0.25;
  auto unbounded = Simulate(sim, train, Dataset());
  ASSERT_TRUE(unbounded.ok()) << unbounded.status();
  sim.trainer.sgd.max_delay = kWorkers - 1;
  auto lenient = Simulate(sim, train, Dataset());
  ASSERT_TRUE(lenient.ok()) << lenient.status();
  EXPECT_EQ(CountBitwiseDifferences(lenient->params, unbounded->params), 0);
  EXPECT_EQ(lenient->dropped, std::vector<int64_t>(kWorkers, 0));

  sim.trainer.sgd.max_delay = kWorkers - 2;
  auto strict = Simulate(sim, train, Dataset());
  ASSERT_TRUE(strict.ok()) << strict.status();
  // Which updates drop depends on the drops before them (a dropped one advances no version):
  // count them from the result and check what must hold.
  int64_t dropped = 0;
  for (int64_t d : strict->dropped) dropped += d;
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(strict->steps + dropped, 2 * 256 / 8);
  EXPECT_EQ(strict->examples, unbounded->examples);
  EXPECT_LE(strict->staleness_max, static_cast<uint64_t>(kWorkers - 2));
  EXPECT_GT(CountBitwiseDifferences(strict->params, unbounded->params), 0);
  EXPECT_NE(FormatSimSummary(*strict).find(
                absl::StrFormat("| %d gradients dropped (too stale)", dropped)),
            std::string::npos)
      << FormatSimSummary(*strict);
}

// The delay-adaptive rule keeps the rate up to W: without jitter no staleness exceeds W - 1, so
// the run is bitwise the plain one; with heavy jitter some updates are older than W and scaled.
TEST(Simulator, DelayAdaptiveLrChangesOnlyUpdatesStalerThanTheWorkerCount) {
  constexpr int kWorkers = 8;
  const Dataset train = testing::SyntheticDataset(256, 6, 3, 9);
  SimOptions sim{.trainer = BaseOptions(Mode::kAsync, kWorkers)};
  sim.trainer.lr.base_lr = 0.01f;
  auto plain = Simulate(sim, train, Dataset());
  sim.trainer.sgd.delay_adaptive_lr = true;
  auto adaptive = Simulate(sim, train, Dataset());
  ASSERT_TRUE(plain.ok() && adaptive.ok()) << plain.status() << adaptive.status();
  EXPECT_EQ(CountBitwiseDifferences(adaptive->params, plain->params), 0);

  sim.compute.jitter = 2.0;
  sim.trainer.sgd.delay_adaptive_lr = false;
  plain = Simulate(sim, train, Dataset());
  sim.trainer.sgd.delay_adaptive_lr = true;
  adaptive = Simulate(sim, train, Dataset());
  ASSERT_TRUE(plain.ok() && adaptive.ok()) << plain.status() << adaptive.status();
  ASSERT_GT(plain->staleness_max, static_cast<uint64_t>(kWorkers));
  EXPECT_GT(CountBitwiseDifferences(adaptive->params, plain->params), 0);
}

TEST(Simulator, SameSeedReproducesParametersStalenessAndLogBitwise) {
  const Dataset train = testing::SyntheticDataset(300, 8, 4, 3);
  const Dataset test = testing::SyntheticDataset(50, 8, 4, 4);
  const std::string dir = ::testing::TempDir();
  auto run = [&](uint64_t seed, const std::string& log) {
    SimOptions sim{.trainer = BaseOptions(Mode::kAsync, 16)};
    sim.trainer.seed = seed;
    sim.trainer.lr.base_lr = 0.02f;
    sim.trainer.eval_every_steps = 20;
    sim.trainer.log_every_steps = 7;
    sim.trainer.log_path = dir + "/" + log;
    sim.trainer.overwrite_log = true;
    sim.compute = {.step_time_s = 0.01, .jitter = 0.5, .stragglers = {{3, 4.0}, {9, 2.0}}};
    auto result = Simulate(sim, train, test);
    EXPECT_TRUE(result.ok()) << result.status();
    return *std::move(result);
  };
  const SimResult a = run(7, "a.csv");
  const SimResult b = run(7, "b.csv");
  EXPECT_EQ(CountBitwiseDifferences(a.params, b.params), 0);
  EXPECT_EQ(a.staleness_per_update, b.staleness_per_update);
  EXPECT_EQ(a.simulated_time_s, b.simulated_time_s);
  const std::string log_a = ReadFile(dir + "/a.csv");
  EXPECT_GT(std::count(log_a.begin(), log_a.end(), '\n'), 10) << log_a;
  EXPECT_NE(log_a.find(",eval,"), std::string::npos);
  EXPECT_EQ(log_a, ReadFile(dir + "/b.csv"));
  // Not vacuous: jitter spreads the staleness, and another seed changes everything.
  EXPECT_GT(a.staleness_histogram.size(), 17u);
  const SimResult c = run(8, "c.csv");
  EXPECT_NE(a.staleness_per_update, c.staleness_per_update);
  EXPECT_GT(CountBitwiseDifferences(a.params, c.params), 0);
}

// docs/convergence_log.md promises that `step` never decreases down a log; the last evaluation, at
// a step that is no evaluation point, is the one most easily stamped wrong.
TEST(Simulator, TheLogsStepNeverDecreasesAndTheLastEvalRowIsAtTheLastStep) {
  const Dataset train = testing::SyntheticDataset(203, 8, 4, 3);
  const Dataset test = testing::SyntheticDataset(40, 8, 4, 4);
  const std::string dir = ::testing::TempDir();
  for (Mode mode : {Mode::kAsync, Mode::kSync, Mode::kSsp, Mode::kBackup, Mode::kLocalSgd}) {
    SCOPED_TRACE(ModeName(mode));
    SimOptions sim{.trainer = BaseOptions(mode, 4)};
    sim.trainer.lr.base_lr = 0.01f;
    sim.trainer.batch_size = 10;
    if (mode == Mode::kBackup) sim.trainer.backup_workers = 1;
    sim.trainer.eval_every_steps = 8;  // no run here has a multiple of 8 steps
    sim.trainer.log_every_steps = 5;
    sim.trainer.log_path = dir + "/steps_" + ModeName(mode) + ".csv";
    sim.trainer.overwrite_log = true;
    auto result = Simulate(sim, train, test);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_NE(result->steps % 8, 0);
    std::istringstream log(ReadFile(sim.trainer.log_path));
    std::string line;
    std::getline(log, line);  // header: wall_time_s,kind,epoch,step,...
    int64_t previous = -1, last_eval_step = -1;
    while (std::getline(log, line)) {
      std::vector<std::string> f;
      std::stringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
      ASSERT_GE(f.size(), 4u) << line;
      const int64_t step = std::stoll(f[3]);
      EXPECT_GE(step, previous) << line;
      previous = step;
      if (f[1] == "eval") last_eval_step = step;
    }
    EXPECT_EQ(last_eval_step, result->steps);
  }
}

TEST(Simulator, AStragglerFinishesItsStepsFactorTimesLater) {
  const Dataset train = testing::SyntheticDataset(256, 6, 3, 9);
  SimOptions sim{.trainer = BaseOptions(Mode::kAsync, 8)};
  sim.trainer.lr.base_lr = 0.01f;
  sim.compute = {.step_time_s = 0.5, .stragglers = {{5, 3.0}}};
  auto result = Simulate(sim, train, Dataset());
  ASSERT_TRUE(result.ok()) << result.status();
  // Its 8 steps take 8 x 1.5 s; the others are done after 4 s and keep no update back.
  EXPECT_DOUBLE_EQ(result->simulated_time_s, 8 * 1.5);
  // Its first update, at 1.5 s, lands after the 3 x 7 - 2 updates the others applied by then
  // (workers 6 and 7 tie with it at 1.5 s and come after it): far more than W - 1.
  EXPECT_EQ(result->staleness_per_update[19], 19u);
  // Its second, at 3 s, after 2 + 7 + 7 + 5 (at 1.5, 2, 2.5 and 3 s): the largest.
  EXPECT_EQ(result->staleness_max, 21u);
}

TEST(ComputeTime, JitterKeepsTheMeanAndEachWorkersSequenceIsItsOwn) {
  const ComputeTimeOptions options{.step_time_s = 0.02, .jitter = 0.3};
  ComputeTimeSampler interleaved(options, 2, 42);
  ComputeTimeSampler alone(options, 2, 42);
  double sum = 0.0;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const double t = interleaved.Next(0);
    interleaved.Next(1);
    EXPECT_GT(t, 0.0);
    EXPECT_EQ(t, alone.Next(0)) << "draw " << i;  // worker 1's draws do not shift worker 0's
    sum += t;
  }
  // Log-normal with mean 1: the sample mean is within 1% (about 3 standard errors).
  EXPECT_NEAR(sum / kDraws, 0.02, 0.0002);
  ComputeTimeSampler fixed({.step_time_s = 0.02, .stragglers = {{1, 2.5}}}, 2, 42);
  EXPECT_EQ(fixed.Next(0), 0.02);
  EXPECT_EQ(fixed.Next(1), 0.05);
}

TEST(SimulatorBadInput, OneLineNamingTheFieldAndTheRange) {
  const int w = 4;
  auto check = [&](ComputeTimeOptions compute, std::initializer_list<std::string> parts) {
    ExpectError(ValidateComputeTimeOptions(compute, w), absl::StatusCode::kInvalidArgument, parts);
  };
  check({.step_time_s = 0}, {"ComputeTimeOptions::step_time_s=0", "(0, 1e+06]"});
  check({.step_time_s = NAN}, {"ComputeTimeOptions::step_time_s=nan"});
  check({.jitter = -1}, {"ComputeTimeOptions::jitter=-1", "[0, 4]"});
  check({.stragglers = {{4, 2}}}, {"ComputeTimeOptions::stragglers worker=4", "[0, 3]"});
  check({.stragglers = {{1, 0.5}}}, {"ComputeTimeOptions::stragglers factor=0.5", "[1, 1000]"});
  check({.stragglers = {{1, 2}, {1, 3}}}, {"ComputeTimeOptions::stragglers", "worker 1 twice"});

  SimOptions sim{.trainer = BaseOptions(Mode::kAsync, w)};
  sim.allreduce_time_s = 0.1;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"SimOptions::allreduce_time_s=0.1", "async has no all-reduce"});
  sim.trainer.mode = Mode::kSync;
  sim.trainer.sgd.staleness_aware_lr = false;
  sim.allreduce_time_s = -1;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"SimOptions::allreduce_time_s=-1", "[0, 1e+06]"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kAsync, w)};
  sim.trainer.checkpoint_dir = "/tmp/x";
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::checkpoint_dir", "no meaning in a simulation"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kAsync, 0)};
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::num_workers=0"});

  // W x P floats (x 3 with momentum: the policy's snapshot, the gradient in flight, momentum)
  // past the limit: refused before allocating, naming both.
  const Dataset train = testing::SyntheticDataset(64, 6, 3, 9);
  sim = SimOptions{.trainer = BaseOptions(Mode::kAsync, w)};
  sim.max_state_bytes = 1000;
  ExpectError(Simulate(sim, train, Dataset()).status(), absl::StatusCode::kResourceExhausted,
              {"4 workers", "x 3", "the parameter snapshot, the gradient in flight and momentum",
               "SimOptions::max_state_bytes=1000"});
  // Adam keeps two buffers per worker.
  sim.trainer.sgd = SgdOptions{.optimizer = OptimizerKind::kAdam};
  ExpectError(Simulate(sim, train, Dataset()).status(), absl::StatusCode::kResourceExhausted,
              {"4 workers", "x 4", "the gradient in flight and adam's 2 optimizer-state buffers",
               "SimOptions::max_state_bytes=1000"});
  // The batch against the data: a worker's shard of 16 examples cannot fill a batch of 17.
  sim = SimOptions{.trainer = BaseOptions(Mode::kAsync, w)};
  sim.trainer.batch_size = 17;
  ExpectError(Simulate(sim, train, Dataset()).status(), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::batch_size=17"});
}

}  // namespace
}  // namespace hogwild
