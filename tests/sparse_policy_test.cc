// The update policies' sparse steps (UpdatePolicy::BeginSparseStep/FinishSparseStep,
// sync/update_policy.h): for every CPU mode a sparse step is the dense step on the gradient's
// dense form, bitwise, with the same staleness and global step (one worker for every mode, three
// for sync); plain SGD updates the touched coordinates only (weight decay reaches those alone,
// outside the no_decay ranges), the other optimizers, clipping and moving statistics fall back
// to the dense step; async, locked, round_robin and ssp read the live array; the orderings
// (locked's lock, round_robin's turns, ssp's bound, sync's barrier) hold for sparse steps and
// Cancel() releases a worker waiting in one; concurrent async sparse steps on disjoint supports
// lose no update.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/cpu/shared_element.h"
#include "kernels/functors.h"
#include "sync/backup_sync.h"
#include "sync/locked.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "sync/round_robin.h"
#include "sync/sparse_gradient.h"
#include "sync/stale_synchronous.h"
#include "sync/tower_average.h"
#include "tests/bitwise.h"
#include "tests/watchdog.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;
using ::hogwild::testing::WithWatchdog;

constexpr double kWatchdogS = 20.0;
constexpr int64_t kParams = 40;
constexpr int kSteps = 6;

std::unique_ptr<ParameterStore> InitialStore() {
  auto store = std::make_unique<ParameterStore>(kParams);
  for (int64_t i = 0; i < kParams; ++i) {
    store->unsafe_values()[i] = 0.5f - 0.03f * static_cast<float>(i);
  }
  return store;
}

std::vector<float> Values(const ParameterStore& store) {
  return std::vector<float>(store.unsafe_values().begin(), store.unsafe_values().end());
}

// Worker `worker`'s gradient at its step `step`: a few coordinates (one of them twice, one with
// a zero contribution), each depending on the parameter read there, so that a different read or
// order of updates changes the result. Reads `params` with SharedLoad (the live array).
void Gradient(const float* params, int worker, int step, SparseGradient& g) {
  g.Clear();
  for (int k = 0; k < 5; ++k) {
    const int32_t j = static_cast<int32_t>((worker * 7 + step * 3 + k * 5) % kParams);
    g.Accumulate(j, 0.3f * cpu::SharedLoad(params + j) + 0.01f * static_cast<float>(k + worker) -
                        0.002f * static_cast<float>(step));
  }
  const int32_t again = static_cast<int32_t>((worker * 7 + step * 3) % kParams);
  g.Accumulate(again, 0.05f);
  g.Accumulate(static_cast<int32_t>((worker * 11 + step + 1) % kParams), 0.0f);
}

float Rate(int step) { return 0.1f / static_cast<float>(1 + step); }

std::unique_ptr<UpdatePolicy> MakePolicy(Mode mode, ParameterStore* store, int workers,
                                         const SgdOptions& options) {
  absl::StatusOr<std::unique_ptr<UpdatePolicy>> policy =
      CreateUpdatePolicy(mode, store, PolicyPlacement{.num_cpu_workers = workers}, options,
                         ModeOptions{.staleness_bound = 2, .average_every = 2});
  EXPECT_TRUE(policy.ok()) << policy.status();
  return std::move(policy).value();
}

struct PolicyRun {
  std::vector<float> params;
  std::vector<StepStats> stats;
  std::vector<uint64_t> global_steps;
};

// One worker, kSteps steps, sparse or dense (the same gradient, handed over as grad.dense()).
PolicyRun RunOneWorker(Mode mode, const SgdOptions& options, bool sparse) {
  auto store = InitialStore();
  std::unique_ptr<UpdatePolicy> policy = MakePolicy(mode, store.get(), 1, options);
  SparseGradient g(kParams);
  PolicyRun run;
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_TRUE(policy->SetStepExamples(0, 1, 1).ok());
    absl::StatusOr<StepStats> stats;
    if (sparse) {
      absl::StatusOr<const float*> params = policy->BeginSparseStep(0);
      EXPECT_TRUE(params.ok()) << params.status();
      Gradient(*params, 0, step, g);
      stats = policy->FinishSparseStep(0, g, Rate(step));
    } else {
      absl::StatusOr<DeviceSpan<const float>> params = policy->BeginStep(0);
      EXPECT_TRUE(params.ok()) << params.status();
      Gradient(params->data(), 0, step, g);
      const absl::Span<const float> dense = g.dense();
      stats =
          policy->FinishStep(0, DeviceSpan<const float>(dense.data(), dense.size()), Rate(step));
    }
    EXPECT_TRUE(stats.ok()) << stats.status();
    run.stats.push_back(*stats);
    run.global_steps.push_back(policy->global_step());
  }
  EXPECT_TRUE(policy->WorkerDone(0).ok());
  run.params.resize(kParams);
  EXPECT_TRUE(policy->ReadParams(absl::MakeSpan(run.params)).ok());
  return run;
}

void ExpectSameRun(const PolicyRun& sparse, const PolicyRun& dense, const std::string& what) {
  EXPECT_EQ(CountBitwiseDifferences(sparse.params, dense.params), 0) << what;
  EXPECT_EQ(sparse.global_steps, dense.global_steps) << what;
  ASSERT_EQ(sparse.stats.size(), dense.stats.size()) << what;
  for (size_t s = 0; s < sparse.stats.size(); ++s) {
    EXPECT_EQ(sparse.stats[s].staleness, dense.stats[s].staleness) << what << " step " << s;
    EXPECT_EQ(sparse.stats[s].applied_lr, dense.stats[s].applied_lr) << what << " step " << s;
    EXPECT_EQ(sparse.stats[s].dropped, dense.stats[s].dropped) << what << " step " << s;
  }
}

// The options whose rule does not leave a zero-gradient coordinate unchanged: the dense step.
std::vector<std::pair<std::string, SgdOptions>> FallbackOptions() {
  std::vector<std::pair<std::string, SgdOptions>> all;
  all.push_back(
      {"momentum",
       SgdOptions{.optimizer = OptimizerKind::kMomentum, .momentum = 0.9f, .weight_decay = 1e-2f}});
  all.push_back({"adam", SgdOptions{.optimizer = OptimizerKind::kAdam, .weight_decay = 1e-2f}});
  all.push_back({"clipped sgd", SgdOptions{.clip_global_norm = 0.05f}});
  SgdOptions stats;
  stats.moving_stats = {{30, 34}};
  all.push_back({"sgd with moving statistics", stats});
  return all;
}

TEST(SparsePolicy, OneWorkerSparseStepsAreTheDenseStepsBitwiseInEveryMode) {
  for (Mode mode : kPolicyModes) {
    const PolicyRun sparse = RunOneWorker(mode, SgdOptions{}, true);
    const PolicyRun dense = RunOneWorker(mode, SgdOptions{}, false);
    ExpectSameRun(sparse, dense, ModeName(mode));
    // Not vacuous: the steps moved the parameters.
    EXPECT_GT(CountBitwiseDifferences(sparse.params, Values(*InitialStore())), 10)
        << ModeName(mode);
  }
}

TEST(SparsePolicy, OtherOptimizersClippingAndMovingStatisticsTakeTheDenseStepBitwise) {
  for (Mode mode : kPolicyModes) {
    for (const auto& [name, options] : FallbackOptions()) {
      const PolicyRun sparse = RunOneWorker(mode, options, true);
      const PolicyRun dense = RunOneWorker(mode, options, false);
      ExpectSameRun(sparse, dense, absl::StrFormat("%s, %s", ModeName(mode), name));
    }
  }
}

TEST(SparsePolicy, WeightDecayReachesTheTouchedCoordinatesOnlyOutsideNoDecay) {
  SgdOptions options;
  options.weight_decay = 0.05f;
  options.no_decay = {{4, 9}, {20, 22}};
  // The rule on the touched coordinates, applied to a plain copy: SgdMomentumFn with momentum 0
  // and the coordinate's weight decay.
  std::vector<float> expected = Values(*InitialStore());
  std::vector<bool> touched(kParams, false);
  SparseGradient g(kParams);
  for (int step = 0; step < kSteps; ++step) {
    Gradient(expected.data(), 0, step, g);
    for (int32_t j : g.touched()) {
      const bool exempt = (j >= 4 && j < 9) || (j >= 20 && j < 22);
      float unused = 0.0f;
      expected[j] = SgdMomentumFn{Rate(step), 0.0f, exempt ? 0.0f : options.weight_decay}(
          expected[j], g.value(j), unused);
      touched[j] = true;
    }
  }
  int exempt_touched = 0;
  for (int64_t j = 0; j < kParams; ++j) exempt_touched += touched[j] && j >= 4 && j < 9;
  ASSERT_GT(exempt_touched, 0);
  const std::vector<float> initial = Values(*InitialStore());
  for (Mode mode : kPolicyModes) {
    const PolicyRun sparse = RunOneWorker(mode, options, true);
    EXPECT_EQ(CountBitwiseDifferences(sparse.params, expected), 0) << ModeName(mode);
    int untouched = 0;
    for (int64_t j = 0; j < kParams; ++j) {
      if (touched[j]) continue;
      ++untouched;
      EXPECT_EQ(sparse.params[j], initial[j]) << ModeName(mode) << " coordinate " << j;
    }
    EXPECT_GT(untouched, 0);
    // The dense step decays every coordinate: what the touched-only update leaves out.
    const PolicyRun dense = RunOneWorker(mode, options, false);
    EXPECT_GT(CountBitwiseDifferences(dense.params, sparse.params), 0) << ModeName(mode);
  }
}

TEST(SparsePolicy, ApplySparseSgdIsTheDenseRuleOnTheTouchedCoordinates) {
  std::vector<float> shared = Values(*InitialStore());
  std::vector<float> expected = shared;
  SparseGradient g(kParams);
  for (int32_t j : {39, 5, 17, 21, 22, 0}) g.Accumulate(j, 0.25f - 0.01f * static_cast<float>(j));
  const std::vector<std::pair<int64_t, int64_t>> no_decay = {{0, 1}, {17, 22}};
  ApplySparseSgd(0.5f, 0.1f, no_decay, g, shared.data());
  for (int32_t j : g.touched()) {
    const bool exempt = j == 0 || (j >= 17 && j < 22);
    float unused = 0.0f;
    expected[j] = SgdMomentumFn{0.5f, 0.0f, exempt ? 0.0f : 0.1f}(expected[j], g.value(j), unused);
  }
  EXPECT_EQ(CountBitwiseDifferences(shared, expected), 0);
}

// Contributions of every worker to the same coordinates, magnitudes 2^-4, 1 and 2^4 apart, so
// that the sum's worker order shows in its rounding.
void AddCommon(int worker, int step, SparseGradient& g) {
  for (int k = 0; k < 8; ++k) {
    const int32_t j = static_cast<int32_t>((step * 3 + k * 5 + 1) % kParams);
    const float sign = (worker + k) % 2 == 0 ? 1.0f : -1.0f;
    g.Accumulate(j, sign * std::ldexp(0.7f + 0.037f * static_cast<float>(k), 4 * worker - 4));
  }
}

// Three workers of sync, each step: every worker reads, computes and finishes on its own thread.
std::vector<float> RunSyncThreeWorkers(const SgdOptions& options, bool sparse) {
  constexpr int kWorkers = 3;
  auto store = InitialStore();
  TowerAverage policy(store.get(), kWorkers, options);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      SparseGradient g(kParams);
      for (int step = 0; step < kSteps; ++step) {
        absl::StatusOr<StepStats> stats;
        if (sparse) {
          absl::StatusOr<const float*> params = policy.BeginSparseStep(w);
          ASSERT_TRUE(params.ok()) << params.status();
          Gradient(*params, w, step, g);
          AddCommon(w, step, g);
          stats = policy.FinishSparseStep(w, g, Rate(step));
        } else {
          absl::StatusOr<DeviceSpan<const float>> params = policy.BeginStep(w);
          ASSERT_TRUE(params.ok()) << params.status();
          Gradient(params->data(), w, step, g);
          AddCommon(w, step, g);
          const absl::Span<const float> dense = g.dense();
          stats =
              policy.FinishStep(w, DeviceSpan<const float>(dense.data(), dense.size()), Rate(step));
        }
        ASSERT_TRUE(stats.ok()) << stats.status();
        EXPECT_EQ(stats->staleness, 0u);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(policy.global_step(), static_cast<uint64_t>(kSteps));
  return Values(*store);
}

// A policy that takes dense gradients only (as the GPU policies): the base refuses its sparse
// steps with one line naming it, before any hook runs.
class DenseOnlyPolicy final : public UpdatePolicy {
 public:
  explicit DenseOnlyPolicy(ParameterStore* store) : UpdatePolicy(Mode::kAsync, store, 1, {}) {}
  int num_optimizer_buffers() const override { return 0; }

 private:
  const char* DenseOnly() const override { return "DenseOnlyPolicy (a test's)"; }
  absl::Status DoReadParams(absl::Span<float>) const override { return absl::OkStatus(); }
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int) override {
    ADD_FAILURE() << "a refused sparse step reached the dense hook";
    return DeviceSpan<const float>();
  }
  absl::StatusOr<StepStats> DoFinishStep(int, DeviceSpan<const float>, float) override {
    ADD_FAILURE() << "a refused sparse step reached the dense hook";
    return StepStats{};
  }
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override {
    return std::vector<std::vector<float>>{};
  }
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>&) override {
    return absl::OkStatus();
  }
};

TEST(SparsePolicy, APolicyThatTakesDenseGradientsOnlyRefusesSparseStepsNamingItself) {
  auto store = InitialStore();
  DenseOnlyPolicy policy(store.get());
  const std::string want =
      "DenseOnlyPolicy (a test's) takes dense gradients only; train the sparse workloads on CPU "
      "workers";
  const absl::Status begin = policy.BeginSparseStep(0).status();
  EXPECT_EQ(begin.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(begin.message(), want);
  const absl::Status finish = policy.FinishSparseStep(0, SparseGradient(kParams), 0.1f).status();
  EXPECT_EQ(finish.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(finish.message(), want);
}

TEST(SparsePolicy, SyncWithThreeWorkersSumsTheSparseTowersAsTheDenseOnesBitwise) {
  WithWatchdog(kWatchdogS, "three sync workers", [] {
    const std::vector<float> sparse = RunSyncThreeWorkers(SgdOptions{}, true);
    EXPECT_EQ(CountBitwiseDifferences(sparse, RunSyncThreeWorkers(SgdOptions{}, false)), 0);
    EXPECT_GT(CountBitwiseDifferences(sparse, Values(*InitialStore())), 10);
    const SgdOptions momentum{.optimizer = OptimizerKind::kMomentum, .momentum = 0.9f};
    EXPECT_EQ(CountBitwiseDifferences(RunSyncThreeWorkers(momentum, true),
                                      RunSyncThreeWorkers(momentum, false)),
              0);
  });
}

// Backup with 3 workers and 1 backup worker: each step, workers 1 and 2 contribute and worker 0
// arrives after the update, late, and is dropped. The step's
// sum is rescaled to the 4 examples used of its 6: the sparse steps as the dense ones, bitwise.
PolicyRun RunBackupOneLate(const SgdOptions& options, bool sparse) {
  constexpr int kWorkers = 3;
  auto store = InitialStore();
  auto policy = std::make_unique<BackupSync>(store.get(), kWorkers, options, /*backup_workers=*/1);
  std::vector<SparseGradient> grads(kWorkers, SparseGradient(kParams));
  PolicyRun run;
  auto step_of = [&](int w, int step) {
    EXPECT_TRUE(policy->SetStepExamples(w, 2, 6).ok());
    if (sparse) {
      absl::StatusOr<const float*> params = policy->BeginSparseStep(w);
      EXPECT_TRUE(params.ok()) << params.status();
      Gradient(*params, w, step, grads[w]);
    } else {
      absl::StatusOr<DeviceSpan<const float>> params = policy->BeginStep(w);
      EXPECT_TRUE(params.ok()) << params.status();
      Gradient(params->data(), w, step, grads[w]);
    }
    const absl::Span<const float> dense = grads[w].dense();
    absl::StatusOr<StepStats> stats =
        sparse ? policy->FinishSparseStep(w, grads[w], 0.1f)
               : policy->FinishStep(w, DeviceSpan<const float>(dense.data(), dense.size()), 0.1f);
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.value_or(StepStats{});
  };
  for (int step = 0; step < 3; ++step) {
    // Workers 1 and 2, in either order, are the step's two contributors (the second closes it);
    // worker 0 begins only after the update and is late.
    std::thread first([&] { EXPECT_FALSE(step_of(1, step).dropped); });
    EXPECT_FALSE(step_of(2, step).dropped);
    first.join();
    EXPECT_TRUE(step_of(0, step).dropped);
    run.global_steps.push_back(policy->global_step());
  }
  run.params = Values(*store);
  return run;
}

TEST(SparsePolicy, BackupDropsTheLateWorkerAndRescalesTheSparseSumAsTheDenseOneBitwise) {
  WithWatchdog(kWatchdogS, "backup one late", [] {
    const PolicyRun sparse = RunBackupOneLate(SgdOptions{}, true);
    const PolicyRun dense = RunBackupOneLate(SgdOptions{}, false);
    EXPECT_EQ(CountBitwiseDifferences(sparse.params, dense.params), 0);
    EXPECT_GT(CountBitwiseDifferences(sparse.params, Values(*InitialStore())), 10);
    EXPECT_EQ(sparse.global_steps, (std::vector<uint64_t>{1, 2, 3}));
    EXPECT_EQ(sparse.global_steps, dense.global_steps);
  });
}

// Async and ssp, three workers driven from one thread in a fixed interleaving: every worker
// reads, then 1, 2 and 0 finish, so worker 0's update has staleness 2 (halving its rate with
// staleness_aware_lr) and worker 2's staleness 1; the sparse steps count it as the dense ones.
PolicyRun RunInterleaved(Mode mode, bool sparse) {
  constexpr int kWorkers = 3;
  auto store = InitialStore();
  std::unique_ptr<UpdatePolicy> policy =
      MakePolicy(mode, store.get(), kWorkers, SgdOptions{.staleness_aware_lr = true});
  std::vector<SparseGradient> grads(kWorkers, SparseGradient(kParams));
  PolicyRun run;
  for (int step = 0; step < 2; ++step) {
    for (int w = 0; w < kWorkers; ++w) {
      if (sparse) {
        absl::StatusOr<const float*> params = policy->BeginSparseStep(w);
        EXPECT_TRUE(params.ok()) << params.status();
        Gradient(*params, w, step, grads[w]);
      } else {
        absl::StatusOr<DeviceSpan<const float>> params = policy->BeginStep(w);
        EXPECT_TRUE(params.ok()) << params.status();
        Gradient(params->data(), w, step, grads[w]);
      }
    }
    for (int w : {1, 2, 0}) {
      const absl::Span<const float> dense = grads[w].dense();
      absl::StatusOr<StepStats> stats =
          sparse ? policy->FinishSparseStep(w, grads[w], 0.1f)
                 : policy->FinishStep(w, DeviceSpan<const float>(dense.data(), dense.size()), 0.1f);
      EXPECT_TRUE(stats.ok()) << stats.status();
      run.stats.push_back(*stats);
      run.global_steps.push_back(policy->global_step());
    }
  }
  run.params = Values(*store);
  return run;
}

TEST(SparsePolicy, StalenessAndGlobalStepAreTheDenseStepsUnderOverlappingSteps) {
  for (Mode mode : {Mode::kAsync, Mode::kSsp}) {
    const PolicyRun sparse = RunInterleaved(mode, true);
    ExpectSameRun(sparse, RunInterleaved(mode, false), ModeName(mode));
    ASSERT_EQ(sparse.stats.size(), 6u);
    EXPECT_EQ(sparse.stats[1].staleness, 1u) << ModeName(mode);
    EXPECT_EQ(sparse.stats[2].staleness, 2u) << ModeName(mode);
    EXPECT_EQ(sparse.stats[2].applied_lr, 0.05f) << ModeName(mode);
    EXPECT_EQ(sparse.global_steps.back(), 6u) << ModeName(mode);
  }
}

TEST(SparsePolicy, SparseReadsAreTheSharedArrayNotACopy) {
  for (Mode mode : {Mode::kAsync, Mode::kLocked, Mode::kRoundRobin, Mode::kSsp, Mode::kSync}) {
    auto store = InitialStore();
    std::unique_ptr<UpdatePolicy> policy = MakePolicy(mode, store.get(), 2, SgdOptions{});
    absl::StatusOr<const float*> params = policy->BeginSparseStep(0);
    ASSERT_TRUE(params.ok()) << params.status();
    EXPECT_EQ(*params, store->unsafe_values().data()) << ModeName(mode);
    policy->Cancel();
  }
}

TEST(SparsePolicy, LockedHoldsTheLockFromBeginSparseStepToFinishSparseStep) {
  WithWatchdog(kWatchdogS, "locked sparse steps", [] {
    auto store = InitialStore();
    Locked policy(store.get(), 2, SgdOptions{});
    SparseGradient g(kParams);
    ASSERT_TRUE(policy.BeginSparseStep(0).ok());
    std::atomic<bool> entered{false};
    std::thread other([&] {
      EXPECT_TRUE(policy.BeginSparseStep(1).ok());
      entered = true;
      SparseGradient mine(kParams);
      mine.Accumulate(1, 1.0f);
      EXPECT_TRUE(policy.FinishSparseStep(1, mine, 0.1f).ok());
    });
    while (policy.num_waiting() < 1) std::this_thread::yield();
    EXPECT_FALSE(entered.load());
    g.Accumulate(0, 1.0f);
    absl::StatusOr<StepStats> stats = policy.FinishSparseStep(0, g, 0.1f);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->staleness, 0u);
    other.join();
    EXPECT_TRUE(entered.load());
    EXPECT_EQ(policy.global_step(), 2u);
    // A finish without its begin is refused, naming the call to make first.
    const absl::Status unbegun = policy.FinishSparseStep(0, g, 0.1f).status();
    EXPECT_EQ(unbegun.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(unbegun.message(),
              "Locked::FinishSparseStep(0): the worker does not hold the lock; call "
              "BeginSparseStep first");
  });
}

TEST(SparsePolicy, RoundRobinAppliesSparseUpdatesInTurn) {
  WithWatchdog(kWatchdogS, "round_robin sparse steps", [] {
    auto store = InitialStore();
    RoundRobin policy(store.get(), 2, SgdOptions{});
    SparseGradient g0(kParams), g1(kParams);
    ASSERT_TRUE(policy.BeginSparseStep(0).ok());
    ASSERT_TRUE(policy.BeginSparseStep(1).ok());
    g0.Accumulate(0, 1.0f);
    g1.Accumulate(1, 1.0f);
    std::atomic<bool> finished{false};
    std::thread second([&] {
      EXPECT_TRUE(policy.FinishSparseStep(1, g1, 0.1f).ok());
      finished = true;
    });
    while (policy.num_waiting() < 1) std::this_thread::yield();
    EXPECT_FALSE(finished.load());
    EXPECT_EQ(policy.global_step(), 0u);
    EXPECT_TRUE(policy.FinishSparseStep(0, g0, 0.1f).ok());
    second.join();
    EXPECT_EQ(policy.global_step(), 2u);
    EXPECT_EQ(policy.turn(), 0);
  });
}

// Cancel() releases a worker blocked in a sparse step of each ordering with kCancelled.
TEST(SparsePolicy, CancelReleasesAWorkerWaitingInASparseStep) {
  WithWatchdog(kWatchdogS, "cancelled sparse steps", [] {
    SparseGradient g(kParams);
    g.Accumulate(2, 1.0f);
    {
      auto store = InitialStore();
      Locked policy(store.get(), 2, SgdOptions{});
      ASSERT_TRUE(policy.BeginSparseStep(0).ok());
      std::thread waiter([&] {
        EXPECT_EQ(policy.BeginSparseStep(1).status().code(), absl::StatusCode::kCancelled);
      });
      while (policy.num_waiting() < 1) std::this_thread::yield();
      policy.Cancel();
      waiter.join();
    }
    {
      auto store = InitialStore();
      RoundRobin policy(store.get(), 3, SgdOptions{});
      std::thread waiter([&] {
        // Worker 0, whose turn it is, never finishes a step: worker 1 waits for it.
        EXPECT_TRUE(policy.BeginSparseStep(1).ok());
        EXPECT_EQ(policy.FinishSparseStep(1, g, 0.1f).status().code(),
                  absl::StatusCode::kCancelled);
      });
      while (policy.num_waiting() < 1) std::this_thread::yield();
      policy.Cancel();
      waiter.join();
    }
    {
      auto store = InitialStore();
      StaleSynchronous policy(store.get(), 2, SgdOptions{}, 0);
      ASSERT_TRUE(policy.BeginSparseStep(0).ok());
      ASSERT_TRUE(policy.FinishSparseStep(0, g, 0.1f).ok());
      // Worker 0 is one step ahead of worker 1 with bound 0: its next step waits.
      std::thread waiter([&] {
        EXPECT_EQ(policy.BeginSparseStep(0).status().code(), absl::StatusCode::kCancelled);
      });
      while (policy.num_waiting() < 1) std::this_thread::yield();
      policy.Cancel();
      waiter.join();
    }
    {
      auto store = InitialStore();
      TowerAverage policy(store.get(), 2, SgdOptions{});
      std::atomic<bool> returned{false};
      std::thread waiter([&] {
        // Worker 1 never arrives: worker 0 waits at the step's barrier.
        EXPECT_TRUE(policy.BeginSparseStep(0).ok());
        EXPECT_EQ(policy.FinishSparseStep(0, g, 0.1f).status().code(),
                  absl::StatusCode::kCancelled);
        returned = true;
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_FALSE(returned.load());
      policy.Cancel();
      waiter.join();
      EXPECT_EQ(policy.global_step(), 0u);
    }
  });
}

// Four workers on their own threads, each updating its own coordinates (j % 4 == w) while
// reading all of them live: with disjoint supports no update can be lost, so every coordinate
// ends exactly at initial - steps * lr * g (exact in float32 for these numbers).
TEST(SparsePolicy, ConcurrentAsyncSparseStepsOnDisjointSupportsLoseNoUpdate) {
  constexpr int kWorkers = 4;
  constexpr int kManySteps = 2000;
  auto store = std::make_unique<ParameterStore>(kParams);
  Hogwild policy(store.get(), kWorkers, SgdOptions{});
  WithWatchdog(kWatchdogS, "concurrent async sparse steps", [&] {
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        SparseGradient g(kParams);
        for (int step = 0; step < kManySteps; ++step) {
          absl::StatusOr<const float*> params = policy.BeginSparseStep(w);
          ASSERT_TRUE(params.ok()) << params.status();
          float seen = 0.0f;
          for (int64_t j = 0; j < kParams; ++j) seen += cpu::SharedLoad(*params + j);
          ASSERT_TRUE(std::isfinite(seen));
          g.Clear();
          for (int32_t j = w; j < kParams; j += kWorkers) g.Accumulate(j, 1.0f);
          ASSERT_TRUE(policy.FinishSparseStep(w, g, 0.25f).ok());
        }
      });
    }
    for (std::thread& t : threads) t.join();
  });
  EXPECT_EQ(policy.global_step(), static_cast<uint64_t>(kWorkers * kManySteps));
  for (int64_t j = 0; j < kParams; ++j) {
    EXPECT_EQ(store->unsafe_values()[j], -0.25f * kManySteps) << "coordinate " << j;
  }
}

}  // namespace
}  // namespace hogwild
