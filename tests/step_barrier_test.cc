// The reusable, cancellable step barrier (sync/step_barrier.h): many threads, many generations,
// no lost wake-ups, the happens-before edges the tower-averaging step relies on, and Cancel()
// releasing blocked waiters within a bounded time.
//
// Every wait in this file is bounded: a watchdog cancels the barrier when a run takes too long,
// so a lost wake-up fails the test instead of hanging it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sync/step_barrier.h"

namespace hogwild {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

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

TEST(StepBarrier, CancelReleasesBlockedWaitersPromptlyAndLaterCallsFail) {
  // One party never arrives, so the others block until Cancel().
  constexpr int kWaiters = 6;
  StepBarrier barrier(kWaiters + 1);
  std::atomic<int> blocked{0}, returned{0}, cancelled{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWaiters; ++t) {
    threads.emplace_back([&] {
      blocked.fetch_add(1);
      const absl::Status s = barrier.ArriveAndWait();
      if (s.code() == absl::StatusCode::kCancelled) cancelled.fetch_add(1);
      returned.fetch_add(1);
    });
  }
  while (blocked.load() < kWaiters) std::this_thread::yield();
  // Give them time to really block inside ArriveAndWait; nobody may be released yet.
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(returned.load(), 0) << "released before the last party arrived";

  const auto cancel_time = steady_clock::now();
  barrier.Cancel();
  const auto deadline = cancel_time + std::chrono::seconds(5);
  while (returned.load() < kWaiters && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  const auto release_ms =
      std::chrono::duration_cast<milliseconds>(steady_clock::now() - cancel_time).count();
  ASSERT_EQ(returned.load(), kWaiters) << "Cancel() did not release every waiter within 5 s";
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(cancelled.load(), kWaiters);
  EXPECT_LT(release_ms, 1000);
  ::testing::Test::RecordProperty("cancel_release_ms", static_cast<int>(release_ms));

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

}  // namespace
}  // namespace hogwild
