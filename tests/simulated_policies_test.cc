// The simulation of ssp, backup and local_sgd (sim/simulator.h) against independent references:
// ssp with a bound past the run is the simulated async run bitwise and with a bound s never
// starts a step more than s ahead; backup with b = 0 is the simulated (itself the real) sync run
// bitwise, times included, and with a persistent straggler drops exactly its parts; local_sgd is
// the real local_sgd trainer bitwise (a deterministic policy), with Streaming DiLoCo's fragments
// too, and with one worker sequential SGD; streaming's exchange times follow its overlap rule.
#include <bit>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "sim/simulator.h"
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
  o.seed = 99;
  o.model = ModelSpec{.name = "mlp", .hidden = {16, 8}};
  o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                    .base_lr = 0.05f,
                    .decay_rate = 0.5f,
                    .decay_steps = 20};
  o.sgd = SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f};
  o.eval_every_epochs = 0;
  o.eval_every_steps = 0;
  return o;
}

SimResult Simulated(const SimOptions& options, const Dataset& train) {
  auto result = Simulate(options, train, Dataset());
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : SimResult{};
}

// Jitter and two stragglers: the clocks drift apart, so the bound has something to hold.
ComputeTimeOptions Uneven() {
  return {.step_time_s = 0.01, .jitter = 0.6, .stragglers = {{1, 3.0}, {5, 1.5}}};
}

TEST(SimulatedSsp, ABoundPastTheRunIsAsyncBitwise) {
  const Dataset train = testing::SyntheticDataset(400, 8, 4, 21);
  SimOptions async{.trainer = BaseOptions(Mode::kAsync, 8), .compute = Uneven()};
  SimOptions ssp = async;
  ssp.trainer.mode = Mode::kSsp;
  ssp.trainer.staleness_bound = 1000;  // each worker has 14 steps
  const SimResult a = Simulated(async, train);
  const SimResult s = Simulated(ssp, train);
  EXPECT_EQ(CountBitwiseDifferences(a.params, s.params), 0);
  EXPECT_EQ(a.staleness_per_update, s.staleness_per_update);
  EXPECT_EQ(a.simulated_time_s, s.simulated_time_s);
  EXPECT_EQ(a.max_clock_gap, s.max_clock_gap);
  // Not vacuous: async lets the clocks drift well apart.
  EXPECT_GE(a.max_clock_gap, 3);
}

TEST(SimulatedSsp, NoStepStartsMoreThanTheBoundAheadAndTheBoundCostsTime) {
  const Dataset train = testing::SyntheticDataset(400, 8, 4, 21);
  // Jitter only: with a persistent straggler even async ends with the straggler's last step.
  SimOptions options{.trainer = BaseOptions(Mode::kSsp, 8),
                     .compute = {.step_time_s = 0.01, .jitter = 0.6}};
  options.trainer.mode = Mode::kAsync;
  const SimResult async = Simulated(options, train);
  options.trainer.mode = Mode::kSsp;
  double previous_time_s = async.simulated_time_s;
  for (int64_t bound : {int64_t{4}, int64_t{2}, int64_t{1}, int64_t{0}}) {
    options.trainer.staleness_bound = bound;
    const SimResult r = Simulated(options, train);
    EXPECT_LE(r.max_clock_gap, bound) << "bound " << bound;
    EXPECT_EQ(r.steps, 8 * 14);  // every step taken
    // A tighter bound waits more for the slowest worker: the run takes no less time.
    EXPECT_GE(r.simulated_time_s, previous_time_s) << "bound " << bound;
    previous_time_s = r.simulated_time_s;
  }
  // Bound 0 is bulk-synchronous: 14 clocks, each as long as the slowest of 8 jittered steps
  // (about twice the mean for this jitter), where async ends with the slowest worker's sum of
  // 14 steps (close to 14 means).
  EXPECT_GT(previous_time_s, 1.4 * async.simulated_time_s);
  EXPECT_GE(async.max_clock_gap, 2);
}

TEST(SimulatedBackup, NoBackupWorkersIsSyncBitwiseTimesIncluded) {
  // Global batch 10 over 4 towers (parts of 2 and 3) and a last batch of 3 (an empty part).
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  SimOptions sync{.trainer = BaseOptions(Mode::kSync, 4)};
  sync.trainer.batch_size = 10;
  sync.compute = {.step_time_s = 0.01, .jitter = 0.4, .stragglers = {{2, 3.0}}};
  sync.allreduce_time_s = 0.002;
  SimOptions backup = sync;
  backup.trainer.mode = Mode::kBackup;
  backup.trainer.backup_workers = 0;
  const SimResult s = Simulated(sync, train);
  const SimResult b = Simulated(backup, train);
  EXPECT_EQ(b.steps, 2 * 21);
  EXPECT_EQ(CountBitwiseDifferences(s.params, b.params), 0);
  EXPECT_EQ(s.simulated_time_s, b.simulated_time_s);
  EXPECT_EQ(b.dropped, std::vector<int64_t>(4, 0));
  EXPECT_EQ(b.examples, s.examples);
}

TEST(SimulatedBackup, APersistentStragglerIsDroppedAndNeverWaitedFor) {
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 5);
  SimOptions sync{.trainer = BaseOptions(Mode::kSync, 4)};
  sync.trainer.batch_size = 10;
  sync.compute = {.step_time_s = 0.01, .stragglers = {{2, 3.0}}};
  SimOptions backup = sync;
  backup.trainer.mode = Mode::kBackup;
  backup.trainer.backup_workers = 1;
  const SimResult s = Simulated(sync, train);
  const SimResult b = Simulated(backup, train);
  ASSERT_EQ(b.steps, 42);
  // Every step closes when the three others arrive, 10 ms after it opened.
  EXPECT_DOUBLE_EQ(b.simulated_time_s, 42 * 0.01);
  EXPECT_DOUBLE_EQ(s.simulated_time_s, 42 * 0.03);
  // The straggler's parts all arrive late: it worked through a third of the steps, all dropped.
  EXPECT_EQ(b.worker_steps, (std::vector<int64_t>{42, 42, 0, 42}));
  EXPECT_EQ(b.dropped[2], 14);
  EXPECT_EQ(b.dropped[0] + b.dropped[1] + b.dropped[3], 0);
  // The dropped parts' examples were computed: seen, as in the real log. Parts of worker 2 are
  // the examples [lo + size*2/4, lo + size*3/4) of each global batch: 2 or 3 of 10, 0 of 3.
  EXPECT_GT(b.examples, 203 * 2 - s.examples / 4);
  EXPECT_LT(b.examples, s.examples);
  // Not sync: the straggler's quarter of each batch is missing from the updates.
  EXPECT_GT(CountBitwiseDifferences(s.params, b.params), static_cast<int64_t>(s.params.size() / 2));
}

TEST(SimulatedLocalSgd, IsTheRealLocalSgdTrainerBitwise) {
  // Global batch 10 over 3 workers (local parts of 3 and 4), 21 steps per epoch: rounds of 4
  // cross the epoch boundary and the last round is short. The schedule decays within the run.
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 8);
  TrainerOptions options = BaseOptions(Mode::kLocalSgd, 3);
  options.batch_size = 10;
  options.average_every = 4;
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  SimOptions sim{.trainer = options};
  sim.compute = {.step_time_s = 0.01, .stragglers = {{1, 2.0}}};
  sim.allreduce_time_s = 0.005;
  const SimResult r = Simulated(sim, train);
  EXPECT_EQ(r.steps, real->steps);
  EXPECT_EQ(r.steps, 42);
  EXPECT_EQ(CountBitwiseDifferences(r.params, real->params), 0);
  // 11 rounds (10 of 4 steps, 1 of 2), each as long as the straggler's steps plus the averaging.
  EXPECT_NEAR(r.simulated_time_s, 10 * (4 * 0.02 + 0.005) + (2 * 0.02 + 0.005), 1e-12);
  // Not vacuous: averaging every step gives other parameters.
  sim.trainer.average_every = 1;
  const SimResult every_step = Simulated(sim, train);
  EXPECT_GT(CountBitwiseDifferences(r.params, every_step.params),
            static_cast<int64_t>(r.params.size() / 2));
}

// DiLoCo's outer optimizer (Nesterov momentum, outer lr 0.7) over a decaying schedule and a short
// last round: the simulation and the real trainer apply the same outer steps, bitwise.
TEST(SimulatedLocalSgd, WithAnOuterOptimizerIsTheRealTrainerBitwise) {
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 8);
  TrainerOptions options = BaseOptions(Mode::kLocalSgd, 3);
  options.batch_size = 10;
  options.average_every = 4;
  options.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  const SimResult r = Simulated(SimOptions{.trainer = options}, train);
  EXPECT_EQ(r.steps, real->steps);
  EXPECT_EQ(CountBitwiseDifferences(r.params, real->params), 0);
  // Not vacuous: plain averaging gives other parameters.
  options.outer = {};
  const SimResult averaged = Simulated(SimOptions{.trainer = options}, train);
  EXPECT_GT(CountBitwiseDifferences(r.params, averaged.params),
            static_cast<int64_t>(r.params.size() / 2));
}

TEST(SimulatedLocalSgd, OneWorkerIsSequentialSgd) {
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  TrainerOptions options = BaseOptions(Mode::kAsync, 1);
  // Constant: local_sgd's rounds hold the rate for H steps.
  options.lr = LrSchedule{.kind = LrSchedule::Kind::kConstant, .base_lr = 0.05f};
  auto sequential = Train(options, train, Dataset());
  ASSERT_TRUE(sequential.ok()) << sequential.status();
  options.mode = Mode::kLocalSgd;
  options.average_every = 5;
  const SimResult r = Simulated(SimOptions{.trainer = options}, train);
  EXPECT_EQ(r.steps, sequential->steps);
  EXPECT_EQ(CountBitwiseDifferences(r.params, sequential->params), 0);
}

// Streaming DiLoCo (sync/streaming.h): 3 fragments of a period of 4 (exchanged at offsets 0, 1
// and 2), each exchange overlapping 2 steps and merged with alpha 0.5, DiLoCo's outer optimizer,
// a decaying schedule (followed at each exchange) and a last period cut short by the data: the
// simulation's loop is the real policy's arithmetic, bitwise.
TEST(SimulatedStreaming, IsTheRealTrainerBitwise) {
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 8);
  TrainerOptions options = BaseOptions(Mode::kLocalSgd, 3);
  options.batch_size = 10;
  options.average_every = 4;
  options.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  options.streaming = {.fragments = 3, .overlap_steps = 2, .mix_alpha = 0.5f};
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  SimOptions sim{.trainer = options};
  sim.compute = {.step_time_s = 0.01, .jitter = 0.3, .stragglers = {{1, 2.0}}};
  sim.allreduce_time_s = 0.005;
  const SimResult r = Simulated(sim, train);
  EXPECT_EQ(r.steps, real->steps);
  EXPECT_EQ(r.steps, 42);
  EXPECT_EQ(r.worker_steps, (std::vector<int64_t>{42, 42, 42}));
  EXPECT_EQ(CountBitwiseDifferences(r.params, real->params), 0);
  // Not vacuous: without the overlap and the mixing the parameters differ.
  sim.trainer.streaming = {.fragments = 3};
  const SimResult no_overlap = Simulated(sim, train);
  EXPECT_GT(CountBitwiseDifferences(r.params, no_overlap.params),
            static_cast<int64_t>(r.params.size() / 2));
}

// The time of an exchange is allreduce_time_s / F, and with an overlap of tau steps no worker
// waits for it unless it takes longer than they do. Equal steps of 10 ms, 42 of them, H = 4,
// F = 2 (exchanges at every even step, 21, and fragment 0 once more at the end: 22 of 2.5 ms):
// without overlap each exchange stalls every worker; with tau = 1 only the last one, and the
// merge pending at the end (step 42's exchange, 2.5 ms after the last step) is waited for.
TEST(SimulatedStreaming, TheOverlapHidesAnExchangeShorterThanItsSteps) {
  const Dataset train = testing::SyntheticDataset(203, 12, 4, 8);
  TrainerOptions options = BaseOptions(Mode::kLocalSgd, 3);
  options.batch_size = 10;
  options.average_every = 4;
  options.streaming = {.fragments = 2};
  SimOptions sim{.trainer = options};
  sim.compute = {.step_time_s = 0.01};
  sim.allreduce_time_s = 0.005;
  EXPECT_NEAR(Simulated(sim, train).simulated_time_s, 42 * 0.01 + 22 * 0.0025, 1e-9);
  sim.trainer.streaming.overlap_steps = 1;
  EXPECT_NEAR(Simulated(sim, train).simulated_time_s, 42 * 0.01 + 2 * 0.0025, 1e-9);
  // An exchange of 25 ms against one step of 10: each of the first 20 is waited for 15 ms at its
  // merge; the last, pending at the end, and the final one 25 ms each.
  sim.allreduce_time_s = 0.05;
  EXPECT_NEAR(Simulated(sim, train).simulated_time_s, 42 * 0.01 + 20 * 0.015 + 2 * 0.025, 1e-9);
}

// The bandwidth model of an exchange: sync's every step and local_sgd's every averaging take the
// ring all-reduce's 2 (W - 1) / W x 4P bytes over the bandwidth plus the latency, and nothing
// else changes (the parameters are the fixed-time run's, bitwise).
TEST(SimulatedPolicies, TheBandwidthModelTimesEachExchangeByItsBytes) {
  const Dataset train = testing::SyntheticDataset(160, 12, 4, 8);
  for (Mode mode : {Mode::kSync, Mode::kLocalSgd}) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions options = BaseOptions(mode, 4);
    if (mode == Mode::kLocalSgd) options.average_every = 4;
    SimOptions fixed{.trainer = options};
    fixed.compute.step_time_s = 0.01;
    fixed.allreduce_time_s = 0.003;
    SimOptions modelled = fixed;
    modelled.allreduce_time_s = 0.0;
    modelled.latency_s = 0.002;
    modelled.bandwidth_bytes_per_s = 1e8;
    const SimResult a = Simulated(fixed, train);
    const SimResult b = Simulated(modelled, train);
    EXPECT_EQ(CountBitwiseDifferences(a.params, b.params), 0);
    const double p = static_cast<double>(b.params.size());
    const double exchange_s = 0.002 + 2.0 * 3.0 / 4.0 * 4.0 * p / 1e8;
    const double exchanges = mode == Mode::kSync ? 40 : 10;  // 20 steps per epoch, 2 epochs
    EXPECT_EQ(b.steps, 40);
    EXPECT_NEAR(b.simulated_time_s, 40 * 0.01 + exchanges * exchange_s, 1e-9);
    EXPECT_NEAR(a.simulated_time_s, 40 * 0.01 + exchanges * 0.003, 1e-9);
  }
}

TEST(SimulatedPolicies, BadInputIsOneLineNamingTheField) {
  SimOptions sim{.trainer = BaseOptions(Mode::kSsp, 4)};
  sim.allreduce_time_s = 0.1;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"SimOptions::allreduce_time_s=0.1", "ssp has no all-reduce"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kBackup, 4)};
  sim.trainer.backup_workers = 4;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::backup_workers=4", "[0, 3]"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kLocalSgd, 4)};
  sim.trainer.average_every = 0;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::average_every=0"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kSync, 4)};
  sim.latency_s = 0.001;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"SimOptions::latency_s", "needs SimOptions::bandwidth_bytes_per_s"});
  sim.bandwidth_bytes_per_s = 1e9;
  sim.allreduce_time_s = 0.01;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"two models", "give one of them"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kSsp, 4)};
  sim.bandwidth_bytes_per_s = 1e9;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"SimOptions::bandwidth_bytes_per_s applies to", "ssp has no exchange"});
  sim.bandwidth_bytes_per_s = -1;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"SimOptions::bandwidth_bytes_per_s=-1 is out of range"});
  sim = SimOptions{.trainer = BaseOptions(Mode::kAsync, 4)};
  sim.trainer.stragglers.slowdown = {{1, 2.0}};
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::stragglers", "SimOptions::compute.stragglers"});
  // local_sgd's per-worker momentum counts against the state limit; sync's does not.
  const Dataset train = testing::SyntheticDataset(64, 6, 3, 9);
  sim = SimOptions{.trainer = BaseOptions(Mode::kLocalSgd, 4)};
  sim.max_state_bytes = 1000;
  ExpectError(Simulate(sim, train, Dataset()).status(), absl::StatusCode::kResourceExhausted,
              {"4 workers", "momentum", "SimOptions::max_state_bytes=1000"});
  // Streaming DiLoCo keeps every replica: one more per-worker array, named.
  sim.trainer.streaming.fragments = 2;
  ExpectError(Simulate(sim, train, Dataset()).status(), absl::StatusCode::kResourceExhausted,
              {"4 workers", "x 2 =", "the replica and momentum", "SimOptions::max_state_bytes"});
  sim.trainer.streaming.fragments = 1;
  sim.trainer.mode = Mode::kSync;
  sim.trainer.average_every = TrainerOptions{}.average_every;
  EXPECT_TRUE(Simulate(sim, train, Dataset()).ok());
  sim = SimOptions{.trainer = BaseOptions(Mode::kLocalSgd, 4)};
  sim.trainer.streaming.overlap_steps = 8;
  ExpectError(ValidateSimOptions(sim), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::streaming.overlap_steps=8", "[0, 7]"});
}

}  // namespace
}  // namespace hogwild
