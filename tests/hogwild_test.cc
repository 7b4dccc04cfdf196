// The asynchronous update policy (sync/hogwild.h): invariant 4 of DESIGN.md (workers touching
// disjoint parameters give the exact sequential result, however their steps interleave), the
// update bitwise equal to the functor, the staleness accounting, and the staleness-aware
// learning rate.
#include "sync/hogwild.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sync/parameter_store.h"

namespace hogwild {
namespace {

// Worker w minimizes 0.5 * ||p_S - t_S||^2 over its own set S_w = {i : i % W == w} (interleaved,
// so the workers' elements share cache lines): its gradient is p_i - t_i on S_w and 0 elsewhere.
// With no weight decay a zero gradient leaves an element bitwise unchanged, so no worker ever
// writes another's element and there is nothing to lose: the result must equal running each
// worker's steps one after another, bitwise, whatever the interleaving.
TEST(Hogwild, DisjointWorkersMatchTheSequentialResultExactly) {
  constexpr int kWorkers = 4, kSteps = 150;
  constexpr int64_t kParams = 1031;
  const SgdOptions options{.momentum = 0.5f, .weight_decay = 0.0f};
  const float lr = 0.05f;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> init(kParams), target(kParams);
  for (int64_t i = 0; i < kParams; ++i) init[i] = normal(rng), target[i] = normal(rng);

  ParameterStore store(kParams);
  std::copy(init.begin(), init.end(), store.unsafe_values().begin());
  Hogwild policy(&store, kWorkers, options);
  std::atomic<bool> go{false};
  std::atomic<uint64_t> max_staleness{0};
  std::vector<absl::Status> errors(kWorkers);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      std::vector<float> grad(kParams, 0.0f);
      while (!go.load()) std::this_thread::yield();
      for (int step = 0; step < kSteps; ++step) {
        auto params = policy.BeginStep(w);
        if (!params.ok()) return void(errors[w] = params.status());
        for (int64_t i = w; i < kParams; i += kWorkers) grad[i] = params->HostSpan()[i] - target[i];
        auto stats = policy.FinishStep(w, grad, lr);
        if (!stats.ok()) return void(errors[w] = stats.status());
        uint64_t seen = max_staleness.load();
        while (stats->staleness > seen &&
               !max_staleness.compare_exchange_weak(seen, stats->staleness)) {
        }
      }
    });
  }
  go.store(true);
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : errors) ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(store.version(), uint64_t{kWorkers} * kSteps);
  ::testing::Test::RecordProperty("max_staleness", static_cast<int>(max_staleness.load()));

  // The sequential reference: each element follows its own worker's kSteps updates.
  std::vector<float> expected = init;
  const SgdMomentumFn sgd{lr, options.momentum, options.weight_decay};
  for (int64_t i = 0; i < kParams; ++i) {
    float velocity = 0.0f;
    for (int step = 0; step < kSteps; ++step) {
      expected[i] = sgd(expected[i], expected[i] - target[i], velocity);
    }
  }
  int64_t mismatches = 0;
  for (int64_t i = 0; i < kParams; ++i) {
    mismatches +=
        std::bit_cast<uint32_t>(store.unsafe_values()[i]) != std::bit_cast<uint32_t>(expected[i]);
  }
  EXPECT_EQ(mismatches, 0);
  // Not vacuous: the parameters moved most of the way to the targets.
  double before = 0.0, after = 0.0;
  for (int64_t i = 0; i < kParams; ++i) {
    before += std::fabs(init[i] - target[i]);
    after += std::fabs(store.unsafe_values()[i] - target[i]);
  }
  EXPECT_LT(after, 0.1 * before);
}

// One worker through the policy API, P = 1027 (the kernel's four-lane loop and a tail of three,
// kernels/cpu/sgd_update.h): every update leaves the store bitwise equal to the functor applied
// element by element, and the next snapshot (read back by the same pass) equal to the store.
// Some gradient elements are 0: with no momentum and no weight decay they leave whole vectors and
// single lanes unchanged, the kernel's not-written paths.
class HogwildUpdate : public ::testing::TestWithParam<std::tuple<float, float>> {};

TEST_P(HogwildUpdate, OneWorkerIsBitwiseTheFunctorElementByElement) {
  const auto [momentum, weight_decay] = GetParam();
  constexpr int64_t kParams = 1027;
  constexpr int kSteps = 4;
  constexpr float kLr[kSteps] = {0.1f, 0.05f, 0.03f, 0.01f};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> init(kParams);
  for (float& x : init) x = normal(rng);
  std::vector<std::vector<float>> grads(kSteps, std::vector<float>(kParams));
  for (std::vector<float>& grad : grads) {
    for (int64_t i = 0; i < kParams; ++i) {
      const bool zero = (i >= 64 && i < 72) || i % 7 == 3 || i == kParams - 1;
      grad[i] = zero ? 0.0f : normal(rng);
    }
  }

  ParameterStore store(kParams);
  std::copy(init.begin(), init.end(), store.unsafe_values().begin());
  Hogwild policy(&store, 1, SgdOptions{.momentum = momentum, .weight_decay = weight_decay});
  std::vector<float> params = init, velocity(kParams, 0.0f);
  const auto first_mismatch = [&](absl::Span<const float> got) -> int64_t {
    for (int64_t i = 0; i < kParams; ++i) {
      if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(params[i])) return i;
    }
    return -1;
  };
  for (int step = 0; step < kSteps; ++step) {
    auto snapshot = policy.BeginStep(0);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    const int64_t bad_snapshot = first_mismatch(snapshot->HostSpan());
    ASSERT_EQ(bad_snapshot, -1) << "step " << step << ", snapshot element " << bad_snapshot;
    ASSERT_TRUE(policy.FinishStep(0, grads[step], kLr[step]).ok());
    const SgdMomentumFn sgd{kLr[step], momentum, weight_decay};
    for (int64_t i = 0; i < kParams; ++i) params[i] = sgd(params[i], grads[step][i], velocity[i]);
    const int64_t bad = first_mismatch(store.unsafe_values());
    ASSERT_EQ(bad, -1) << "step " << step << ", element " << bad << ": "
                       << store.unsafe_values()[bad] << " vs " << params[bad];
  }
  // The snapshot of the last update's read-back too.
  auto snapshot = policy.BeginStep(0);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(first_mismatch(snapshot->HostSpan()), -1);
  int64_t moved = 0;
  for (int64_t i = 0; i < kParams; ++i) moved += params[i] != init[i];
  EXPECT_GT(moved, kParams / 2);

  auto state = policy.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  if (momentum == 0.0f) {
    EXPECT_TRUE(state->optimizer_state.empty());
  } else {
    ASSERT_EQ(state->optimizer_state.size(), 1u);
    int64_t bad_velocity = 0;
    for (int64_t i = 0; i < kParams; ++i) {
      bad_velocity += std::bit_cast<uint32_t>(state->optimizer_state[0][i]) !=
                      std::bit_cast<uint32_t>(velocity[i]);
    }
    EXPECT_EQ(bad_velocity, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(MomentumWeightDecay, HogwildUpdate,
                         ::testing::Combine(::testing::Values(0.0f, 0.9f),
                                            ::testing::Values(0.0f, 0.01f)),
                         [](const ::testing::TestParamInfo<std::tuple<float, float>>& info) {
                           return absl::StrFormat("momentum%s_wd%s",
                                                  std::get<0>(info.param) != 0.0f ? "On" : "Off",
                                                  std::get<1>(info.param) != 0.0f ? "On" : "Off");
                         });

// Runs a fixed interleaving of two workers' BeginStep (B) and FinishStep (F) calls, each
// worker on its own thread, taking turns in script order.
struct Action {
  int worker;
  bool finish;              // false: BeginStep
  uint64_t want_staleness;  // for finishes
  float grad;               // every element of this worker's gradient, for finishes
};

class TurnTaker {
 public:
  void WaitFor(int turn) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return turn_ == turn; });
  }
  void Done() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++turn_;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int turn_ = 0;
};

// Returns the StepStats of every finish, in script order.
std::vector<StepStats> RunScript(Hogwild& policy, const std::vector<Action>& script, int64_t size) {
  std::vector<StepStats> stats(script.size());
  TurnTaker turns;
  std::vector<std::thread> threads;
  for (int w = 0; w < policy.num_workers(); ++w) {
    threads.emplace_back([&, w] {
      for (size_t i = 0; i < script.size(); ++i) {
        if (script[i].worker != w) continue;
        turns.WaitFor(static_cast<int>(i));
        if (script[i].finish) {
          const std::vector<float> grad(size, script[i].grad);
          auto s = policy.FinishStep(w, grad, 0.3f);
          EXPECT_TRUE(s.ok()) << s.status();
          if (s.ok()) stats[i] = *s;
        } else {
          EXPECT_TRUE(policy.BeginStep(w).ok());
        }
        turns.Done();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return stats;
}

// Worker 1 reads at version 0 and 2; worker 0 updates once, then three times, in between.
const std::vector<Action> kScript = {
    {0, false, 0, 0},   {1, false, 0, 0},   {0, true, 0, 0.0f}, {1, true, 1, 1.0f},  // v: 0 -> 2
    {1, false, 0, 0},   {0, false, 0, 0},   {0, true, 0, 0.0f},                      // v: 3
    {0, false, 0, 0},   {0, true, 0, 0.0f}, {0, false, 0, 0},   {0, true, 0, 0.0f},  // v: 5
    {1, true, 3, 1.0f},                                                              // v: 6
    {0, false, 0, 0},   {0, true, 0, 0.0f},                                          // v: 7
};

TEST(Hogwild, StalenessCountsOtherWorkersUpdatesBetweenReadAndWrite) {
  ParameterStore store(3);
  Hogwild policy(&store, 2, SgdOptions{});
  const std::vector<StepStats> stats = RunScript(policy, kScript, store.size());
  for (size_t i = 0; i < kScript.size(); ++i) {
    if (!kScript[i].finish) continue;
    EXPECT_EQ(stats[i].staleness, kScript[i].want_staleness) << "script entry " << i;
    EXPECT_EQ(stats[i].applied_lr, 0.3f) << "script entry " << i;
  }
  EXPECT_EQ(store.version(), 7u);
  // Worker 1's two updates of -0.3 each (worker 0's gradient is 0).
  EXPECT_EQ(store.unsafe_values()[0], (0.0f - 0.3f * 1.0f) - 0.3f * 1.0f);
}

TEST(Hogwild, OneWorkerAlwaysHasStalenessZero) {
  ParameterStore store(5);
  Hogwild policy(&store, 1, SgdOptions{.momentum = 0.9f});
  const std::vector<float> grad(5, 1.0f);
  for (int step = 0; step < 20; ++step) {
    ASSERT_TRUE(policy.BeginStep(0).ok());
    auto stats = policy.FinishStep(0, grad, 0.1f);
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->staleness, 0u) << "step " << step;
  }
  EXPECT_EQ(store.version(), 20u);
}

TEST(Hogwild, StalenessAwareLrDividesTheLearningRateByTheStaleness) {
  ParameterStore store(3);
  Hogwild policy(&store, 2, SgdOptions{.staleness_aware_lr = true});
  const std::vector<StepStats> stats = RunScript(policy, kScript, store.size());
  // Staleness 0 and 1 keep the learning rate (max(1, staleness)); staleness 3 divides it by 3.
  for (size_t i = 0; i < kScript.size(); ++i) {
    if (!kScript[i].finish) continue;
    const float want = kScript[i].want_staleness > 1 ? 0.3f / kScript[i].want_staleness : 0.3f;
    EXPECT_EQ(stats[i].applied_lr, want) << "script entry " << i;
  }
  // And the parameters moved by exactly the applied rate: -0.3 at staleness 1, -0.1 at 3.
  float unused = 0.0f;
  const float after_first = SgdMomentumFn{0.3f, 0.0f, 0.0f}(0.0f, 1.0f, unused);
  const float after_second = SgdMomentumFn{0.3f / 3, 0.0f, 0.0f}(after_first, 1.0f, unused);
  for (float v : store.unsafe_values()) EXPECT_EQ(v, after_second);
  EXPECT_NE(after_second, (0.0f - 0.3f) - 0.3f);
}

// The delay-adaptive rule with W = 2 workers: staleness 1 (<= W) keeps the rate, staleness 3
// scales it by W / 3 (sync/update_policy.h AsyncStepStats).
TEST(Hogwild, DelayAdaptiveLrScalesOnlyDelaysBeyondTheWorkerCount) {
  ParameterStore store(3);
  Hogwild policy(&store, 2, SgdOptions{.delay_adaptive_lr = true});
  const std::vector<StepStats> stats = RunScript(policy, kScript, store.size());
  for (size_t i = 0; i < kScript.size(); ++i) {
    if (!kScript[i].finish) continue;
    const uint64_t tau = kScript[i].want_staleness;
    const float want = tau > 2 ? 0.3f * (2.0f / static_cast<float>(tau)) : 0.3f;
    EXPECT_EQ(stats[i].applied_lr, want) << "script entry " << i;
  }
  float unused = 0.0f;
  const float after_first = SgdMomentumFn{0.3f, 0.0f, 0.0f}(0.0f, 1.0f, unused);
  const float after_second =
      SgdMomentumFn{0.3f * (2.0f / 3.0f), 0.0f, 0.0f}(after_first, 1.0f, unused);
  for (float v : store.unsafe_values()) EXPECT_EQ(v, after_second);
  EXPECT_EQ(policy.num_dropped(), 0);
}

// Ringmaster's threshold R = 2: worker 1's update of staleness 3 is dropped (nothing written, no
// version), its update of staleness 1 applied; R = 3 drops nothing.
TEST(Hogwild, MaxDelayDropsOnlyTheUpdatesStalerThanIt) {
  ParameterStore store(3);
  Hogwild policy(&store, 2, SgdOptions{.max_delay = 2});
  const std::vector<StepStats> stats = RunScript(policy, kScript, store.size());
  for (size_t i = 0; i < kScript.size(); ++i) {
    if (!kScript[i].finish) continue;
    EXPECT_EQ(stats[i].dropped, kScript[i].want_staleness > 2) << "script entry " << i;
  }
  EXPECT_EQ(policy.num_dropped(), 1);
  EXPECT_EQ(store.version(), 6u);  // 7 updates, one dropped
  for (float v : store.unsafe_values()) EXPECT_EQ(v, 0.0f - 0.3f * 1.0f);
  // The dropping worker reads afresh: its next step sees the store as it is.
  auto read = policy.BeginStep(1);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->data()[0], store.unsafe_values()[0]);

  ParameterStore kept(3);
  Hogwild lenient(&kept, 2, SgdOptions{.max_delay = 3});
  RunScript(lenient, kScript, kept.size());
  EXPECT_EQ(lenient.num_dropped(), 0);
  EXPECT_EQ(kept.version(), 7u);
}

TEST(Hogwild, CancelMakesLaterStepsReturnCancelled) {
  ParameterStore store(2);
  Hogwild policy(&store, 2, SgdOptions{});
  ASSERT_TRUE(policy.BeginStep(0).ok());
  policy.Cancel();
  policy.Cancel();  // idempotent
  EXPECT_EQ(policy.BeginStep(1).status().code(), absl::StatusCode::kCancelled);
  const std::vector<float> grad(2, 1.0f);
  EXPECT_EQ(policy.FinishStep(0, grad, 0.1f).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(store.version(), 0u);
  EXPECT_EQ(store.unsafe_values()[0], 0.0f);
}

TEST(Hogwild, FinishStepRejectsAGradientOfTheWrongSize) {
  ParameterStore store(4);
  Hogwild policy(&store, 1, SgdOptions{});
  ASSERT_TRUE(policy.BeginStep(0).ok());
  const std::vector<float> grad(3, 1.0f);
  const auto stats = policy.FinishStep(0, grad, 0.1f);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(stats.status().message().find("3"), std::string::npos) << stats.status();
}

}  // namespace
}  // namespace hogwild
