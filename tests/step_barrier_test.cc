// The reusable, cancellable step barrier (sync/step_barrier.h): many threads, many generations,
// no lost wake-ups, the happens-before edges the tower-averaging step relies on, in both the
// spinning and the sleeping path, and Cancel() releasing spinners and sleepers.
//
// Every wait in this file is bounded: a watchdog cancels the barrier (or ends the test) when a
// run takes too long, so a lost wake-up fails the test instead of hanging it. No test sleeps or
// times anything: a waiter is known to be blocked when the kernel says it is asleep
// (tests/thread_state.h).
#include "sync/step_barrier.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/thread_state.h"
#include "tests/watchdog.h"

namespace hogwild {
namespace {

using std::chrono::milliseconds;

// Bounds a hang only (sanitizer builds included); a healthy wait takes microseconds.
constexpr double kHangS = 60.0;

// Runs fn(t) on `threads` threads; if they have not all returned within `limit`, cancels the
// barrier (releasing anyone stuck in it) and reports the hang. Returns true when all finished in
// time.
template <typename Fn>
bool RunWithWatchdog(StepBarrier& barrier, int threads, milliseconds limit, Fn fn) {
  std::mutex mu;
  std::condition_variable cv;
  int running = threads;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      fn(t);
      {
        std::lock_guard<std::mutex> lock(mu);
        --running;
      }
      cv.notify_all();
    });
  }
  bool in_time;
  {
    std::unique_lock<std::mutex> lock(mu);
    in_time = cv.wait_for(lock, limit, [&] { return running == 0; });
  }
  if (!in_time) barrier.Cancel();
  for (std::thread& t : pool) t.join();
  return in_time;
}

TEST(StepBarrier, ManyThreadsManyGenerationsNoLostWakeUps) {
  constexpr int kThreads = 8, kGenerations = 2000;
  StepBarrier barrier(kThreads);
  // arrivals[g]: threads that reached generation g. Exactly kThreads when anyone leaves it: a
  // thread released early (or a generation opened twice) sees fewer.
  std::vector<std::atomic<int>> arrivals(kGenerations);
  std::atomic<int64_t> early_releases{0}, errors{0};
  const bool finished = RunWithWatchdog(barrier, kThreads, milliseconds(60000), [&](int) {
    for (int g = 0; g < kGenerations; ++g) {
      arrivals[g].fetch_add(1);
      if (!barrier.ArriveAndWait().ok()) return void(errors.fetch_add(1));
      if (arrivals[g].load() != kThreads) early_releases.fetch_add(1);
    }
  });
  EXPECT_TRUE(finished) << "threads still blocked after 60 s: a lost wake-up";
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(early_releases.load(), 0);
  for (int g = 0; g < kGenerations; ++g) ASSERT_EQ(arrivals[g].load(), kThreads) << g;
}

TEST(StepBarrier, WritesBeforeTheBarrierAreVisibleAfterIt) {
  // The tower-averaging pattern: each thread writes its own slot (plain, non-atomic memory),
  // meets the others, reads every slot, and meets them again before the next write. The barrier
  // alone orders these accesses; ThreadSanitizer (--config=tsan) reports a race if it does not.
  constexpr int kThreads = 5, kGenerations = 500;
  StepBarrier barrier(kThreads);
  std::vector<int64_t> slots(kThreads, -1);
  std::atomic<int64_t> stale_reads{0}, errors{0};
  const bool finished = RunWithWatchdog(barrier, kThreads, milliseconds(60000), [&](int t) {
    for (int64_t g = 0; g < kGenerations; ++g) {
      slots[t] = g * kThreads + t;
      if (!barrier.ArriveAndWait().ok()) return void(errors.fetch_add(1));
      for (int u = 0; u < kThreads; ++u) {
        if (slots[u] != g * kThreads + u) stale_reads.fetch_add(1);
      }
      if (!barrier.ArriveAndWait().ok()) return void(errors.fetch_add(1));
    }
  });
  EXPECT_TRUE(finished);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(stale_reads.load(), 0);
}

TEST(StepBarrier, OnePartyNeverWaits) {
  StepBarrier barrier(1);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(barrier.ArriveAndWait().ok());
  EXPECT_FALSE(barrier.cancelled());
}

TEST(StepBarrier, CancelReleasesBlockedWaitersAndLaterCallsFail) {
  // One party never arrives, so the others block until Cancel().
  constexpr int kWaiters = 6;
  StepBarrier barrier(kWaiters + 1);
  std::atomic<int> returned{0}, cancelled{0};
  std::vector<std::atomic<pid_t>> tids(kWaiters);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWaiters; ++t) {
    threads.emplace_back([&, t] {
      tids[t].store(testing::CurrentThreadId());
      const absl::Status s = barrier.ArriveAndWait();
      if (s.code() == absl::StatusCode::kCancelled) cancelled.fetch_add(1);
      returned.fetch_add(1);
    });
  }
  // Every waiter asleep in ArriveAndWait (past its spin), not merely about to arrive: the
  // wake-up below is the one that could be lost.
  for (int t = 0; t < kWaiters; ++t) {
    while (tids[t].load() == 0) std::this_thread::yield();
    EXPECT_TRUE(testing::WaitUntilAsleep(tids[t].load(), kHangS)) << "waiter " << t;
  }
  EXPECT_EQ(returned.load(), 0) << "released before the last party arrived";

  testing::WithWatchdog(kHangS, "waiters released by Cancel()", [&] {
    barrier.Cancel();
    for (std::thread& t : threads) t.join();
  });
  EXPECT_EQ(returned.load(), kWaiters);
  EXPECT_EQ(cancelled.load(), kWaiters);

  EXPECT_TRUE(barrier.cancelled());
  barrier.Cancel();  // idempotent
  for (int i = 0; i < 3; ++i) {
    const absl::Status later = barrier.ArriveAndWait();
    EXPECT_EQ(later.code(), absl::StatusCode::kCancelled) << later;
  }
}

TEST(StepBarrier, CancelDuringReuseReleasesEveryone) {
  // Threads loop on the barrier; one of them cancels at generation 300 instead of arriving.
  // Everyone must come out (kCancelled), with no generation completed twice.
  constexpr int kThreads = 4, kCancelAt = 300;
  StepBarrier barrier(kThreads);
  std::atomic<int> cancelled_returns{0};
  const bool finished = RunWithWatchdog(barrier, kThreads, milliseconds(30000), [&](int t) {
    for (int g = 0;; ++g) {
      if (t == 0 && g == kCancelAt) {
        barrier.Cancel();
        cancelled_returns.fetch_add(1);
        return;
      }
      const absl::Status s = barrier.ArriveAndWait();
      if (!s.ok()) {
        EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
        EXPECT_EQ(g, kCancelAt) << "thread " << t;
        cancelled_returns.fetch_add(1);
        return;
      }
    }
  });
  EXPECT_TRUE(finished) << "a waiter stayed blocked after Cancel()";
  EXPECT_EQ(cancelled_returns.load(), kThreads);
}

// ---- The spinning and the sleeping path ---------------------------------------------------------

// Each party writes its slot (plain int, no atomics) then meets the others; after the barrier
// every party reads every slot: a missing happens-before edge shows up as a wrong value here
// and as a race under ThreadSanitizer.
void CheckGenerations(int parties, int spin_iterations, int generations) {
  StepBarrier barrier(parties, spin_iterations);
  std::vector<int> slots(parties, -1);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < parties; ++p) {
    threads.emplace_back([&, p] {
      for (int g = 0; g < generations; ++g) {
        slots[p] = g;
        if (!barrier.ArriveAndWait().ok()) ++errors;
        for (int q = 0; q < parties; ++q) {
          if (slots[q] != g) ++errors;
        }
        // Nobody may write the next generation before everyone has read this one.
        if (!barrier.ArriveAndWait().ok()) ++errors;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
}

// Two parties (the cores of the machines this runs on), the default spin: mostly spins.
TEST(StepBarrier, SpinningPathOrdersWrites) {
  CheckGenerations(2, StepBarrier::kDefaultSpinIterations, 2000);
}

TEST(StepBarrier, SleepingPathOrdersWrites) { CheckGenerations(3, 0, 500); }

TEST(StepBarrier, CancelReleasesASleeper) {
  StepBarrier barrier(2, /*spin_iterations=*/0);
  absl::Status status;
  std::atomic<pid_t> tid{0};
  std::thread waiter([&] {
    tid.store(testing::CurrentThreadId());
    status = barrier.ArriveAndWait();
  });
  while (tid.load() == 0) std::this_thread::yield();
  EXPECT_TRUE(testing::WaitUntilAsleep(tid.load(), kHangS));
  testing::WithWatchdog(kHangS, "a sleeper released by Cancel()", [&] {
    barrier.Cancel();
    waiter.join();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(barrier.ArriveAndWait().code(), absl::StatusCode::kCancelled);
}

TEST(StepBarrier, CancelReleasesASpinner) {
  // 2^30 pause instructions: seconds of spinning, so once the waiter has arrived it is spinning,
  // not asleep. Cancel() comes right after the waiter says it is arriving; wherever it lands (in
  // the spin, or just before the arrival), the waiter must come out with kCancelled.
  StepBarrier barrier(2, /*spin_iterations=*/1 << 30);
  absl::Status status;
  std::atomic<bool> arriving{false};
  std::thread waiter([&] {
    arriving.store(true);
    status = barrier.ArriveAndWait();
  });
  while (!arriving.load()) std::this_thread::yield();
  testing::WithWatchdog(kHangS, "a spinner released by Cancel()", [&] {
    barrier.Cancel();
    waiter.join();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace hogwild
