// Asynchronous local SGD (sync/async_local_sgd.h) and its outer step
// (sync/outer_optimizer.h ApplyPushedOuterStep) against independent references: the delayed
// Nesterov update against its equations in float64 and against one synchronous outer step on
// the mean of N pseudo-gradients; one worker is its inner steps then the outer step, bitwise;
// H = 1 with lr 1 and no momentum is SGD; concurrent workers push without waiting; dynamic
// local updates shorten a slow worker's rounds by its measured speed; the simulation is the real
// trainer bitwise with one worker and charges each push its exchange time; bad options are one
// line naming the field.
#include "sync/async_local_sgd.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sync/outer_optimizer.h"
#include "sync/parameter_store.h"
#include "tests/bitwise.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;
using ::hogwild::testing::ExpectError;

constexpr double kWatchdogS = 20.0;

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Liu et al. 2024's delayed Nesterov (c = 0) in float64, straight from its equations, over a
// sequence of pseudo-gradients g_1..g_T.
std::vector<double> DelayedReference(const OuterOptimizer& outer, int64_t n,
                                     const std::vector<std::vector<float>>& g,
                                     std::vector<double> theta) {
  const size_t p = theta.size();
  std::vector<double> m(p, 0.0), sum(p, 0.0);
  for (size_t t = 1; t <= g.size(); ++t) {
    for (size_t i = 0; i < p; ++i) {
      const double gi = g[t - 1][i];
      sum[i] += gi;
      if (t % n == 0) {
        const double old = m[i];
        m[i] = outer.momentum * old + sum[i] / n;
        sum[i] = 0.0;
        theta[i] -= outer.lr * (gi / n + outer.momentum * (outer.nesterov ? m[i] : old));
      } else {
        theta[i] -= outer.lr * gi / n;
      }
    }
  }
  return theta;
}

TEST(ApplyPushedOuterStep, DelayedNesterovIsItsEquationsInFloat64) {
  std::mt19937 rng(7);
  constexpr size_t kP = 6;
  for (const OuterOptimizer outer : {OuterOptimizer{.lr = 0.7f, .momentum = 0.9f, .nesterov = true},
                                     OuterOptimizer{.lr = 0.5f, .momentum = 0.8f}}) {
    for (int64_t n : {1, 3}) {
      SCOPED_TRACE(absl::StrFormat("nesterov %d, N = %d", outer.nesterov, n));
      const std::vector<float> theta0 = Random(kP, rng);
      std::vector<float> theta = theta0, momentum(kP, 0.0f), sum(kP, 0.0f);
      std::vector<std::vector<float>> pseudo;
      for (int t = 1; t <= 7; ++t) {
        // Each push from its own anchor (the theta its worker pulled) and replica.
        const std::vector<float> anchor = Random(kP, rng);
        std::vector<float> replica = anchor;
        const std::vector<float> step = Random(kP, rng);
        for (size_t i = 0; i < kP; ++i) replica[i] -= 0.1f * step[i];
        std::vector<float> g(kP);
        for (size_t i = 0; i < kP; ++i) g[i] = anchor[i] - replica[i];
        pseudo.push_back(g);
        ApplyPushedOuterStep(outer, n, t, anchor, replica, absl::MakeSpan(momentum),
                             absl::MakeSpan(sum), absl::MakeSpan(theta));
      }
      const std::vector<double> expected =
          DelayedReference(outer, n, pseudo, std::vector<double>(theta0.begin(), theta0.end()));
      for (size_t i = 0; i < kP; ++i) EXPECT_NEAR(theta[i], expected[i], 1e-6) << i;
    }
  }
}

// Over N pushes from a zero momentum, theta moves by one synchronous outer step
// (ApplyOuterStep's rule) on the pushes' mean pseudo-gradient: N = 4, in float64.
TEST(ApplyPushedOuterStep, NPushesMoveThetaAsOneOuterStepOnTheirMean) {
  std::mt19937 rng(11);
  constexpr size_t kP = 5;
  const OuterOptimizer outer{.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  const std::vector<float> theta0 = Random(kP, rng);
  std::vector<float> theta = theta0, momentum(kP, 0.0f), sum(kP, 0.0f);
  std::vector<double> mean(kP, 0.0);
  for (int t = 1; t <= 4; ++t) {
    const std::vector<float> anchor = Random(kP, rng), replica = Random(kP, rng);
    for (size_t i = 0; i < kP; ++i) mean[i] += (double{anchor[i]} - replica[i]) / 4;
    ApplyPushedOuterStep(outer, 4, t, anchor, replica, absl::MakeSpan(momentum),
                         absl::MakeSpan(sum), absl::MakeSpan(theta));
  }
  for (size_t i = 0; i < kP; ++i) {
    // buf = delta; step = delta + mu * buf (Nesterov); theta -= lr * step.
    const double expected = theta0[i] - outer.lr * (mean[i] + outer.momentum * mean[i]);
    EXPECT_NEAR(theta[i], expected, 1e-6) << i;
    EXPECT_NEAR(momentum[i], mean[i], 1e-6) << i;
    EXPECT_EQ(sum[i], 0.0f) << i;
  }
}

// N = 1 with theta still at the worker's anchor is the synchronous outer step on its replica.
TEST(ApplyPushedOuterStep, NaiveWithNoOtherPushIsTheOuterStepBitwise) {
  std::mt19937 rng(3);
  const OuterOptimizer outer = kDiloco;
  std::vector<float> theta = Random(9, rng);
  const std::vector<float> anchor = theta, replica = Random(9, rng);
  std::vector<float> expected = theta, m_expected(9, 0.25f), m(9, 0.25f);
  ApplyOuterStep(outer, replica, absl::MakeSpan(m_expected), absl::MakeSpan(expected));
  ApplyPushedOuterStep(outer, 1, 1, anchor, replica, absl::MakeSpan(m), {}, absl::MakeSpan(theta));
  EXPECT_EQ(CountBitwiseDifferences(theta, expected), 0);
  EXPECT_EQ(CountBitwiseDifferences(m, m_expected), 0);
}

// The gradient of 0.5 * |p - target|^2.
std::vector<float> QuadraticGradient(DeviceSpan<const float> p, const std::vector<float>& target) {
  std::vector<float> g(target.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = p.data()[i] - target[i];
  return g;
}

// One worker, H = 3, plain SGD inside and DiLoCo's outer optimizer, 7 steps: two rounds and a
// last short one pushed by WorkerDone. By hand: 3 SGD steps on a copy, then the outer step.
TEST(AsyncLocalSgd, OneWorkerIsInnerStepsThenTheOuterStepBitwise) {
  const std::vector<float> target = {1.0f, -2.0f, 0.5f};
  ParameterStore store(3);
  const std::vector<float> initial = {0.3f, 0.7f, -1.1f};
  std::copy(initial.begin(), initial.end(), store.unsafe_values().begin());
  AsyncLocalSgd policy(&store, 1, SgdOptions{},
                       AsyncLocalSgdOptions{.average_every = 3, .outer = kDiloco});
  constexpr float kLr = 0.1f;
  for (int step = 0; step < 7; ++step) {
    auto at = policy.BeginStep(0);
    ASSERT_TRUE(at.ok()) << at.status();
    const std::vector<float> g = QuadraticGradient(*at, target);
    auto stats = policy.FinishStep(0, DeviceSpan<const float>(g.data(), g.size()), kLr);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->staleness, 0u);
  }
  ASSERT_TRUE(policy.WorkerDone(0).ok());

  std::vector<float> theta = initial, momentum(3, 0.0f);
  for (int round_steps : {3, 3, 1}) {
    std::vector<float> replica = theta;
    for (int k = 0; k < round_steps; ++k) {
      for (size_t i = 0; i < 3; ++i) replica[i] -= kLr * (replica[i] - target[i]);
    }
    ApplyOuterStep(kDiloco, replica, absl::MakeSpan(momentum), absl::MakeSpan(theta));
  }
  std::vector<float> got(3);
  ASSERT_TRUE(policy.ReadParams(absl::MakeSpan(got)).ok());
  EXPECT_EQ(CountBitwiseDifferences(got, theta), 0);
  EXPECT_EQ(policy.num_pushes(), 3);
  EXPECT_EQ(policy.global_step(), 7u);
}

// A worker that is done pushes its partial round and no longer holds its pull: while another
// worker pushes on, its saved state says not started, and if it steps again (a finished run
// resumed with more epochs) it starts from theta as it is then, with staleness 0.
TEST(AsyncLocalSgd, AFinishedWorkerPullsAfreshIfItStepsAgain) {
  const std::vector<float> target = {1.0f, -2.0f};
  ParameterStore store(2);
  AsyncLocalSgd policy(&store, 2, SgdOptions{}, AsyncLocalSgdOptions{.average_every = 2});
  auto step = [&](int w) {
    auto at = policy.BeginStep(w);
    ASSERT_TRUE(at.ok()) << at.status();
    const std::vector<float> g = QuadraticGradient(*at, target);
    auto stats = policy.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), 0.1f);
    ASSERT_TRUE(stats.ok()) << stats.status();
  };
  for (int i = 0; i < 3; ++i) step(0);
  ASSERT_TRUE(policy.WorkerDone(0).ok());
  EXPECT_EQ(policy.worker_pushes(0), 2);
  for (int i = 0; i < 4; ++i) step(1);
  auto saved = policy.SaveState();
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->mode_state.counters[1 + 0], 0) << "the finished worker 0 counts as started";
  EXPECT_EQ(saved->mode_state.counters[1 + 5 + 0], 1);

  std::vector<float> theta(2);
  ASSERT_TRUE(policy.ReadParams(absl::MakeSpan(theta)).ok());
  auto at = policy.BeginStep(0);
  ASSERT_TRUE(at.ok()) << at.status();
  const std::vector<float> begun(at->data(), at->data() + 2);
  EXPECT_EQ(CountBitwiseDifferences(begun, theta), 0)
      << "worker 0 stepped from its pull before worker 1's pushes";
  const std::vector<float> g = QuadraticGradient(*at, target);
  auto stats = policy.FinishStep(0, DeviceSpan<const float>(g.data(), g.size()), 0.1f);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->staleness, 0u);
}

// H = 1, outer lr 1, no momentum: each push adds the worker's one SGD step to theta, so one
// worker is SGD, bitwise (theta, still its anchor, becomes its replica exactly).
TEST(AsyncLocalSgd, OneLocalStepWithPlainOuterStepIsSgdBitwise) {
  const std::vector<float> target = {1.0f, -2.0f};
  ParameterStore store(2);
  AsyncLocalSgd policy(&store, 1, SgdOptions{}, AsyncLocalSgdOptions{.average_every = 1});
  std::vector<float> sgd = {0.0f, 0.0f};
  for (int step = 0; step < 20; ++step) {
    auto at = policy.BeginStep(0);
    ASSERT_TRUE(at.ok());
    const std::vector<float> g = QuadraticGradient(*at, target);
    ASSERT_TRUE(policy.FinishStep(0, DeviceSpan<const float>(g.data(), 2), 0.2f).ok());
    for (size_t i = 0; i < 2; ++i) sgd[i] -= 0.2f * (sgd[i] - target[i]);
  }
  std::vector<float> got(2);
  ASSERT_TRUE(policy.ReadParams(absl::MakeSpan(got)).ok());
  EXPECT_EQ(CountBitwiseDifferences(got, sgd), 0);
  EXPECT_EQ(policy.num_pushes(), 20);
}

// Four workers on their own threads push without waiting for each other: every round is pushed,
// the global step counts every local step, each step's staleness counts the other workers'
// pushes since its pull (at most all of them), and theta approaches the target.
TEST(AsyncLocalSgd, ConcurrentWorkersPushWithoutWaiting) {
  const std::vector<float> target = {1.0f, -2.0f, 3.0f, 0.5f};
  ParameterStore store(4);
  AsyncLocalSgd policy(
      &store, 4, SgdOptions{.momentum = 0.5f},
      AsyncLocalSgdOptions{.average_every = 4, .outer = kDiloco, .delayed_nesterov = 4});
  constexpr int kSteps = 40;
  std::vector<uint64_t> max_staleness(4, 0);
  auto run = [&](int w) {
    for (int step = 0; step < kSteps; ++step) {
      auto at = policy.BeginStep(w);
      ASSERT_TRUE(at.ok());
      const std::vector<float> g = QuadraticGradient(*at, target);
      auto stats = policy.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), 0.2f);
      ASSERT_TRUE(stats.ok());
      max_staleness[w] = std::max(max_staleness[w], stats->staleness);
    }
    ASSERT_TRUE(policy.WorkerDone(w).ok());
  };
  testing::WithWatchdog(kWatchdogS, "four pushing workers", [&] {
    std::vector<std::thread> threads;
    for (int w = 0; w < 4; ++w) threads.emplace_back(run, w);
    for (std::thread& t : threads) t.join();
    return 0;
  });
  EXPECT_EQ(policy.num_pushes(), 4 * kSteps / 4);
  EXPECT_EQ(policy.global_step(), 4u * kSteps);
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(policy.worker_pushes(w), kSteps / 4);
    EXPECT_LE(max_staleness[w], static_cast<uint64_t>(3 * kSteps / 4));
  }
  std::vector<float> got(4);
  ASSERT_TRUE(policy.ReadParams(absl::MakeSpan(got)).ok());
  // Where theta ends depends on the threads' interleaving: the outer momentum overshoots more when
  // a slow machine runs the workers' rounds one after another. Within 0.4 of the target is still
  // most of the way from theta = 0.
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], target[i], 0.4f) << i;
}

// A worker 4x slower than the other takes H / 4 local steps per round once both have measured a
// round; the fast one keeps H; a worker with no measured round takes H.
TEST(AsyncLocalSgd, DynamicLocalUpdatesShortenASlowWorkersRounds) {
  ParameterStore store(1);
  double now = 0.0;
  AsyncLocalSgd policy(&store, 2, SgdOptions{},
                       AsyncLocalSgdOptions{.average_every = 8, .dynamic_local_updates = true},
                       [&now] { return now; });
  const float g = 0.0f;
  auto step = [&](int w, double seconds) {
    ASSERT_TRUE(policy.BeginStep(w).ok());
    now += seconds;
    ASSERT_TRUE(policy.FinishStep(w, DeviceSpan<const float>(&g, 1), 0.1f).ok());
  };
  ASSERT_TRUE(policy.BeginStep(0).ok());  // both pull at time 0
  ASSERT_TRUE(policy.BeginStep(1).ok());
  for (int k = 0; k < 8; ++k) step(0, 1.0);  // worker 0's round: 1 s per step
  EXPECT_EQ(policy.round_steps(0), 8);
  EXPECT_EQ(policy.round_steps(1), 8);  // not measured yet
  now = 0.0;
  for (int k = 0; k < 8; ++k) step(1, 4.0);  // worker 1's round: 4 s per step
  EXPECT_EQ(policy.round_steps(1), 2);
  EXPECT_EQ(policy.worker_pushes(1), 1);
  step(1, 4.0);
  step(1, 4.0);
  EXPECT_EQ(policy.worker_pushes(1), 2);  // the short round was pushed
  // Without dynamic local updates the slow worker keeps H.
  ParameterStore fixed_store(1);
  AsyncLocalSgd fixed(&fixed_store, 2, SgdOptions{}, AsyncLocalSgdOptions{.average_every = 8},
                      [&now] { return now; });
  EXPECT_TRUE(fixed.BeginStep(1).ok());
  EXPECT_EQ(fixed.round_steps(1), 8);
}

// Checkpoints (PolicyState::mode_state): two workers in a fixed interleaving, with momentum,
// delayed Nesterov and dynamic local updates on a simulated clock, saved mid-round (worker 0 two
// steps into its round, worker 1 one step into a shortened round) and restored into a new
// policy, end bitwise where the uninterrupted policy ends; the restored state saves back to
// itself; a state of another layout is refused in one line before anything changes.
TEST(AsyncLocalSgd, SavedMidRoundAndRestoredContinuesBitwise) {
  const std::vector<float> target = {1.0f, -2.0f, 0.5f};
  const std::vector<float> initial = {0.3f, 0.7f, -1.1f};
  const AsyncLocalSgdOptions mode{.average_every = 4,
                                  .outer = kDiloco,
                                  .delayed_nesterov = 2,
                                  .dynamic_local_updates = true};
  // Worker 1 is 3x slower than worker 0 on the clock; the schedule is a fixed interleaving.
  const std::vector<int> schedule = {0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0,
                                     0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0};
  constexpr size_t kSaveAfter = 17;
  struct Run {
    ParameterStore store{3};
    double now = 0.0;
    std::unique_ptr<AsyncLocalSgd> policy;
    explicit Run(const std::vector<float>& theta, const AsyncLocalSgdOptions& mode) {
      std::copy(theta.begin(), theta.end(), store.unsafe_values().begin());
      policy = std::make_unique<AsyncLocalSgd>(&store, 2, SgdOptions{.momentum = 0.5f}, mode,
                                               [this] { return now; });
    }
  };
  auto step = [&](Run& run, int w) {
    auto at = run.policy->BeginStep(w);
    ASSERT_TRUE(at.ok()) << at.status();
    run.now += w == 0 ? 1.0 : 3.0;
    const std::vector<float> g = QuadraticGradient(*at, target);
    ASSERT_TRUE(run.policy->FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), 0.1f).ok());
  };
  Run reference(initial, mode);
  for (int w : schedule) step(reference, w);
  for (int w : {0, 1}) ASSERT_TRUE(reference.policy->WorkerDone(w).ok());

  Run first(initial, mode);
  for (size_t i = 0; i < kSaveAfter; ++i) step(first, schedule[i]);
  auto saved = first.policy->SaveState();
  ASSERT_TRUE(saved.ok()) << saved.status();
  ASSERT_LT(first.policy->round_steps(1), 4) << "worker 1's rounds are not shortened";
  ASSERT_EQ(saved->mode_state.buffers.size(), 2u * 2 + 2);  // replicas, anchors, momentum, sum
  ASSERT_EQ(saved->mode_state.counters.size(), 1u + 5 * 2);
  EXPECT_GT(saved->mode_state.counters[1 + 1], 0) << "worker 0 is not mid-round";

  Run second(std::vector<float>(3, 0.0f), mode);
  second.now = first.now + 100.0;  // another clock: only durations carry over
  ASSERT_TRUE(second.policy->RestoreState(*saved).ok());
  auto again = second.policy->SaveState();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->mode_state, saved->mode_state);
  EXPECT_EQ(again->params, saved->params);
  for (size_t i = kSaveAfter; i < schedule.size(); ++i) step(second, schedule[i]);
  for (int w : {0, 1}) ASSERT_TRUE(second.policy->WorkerDone(w).ok());

  std::vector<float> want(3), got(3);
  ASSERT_TRUE(reference.policy->ReadParams(absl::MakeSpan(want)).ok());
  ASSERT_TRUE(second.policy->ReadParams(absl::MakeSpan(got)).ok());
  EXPECT_EQ(CountBitwiseDifferences(got, want), 0);
  EXPECT_EQ(second.policy->num_pushes(), reference.policy->num_pushes());
  EXPECT_EQ(second.policy->global_step(), reference.policy->global_step());

  // Another layout (without the delayed Nesterov sum), and counts that contradict each other.
  AsyncLocalSgdOptions undelayed = mode;
  undelayed.delayed_nesterov = 1;
  Run third(initial, undelayed);
  ExpectError(third.policy->RestoreState(*saved), absl::StatusCode::kFailedPrecondition,
              {"cannot resume: the async_local_sgd state in the checkpoint has 6 buffers, 11 "
               "counters and 4 times, this run needs 5, 11 and 4; resume with the checkpoint's "
               "workers, outer optimizer and delayed_nesterov"});
  EXPECT_EQ(third.store.version(), 0u) << "the refused restore changed the store";
  PolicyState broken = *saved;
  const int64_t pushes = broken.mode_state.counters[0];
  broken.mode_state.counters[0] += 1;  // a push no worker made
  Run fourth(initial, mode);
  ExpectError(fourth.policy->RestoreState(broken), absl::StatusCode::kFailedPrecondition,
              {absl::StrFormat("cannot resume: the async_local_sgd state in the checkpoint counts "
                               "%d pushes, its workers %d",
                               pushes + 1, pushes)});
}

TrainerOptions SmallRun(int workers) {
  TrainerOptions o;
  o.mode = Mode::kAsyncLocalSgd;
  o.num_workers = workers;
  o.batch_size = 8;
  o.epochs = 2;
  o.seed = 5;
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                    .base_lr = 0.1f,
                    .decay_rate = 0.5f,
                    .decay_steps = 20};
  o.sgd = SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f};
  o.average_every = 5;
  o.outer = kDiloco;
  o.eval_every_epochs = 0;
  return o;
}

// The simulation calls the real policy: with one worker (deterministic) the simulated and the
// real trainer agree bitwise, and each push is charged its exchange time: 51 steps in rounds
// of 5 are 11 pushes (the last of 1 step, at the end of the data).
TEST(AsyncLocalSgd, TheSimulationIsTheRealTrainerBitwiseAndChargesEachPush) {
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  const TrainerOptions options = SmallRun(1);
  auto real = Train(options, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  SimOptions sim{.trainer = options};
  sim.compute.step_time_s = 0.01;
  sim.allreduce_time_s = 0.004;
  auto simulated = Simulate(sim, train, Dataset());
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_EQ(simulated->steps, real->steps);
  EXPECT_EQ(simulated->steps, 52);
  EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
  EXPECT_NEAR(simulated->simulated_time_s, 52 * 0.01 + 11 * 0.004, 1e-9);
  // The bandwidth model: each push and pull puts 2 x 4P bytes on the worker's link.
  sim.allreduce_time_s = 0.0;
  sim.latency_s = 0.001;
  sim.bandwidth_bytes_per_s = 1e7;
  auto modelled = Simulate(sim, train, Dataset());
  ASSERT_TRUE(modelled.ok()) << modelled.status();
  EXPECT_EQ(CountBitwiseDifferences(modelled->params, real->params), 0);
  const double push_s = 0.001 + 2.0 * 4.0 * static_cast<double>(real->params.size()) / 1e7;
  EXPECT_NEAR(modelled->simulated_time_s, 52 * 0.01 + 11 * push_s, 1e-9);
  // Not vacuous: plain outer steps give other parameters.
  TrainerOptions plain = options;
  plain.outer = {};
  auto other = Train(plain, train, Dataset());
  ASSERT_TRUE(other.ok());
  EXPECT_GT(CountBitwiseDifferences(other->params, real->params),
            static_cast<int64_t>(real->params.size() / 2));
}

// Equally fast workers keep H with dynamic local updates: the simulation with it on and off is
// the same run, bitwise (a round's simulated time is a sum whose rounding differs by worker, which
// must not shorten a round). A straggler makes them differ.
TEST(AsyncLocalSgd, DynamicLocalUpdatesChangeNothingAmongEquallyFastWorkers) {
  const Dataset train = testing::SyntheticDataset(400, 10, 4, 3);
  TrainerOptions options = SmallRun(4);
  options.delayed_nesterov = 4;
  SimOptions sim{.trainer = options};
  sim.compute.step_time_s = 0.0031;
  sim.allreduce_time_s = 0.0017;
  auto fixed = Simulate(sim, train, Dataset());
  sim.trainer.dynamic_local_updates = true;
  auto dynamic = Simulate(sim, train, Dataset());
  ASSERT_TRUE(fixed.ok() && dynamic.ok()) << fixed.status() << dynamic.status();
  EXPECT_EQ(CountBitwiseDifferences(dynamic->params, fixed->params), 0);
  EXPECT_EQ(dynamic->exchanges, fixed->exchanges);
  sim.compute.stragglers = {{0, 4.0}};
  auto slow = Simulate(sim, train, Dataset());
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_GT(slow->exchanges, fixed->exchanges);
}

// The last pushes come after the last step is counted (each worker's partial round, pushed when
// its data ends): the log's last eval row is the final parameters' evaluation, on threads and
// simulated, with every exchange counted, even when a periodic evaluation fell on the last step.
TEST(AsyncLocalSgd, TheLastEvalRowIsTheFinalParametersAfterTheLastPushes) {
  const Dataset train = testing::SyntheticDataset(300, 10, 3, 21);
  TrainerOptions options = SmallRun(3);
  options.average_every = 7;  // 13 steps per worker per epoch: every worker ends mid-round
  options.eval_every_epochs = 1;
  std::vector<LogRow> rows;
  options.log_row_sink = [&rows](const LogRow& row) {
    rows.push_back(row);
    return absl::OkStatus();
  };
  auto real = Train(options, train, train);
  ASSERT_TRUE(real.ok()) << real.status();
  ASSERT_FALSE(rows.empty());
  ASSERT_TRUE(rows.back().eval);
  EXPECT_EQ(rows.back().test_accuracy, real->final_test_accuracy);
  EXPECT_EQ(rows.back().exchanges, real->exchanges);
  // Simulated: the log file's last row.
  SimOptions sim{.trainer = options};
  sim.trainer.log_row_sink = nullptr;
  sim.trainer.log_path = ::testing::TempDir() + "/async_local_sgd_sim_log.csv";
  sim.trainer.overwrite_log = true;
  sim.compute.step_time_s = 0.01;
  sim.compute.stragglers = {{1, 3.0}};
  auto simulated = Simulate(sim, train, train);
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  std::ifstream in(sim.trainer.log_path);
  std::string header, line, last;
  std::getline(in, header);
  while (std::getline(in, line)) last = line;
  const std::vector<std::string> names = absl::StrSplit(header, ',');
  const std::vector<std::string> values = absl::StrSplit(last, ',');
  ASSERT_EQ(names.size(), values.size());
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return values[i];
    }
    return std::string("missing");
  };
  EXPECT_EQ(column("kind"), "eval");
  EXPECT_NEAR(std::stod(column("test_accuracy")), simulated->final_test_accuracy, 1e-6);
  EXPECT_EQ(column("exchanges"), absl::StrCat(simulated->exchanges));
}

// Three workers on threads train the network: the loss falls.
TEST(AsyncLocalSgd, ThreeWorkersTrain) {
  const Dataset train = testing::SyntheticDataset(300, 10, 3, 21);
  TrainerOptions options = SmallRun(3);
  options.epochs = 4;
  options.delayed_nesterov = 3;
  auto result = Train(options, train, train);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->mode, Mode::kAsyncLocalSgd);
  EXPECT_GT(result->final_test_accuracy, 0.6);
}

TEST(AsyncLocalSgd, BadOptionsAreOneLineNamingTheField) {
  TrainerOptions o = SmallRun(2);
  o.delayed_nesterov = 0;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::delayed_nesterov=0", "[1, "});
  o = SmallRun(2);
  o.outer = {};
  o.delayed_nesterov = 4;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::delayed_nesterov=4", "outer momentum"});
  o = SmallRun(2);
  o.mode = Mode::kAsync;
  o.average_every = 8;
  o.outer = {};
  o.delayed_nesterov = 4;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::delayed_nesterov=4", "async_local_sgd"});
  o.delayed_nesterov = 1;
  o.mode = Mode::kLocalSgd;
  o.dynamic_local_updates = true;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::dynamic_local_updates", "async_local_sgd"});
  o = SmallRun(2);
  o.checkpoint_dir = "/tmp/never";
  EXPECT_TRUE(ValidateOptions(o).ok()) << "checkpoints are taken in this mode";
}

}  // namespace
}  // namespace hogwild
