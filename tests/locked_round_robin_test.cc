// The locked and round_robin policies (sync/locked.h, sync/round_robin.h): with one worker both
// are async bitwise for every optimizer; locked never lets two workers inside a step at once and
// every update has staleness 0; round_robin applies the updates in strict worker order, each on
// the parameters its worker's own previous update left, so a run with W = 3 is bitwise a
// sequential reference (and so reproducible); Cancel() releases every waiter with kCancelled and
// WorkerDone takes a worker out of the rotation. (Whole runs, failures, stops and divergence of
// both: tests/fault_injection_test.cc; one worker through Train(): async_equivalence_test.cc.)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "sync/hogwild.h"
#include "sync/locked.h"
#include "sync/parameter_store.h"
#include "sync/round_robin.h"
#include "tests/bitwise.h"
#include "tests/watchdog.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;

constexpr double kWatchdogS = 20.0;
constexpr int64_t kParams = 16;

std::unique_ptr<ParameterStore> InitialStore() {
  auto store = std::make_unique<ParameterStore>(kParams);
  for (int64_t i = 0; i < kParams; ++i) {
    store->unsafe_values()[i] = 0.5f - 0.07f * static_cast<float>(i);
  }
  return store;
}

// A gradient that depends on what the worker read, on the worker and on its step, so that a
// different read point or order of updates changes the result.
void Gradient(absl::Span<const float> params, int worker, int64_t step, std::vector<float>& g) {
  g.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    g[i] = 0.3f * params[i] + 0.01f * static_cast<float>((worker + 1) * (i + 1)) -
           0.002f * static_cast<float>(step);
  }
}

std::unique_ptr<UpdatePolicy> MakePolicy(Mode mode, ParameterStore* store, int workers,
                                         const SgdOptions& options) {
  switch (mode) {
    case Mode::kLocked:
      return std::make_unique<Locked>(store, workers, options);
    case Mode::kRoundRobin:
      return std::make_unique<RoundRobin>(store, workers, options);
    default:
      return std::make_unique<Hogwild>(store, workers, options);
  }
}

std::vector<SgdOptions> EveryOptimizer() {
  std::vector<SgdOptions> all;
  all.push_back(SgdOptions{});
  all.push_back(SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f, .clip_global_norm = 0.5f});
  for (OptimizerKind kind : {OptimizerKind::kNesterov, OptimizerKind::kAdam, OptimizerKind::kAdamW,
                             OptimizerKind::kRmsprop, OptimizerKind::kAdagrad}) {
    SgdOptions o;
    o.optimizer = kind;
    if (kind == OptimizerKind::kNesterov) o.momentum = 0.5f;
    o.weight_decay = 1e-2f;
    o.no_decay = {{2, 5}};
    o.moving_stats = {{12, 14}};
    all.push_back(o);
  }
  return all;
}

// One worker, driven from this thread: returns the final parameters and the staleness seen.
std::vector<float> RunOneWorker(Mode mode, const SgdOptions& options, uint64_t* max_staleness) {
  auto store = InitialStore();
  auto policy = MakePolicy(mode, store.get(), 1, options);
  std::vector<float> g;
  *max_staleness = 0;
  for (int64_t s = 0; s < 30; ++s) {
    auto params = policy->BeginStep(0);
    EXPECT_TRUE(params.ok()) << params.status();
    Gradient(params->HostSpan(), 0, s, g);
    auto stats = policy->FinishStep(0, DeviceSpan<const float>(g.data(), g.size()), 0.05f);
    EXPECT_TRUE(stats.ok()) << stats.status();
    *max_staleness = std::max(*max_staleness, stats->staleness);
  }
  EXPECT_TRUE(policy->WorkerDone(0).ok());
  EXPECT_EQ(policy->global_step(), 30u);
  std::vector<float> out(kParams);
  EXPECT_TRUE(policy->ReadParams(absl::MakeSpan(out)).ok());
  return out;
}

TEST(LockedRoundRobin, OneWorkerIsBitwiseAsyncForEveryOptimizer) {
  for (const SgdOptions& options : EveryOptimizer()) {
    SCOPED_TRACE(static_cast<int>(options.optimizer));
    uint64_t staleness = 0;
    const std::vector<float> async = RunOneWorker(Mode::kAsync, options, &staleness);
    for (Mode mode : {Mode::kLocked, Mode::kRoundRobin}) {
      SCOPED_TRACE(ModeName(mode));
      const std::vector<float> got = RunOneWorker(mode, options, &staleness);
      EXPECT_EQ(CountBitwiseDifferences(got, async), 0);
      EXPECT_EQ(staleness, 0u);
    }
  }
}

TEST(Locked, NoTwoWorkersAreEverInsideAStepAtOnceAndNoUpdateIsStale) {
  constexpr int kWorkers = 4;
  constexpr int64_t kSteps = 200;
  auto store = InitialStore();
  Locked policy(store.get(), kWorkers, SgdOptions{.momentum = 0.5f});
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::atomic<uint64_t> max_staleness{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      std::vector<float> g;
      for (int64_t s = 0; s < kSteps; ++s) {
        auto params = policy.BeginStep(w);
        ASSERT_TRUE(params.ok()) << params.status();
        const int now = inside.fetch_add(1) + 1;
        int seen = max_inside.load();
        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
        }
        // Long enough inside the step for a broken lock to let a peer in.
        Gradient(params->HostSpan(), w, s, g);
        std::this_thread::yield();
        inside.fetch_sub(1);
        auto stats = policy.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), 0.01f);
        ASSERT_TRUE(stats.ok()) << stats.status();
        uint64_t old = max_staleness.load();
        while (stats->staleness > old &&
               !max_staleness.compare_exchange_weak(old, stats->staleness)) {
        }
      }
      ASSERT_TRUE(policy.WorkerDone(w).ok());
    });
  }
  testing::WithWatchdog(kWatchdogS, "locked workers", [&] {
    for (std::thread& t : threads) t.join();
    return 0;
  });
  EXPECT_EQ(max_inside.load(), 1);
  EXPECT_EQ(max_staleness.load(), 0u);
  EXPECT_EQ(policy.global_step(), static_cast<uint64_t>(kWorkers * kSteps));
}

// Runs round_robin with one thread per worker, worker w taking steps[w] steps (uneven, so
// workers leave the rotation at different times). Each worker jitters its timing so that a
// read or an update that depended on the scheduler would show. Returns the final parameters;
// reads[w][k] is what worker w's step k read, staleness[w][k] its update's staleness.
std::vector<float> RunRoundRobin(const std::vector<int64_t>& steps, const SgdOptions& options,
                                 float lr, std::vector<std::vector<std::vector<float>>>* reads,
                                 std::vector<std::vector<uint64_t>>* staleness, unsigned seed) {
  const int workers = static_cast<int>(steps.size());
  auto store = InitialStore();
  RoundRobin policy(store.get(), workers, options);
  reads->assign(workers, {});
  staleness->assign(workers, {});
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      std::vector<float> g;
      unsigned state = seed * 31u + static_cast<unsigned>(w);
      for (int64_t s = 0; s < steps[w]; ++s) {
        auto params = policy.BeginStep(w);
        ASSERT_TRUE(params.ok()) << params.status();
        (*reads)[w].emplace_back(params->HostSpan().begin(), params->HostSpan().end());
        Gradient(params->HostSpan(), w, s, g);
        state = state * 1103515245u + 12345u;
        if ((state >> 16) % 3 == 0) {
          std::this_thread::sleep_for(std::chrono::microseconds((state >> 8) % 300));
        }
        auto stats = policy.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), lr);
        ASSERT_TRUE(stats.ok()) << stats.status();
        (*staleness)[w].push_back(stats->staleness);
      }
      ASSERT_TRUE(policy.WorkerDone(w).ok());
    });
  }
  testing::WithWatchdog(kWatchdogS, "round_robin workers", [&] {
    for (std::thread& t : threads) t.join();
    return 0;
  });
  EXPECT_EQ(policy.turn(), -1);
  std::vector<float> out(kParams);
  EXPECT_TRUE(policy.ReadParams(absl::MakeSpan(out)).ok());
  return out;
}

// The sequential reference: the same updates (W-worker Hogwild, so each worker keeps its own
// optimizer state) driven from one thread in the rotation's order, each worker's gradient
// computed on the parameters right after its own previous update.
std::vector<float> SequentialRoundRobin(const std::vector<int64_t>& steps,
                                        const SgdOptions& options, float lr,
                                        std::vector<std::vector<std::vector<float>>>* reads,
                                        std::vector<std::vector<uint64_t>>* staleness) {
  const int workers = static_cast<int>(steps.size());
  auto store = InitialStore();
  Hogwild updates(store.get(), workers, options);
  std::vector<std::vector<float>> after_own(workers, std::vector<float>(kParams));
  for (auto& p : after_own) store->Read(absl::MakeSpan(p));
  std::vector<uint64_t> own_version(workers, 0);
  reads->assign(workers, {});
  staleness->assign(workers, {});
  std::vector<float> g;
  for (int64_t round = 0;; ++round) {
    bool any = false;
    for (int w = 0; w < workers; ++w) {
      if (round >= steps[w]) continue;
      any = true;
      (*reads)[w].push_back(after_own[w]);
      Gradient(after_own[w], w, round, g);
      (*staleness)[w].push_back(updates.global_step() - own_version[w]);
      EXPECT_TRUE(updates.BeginStep(w).ok());
      EXPECT_TRUE(updates.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), lr).ok());
      EXPECT_TRUE(updates.ReadParams(absl::MakeSpan(after_own[w])).ok());
      own_version[w] = updates.global_step();
    }
    if (!any) break;
  }
  std::vector<float> out(kParams);
  EXPECT_TRUE(updates.ReadParams(absl::MakeSpan(out)).ok());
  return out;
}

// Plain SGD with lr 1 and a gradient of -1 on every element counts the updates: what worker w
// reads at its step k is the global position of its own previous update (+1), so the reads
// spell out the order in which the updates were applied.
TEST(RoundRobin, AppliesTheUpdatesInStrictWorkerOrderAsWorkersLeaveTheRotation) {
  const std::vector<int64_t> steps = {5, 7, 4};
  auto store = InitialStore();
  for (int64_t i = 0; i < kParams; ++i) store->unsafe_values()[i] = 0.0f;
  RoundRobin policy(store.get(), 3, SgdOptions{});
  std::vector<std::vector<float>> counts(3);
  std::vector<std::vector<uint64_t>> staleness(3);
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w) {
    threads.emplace_back([&, w] {
      // Worker 0 starts last: the others must still wait for its turn.
      if (w == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::vector<float> g(kParams, -1.0f);
      for (int64_t s = 0; s < steps[w]; ++s) {
        auto params = policy.BeginStep(w);
        ASSERT_TRUE(params.ok());
        counts[w].push_back(params->HostSpan()[0]);
        auto stats = policy.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), 1.0f);
        ASSERT_TRUE(stats.ok());
        staleness[w].push_back(stats->staleness);
      }
      ASSERT_TRUE(policy.WorkerDone(w).ok());
    });
  }
  testing::WithWatchdog(kWatchdogS, "round_robin workers", [&] {
    for (std::thread& t : threads) t.join();
    return 0;
  });
  // The rotation: rounds 0-3 are 0, 1, 2; round 4 is 0, 1 (worker 2 is done); rounds 5-6 are
  // worker 1 alone. Positions (1-based, the count after the update):
  //   worker 0: 1 4 7 10 13; worker 1: 2 5 8 11 14 15 16; worker 2: 3 6 9 12.
  const std::vector<std::vector<float>> want_reads = {
      {0, 1, 4, 7, 10}, {0, 2, 5, 8, 11, 14, 15}, {0, 3, 6, 9}};
  const std::vector<std::vector<uint64_t>> want_staleness = {
      {0, 2, 2, 2, 2}, {1, 2, 2, 2, 2, 0, 0}, {2, 2, 2, 2}};
  EXPECT_EQ(counts, want_reads);
  EXPECT_EQ(staleness, want_staleness);
  EXPECT_EQ(policy.global_step(), 16u);
}

TEST(RoundRobin, ThreeWorkersAreBitwiseTheSequentialReferenceRunToRun) {
  const std::vector<int64_t> steps = {9, 11, 8};
  SgdOptions adam;
  adam.optimizer = OptimizerKind::kAdam;
  adam.clip_global_norm = 0.8f;
  for (const SgdOptions& options : {SgdOptions{.momentum = 0.9f}, adam}) {
    SCOPED_TRACE(static_cast<int>(options.optimizer));
    std::vector<std::vector<std::vector<float>>> want_reads;
    std::vector<std::vector<uint64_t>> want_staleness;
    const std::vector<float> want =
        SequentialRoundRobin(steps, options, 0.05f, &want_reads, &want_staleness);
    for (unsigned run = 0; run < 3; ++run) {
      SCOPED_TRACE(run);
      std::vector<std::vector<std::vector<float>>> reads;
      std::vector<std::vector<uint64_t>> staleness;
      const std::vector<float> got = RunRoundRobin(steps, options, 0.05f, &reads, &staleness, run);
      EXPECT_EQ(CountBitwiseDifferences(got, want), 0);
      EXPECT_EQ(staleness, want_staleness);
      ASSERT_EQ(reads.size(), want_reads.size());
      for (size_t w = 0; w < reads.size(); ++w) {
        ASSERT_EQ(reads[w].size(), want_reads[w].size());
        for (size_t k = 0; k < reads[w].size(); ++k) {
          EXPECT_EQ(CountBitwiseDifferences(reads[w][k], want_reads[w][k]), 0)
              << "worker " << w << " step " << k;
        }
      }
    }
    // Not vacuous: the order matters (the reference with the workers' roles swapped differs).
    std::vector<std::vector<std::vector<float>>> unused_reads;
    std::vector<std::vector<uint64_t>> unused_staleness;
    EXPECT_GT(CountBitwiseDifferences(SequentialRoundRobin({11, 9, 8}, options, 0.05f,
                                                           &unused_reads, &unused_staleness),
                                      want),
              0);
  }
}

TEST(Locked, CancelReleasesTheWorkersWaitingForTheLock) {
  auto store = InitialStore();
  Locked policy(store.get(), 3, SgdOptions{});
  // Worker 0 takes the lock and fails before its FinishStep: it never releases it.
  ASSERT_TRUE(policy.BeginStep(0).ok());
  std::vector<absl::Status> got(3);
  std::vector<std::thread> threads;
  for (int w = 1; w < 3; ++w) {
    threads.emplace_back([&, w] { got[w] = policy.BeginStep(w).status(); });
  }
  testing::WithWatchdog(kWatchdogS, "locked cancel", [&] {
    while (policy.num_waiting() < 2) std::this_thread::yield();
    policy.Cancel();
    for (std::thread& t : threads) t.join();
    return 0;
  });
  for (int w = 1; w < 3; ++w) EXPECT_EQ(got[w].code(), absl::StatusCode::kCancelled) << got[w];
  // Later calls do not wait either, and the parameters stay readable.
  EXPECT_EQ(policy.BeginStep(1).status().code(), absl::StatusCode::kCancelled);
  std::vector<float> out(kParams);
  EXPECT_TRUE(policy.ReadParams(absl::MakeSpan(out)).ok());
}

TEST(Locked, AFusedStepWaitsForAStepInProgressRunsUnderTheLockAndIsCancellable) {
  auto store = InitialStore();
  Locked policy(store.get(), 2, SgdOptions{});
  // Worker 0 is inside a step: worker 1's fused step must wait for its FinishStep.
  ASSERT_TRUE(policy.BeginStep(0).ok());
  std::atomic<bool> ran{false};
  absl::Status fused;
  std::thread worker1([&] {
    fused = policy.RunFusedStep([&](float* live) {
      EXPECT_EQ(live, store->unsafe_values().data());
      live[0] += 1.0f;  // alone under the lock: a plain write is race-free here
      ran = true;
    });
  });
  const std::vector<float> g(kParams, 0.0f);
  testing::WithWatchdog(kWatchdogS, "locked fused step", [&] {
    while (policy.num_waiting() < 1) std::this_thread::yield();
    EXPECT_FALSE(ran.load());
    EXPECT_TRUE(policy.FinishStep(0, DeviceSpan<const float>(g.data(), g.size()), 0.1f).ok());
    worker1.join();
    return 0;
  });
  EXPECT_TRUE(fused.ok()) << fused;
  EXPECT_TRUE(ran.load());
  // A fused step behind a step that never finishes is released by Cancel.
  ASSERT_TRUE(policy.BeginStep(0).ok());
  std::thread waiting([&] { fused = policy.RunFusedStep([&](float*) { ran = false; }); });
  testing::WithWatchdog(kWatchdogS, "locked fused cancel", [&] {
    while (policy.num_waiting() < 1) std::this_thread::yield();
    policy.Cancel();
    waiting.join();
    return 0;
  });
  EXPECT_EQ(fused.code(), absl::StatusCode::kCancelled) << fused;
  EXPECT_TRUE(ran.load());  // the step did not run
}

TEST(Locked, AStepWithoutItsFinishIsRefusedNotADeadlock) {
  auto store = InitialStore();
  Locked policy(store.get(), 2, SgdOptions{});
  const std::vector<float> g(kParams, 0.0f);
  const DeviceSpan<const float> grad(g.data(), g.size());
  EXPECT_EQ(policy.FinishStep(0, grad, 0.1f).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(policy.BeginStep(0).ok());
  const absl::Status again = policy.BeginStep(0).status();
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(again.message(),
            "Locked::BeginStep(0): the worker is inside a step already; call FinishStep or "
            "FinishSparseStep first");
  EXPECT_TRUE(policy.FinishStep(0, grad, 0.1f).ok());
}

TEST(RoundRobin, CancelReleasesTheWorkersWaitingForTheirTurn) {
  auto store = InitialStore();
  RoundRobin policy(store.get(), 3, SgdOptions{});
  // Worker 0, whose turn it is, never finishes its step (it failed): 1 and 2 wait for it.
  ASSERT_TRUE(policy.BeginStep(0).ok());
  std::vector<absl::Status> got(3);
  std::vector<std::thread> threads;
  for (int w = 1; w < 3; ++w) {
    threads.emplace_back([&, w] {
      const std::vector<float> g(kParams, 0.1f);
      got[w] = policy.BeginStep(w).status();
      if (got[w].ok()) {
        got[w] = policy.FinishStep(w, DeviceSpan<const float>(g.data(), g.size()), 0.1f).status();
      }
    });
  }
  testing::WithWatchdog(kWatchdogS, "round_robin cancel", [&] {
    while (policy.num_waiting() < 2) std::this_thread::yield();
    policy.Cancel();
    for (std::thread& t : threads) t.join();
    return 0;
  });
  for (int w = 1; w < 3; ++w) EXPECT_EQ(got[w].code(), absl::StatusCode::kCancelled) << got[w];
  EXPECT_EQ(policy.global_step(), 0u);
}

TEST(RoundRobin, AWorkerWithNoStepsLeavesTheRotationAtOnce) {
  auto store = InitialStore();
  RoundRobin policy(store.get(), 3, SgdOptions{});
  // Worker 0 (first in turn) and worker 2 have empty shards; worker 1 never waits for them.
  ASSERT_TRUE(policy.WorkerDone(0).ok());
  ASSERT_TRUE(policy.WorkerDone(2).ok());
  const std::vector<float> g(kParams, 0.1f);
  testing::WithWatchdog(kWatchdogS, "round_robin alone", [&] {
    for (int s = 0; s < 3; ++s) {
      EXPECT_TRUE(policy.BeginStep(1).ok());
      EXPECT_TRUE(policy.FinishStep(1, DeviceSpan<const float>(g.data(), g.size()), 0.1f).ok());
    }
    return 0;
  });
  EXPECT_EQ(policy.global_step(), 3u);
  const absl::Status late =
      policy.FinishStep(0, DeviceSpan<const float>(g.data(), g.size()), 0.1f).status();
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(late.message(),
            "RoundRobin::FinishStep(0): the worker has left the rotation (WorkerDone)");
  ASSERT_TRUE(policy.WorkerDone(1).ok());
  EXPECT_EQ(policy.turn(), -1);
}

}  // namespace
}  // namespace hogwild
