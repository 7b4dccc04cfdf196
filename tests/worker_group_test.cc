// WorkerGroup: the first real error wins over the kCancelled of the workers it released, every
// error cancels the others, the tick runs while workers are busy, and Wait() joins everyone.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "trainer/worker_group.h"

namespace hogwild {
namespace {

TEST(WorkerGroup, TheFirstRealErrorWinsAndReleasesTheOthers) {
  std::mutex mu;
  std::condition_variable cv;
  bool cancelled = false;
  WorkerGroup group([&] {
    std::lock_guard<std::mutex> lock(mu);
    cancelled = true;
    cv.notify_all();
  });
  group.Start(4, [&](int w) -> absl::Status {
    if (w == 2) return absl::DataLossError("worker 2 failed");
    // The others block until cancelled, as at a barrier, then report kCancelled.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return cancelled; });
    return absl::CancelledError("released");
  });
  group.Wait(absl::Milliseconds(10), nullptr);
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(group.first_error().code(), absl::StatusCode::kDataLoss);
}

TEST(WorkerGroup, OnlyCancelledIsReportedAsCancelledAndSuccessIsOk) {
  WorkerGroup cancelled_only([] {});
  cancelled_only.Start(2, [](int) { return absl::CancelledError("stop"); });
  cancelled_only.Wait(absl::Milliseconds(10), nullptr);
  EXPECT_EQ(cancelled_only.first_error().code(), absl::StatusCode::kCancelled);

  std::atomic<int> cancels{0};
  WorkerGroup fine([&] { ++cancels; });
  std::atomic<int> ran{0};
  fine.Start(3, [&](int) {
    ++ran;
    return absl::OkStatus();
  });
  fine.Wait(absl::Milliseconds(10), nullptr);
  EXPECT_EQ(ran.load(), 3);
  EXPECT_TRUE(fine.first_error().ok());
  EXPECT_EQ(cancels.load(), 0);
}

TEST(WorkerGroup, TheTickRunsWhileWorkersAreBusy) {
  std::atomic<int> ticks{0};
  std::atomic<bool> release{false};
  WorkerGroup group([] {});
  group.Start(1, [&](int) {
    // Busy until the tick has run twice: a handshake, not a sleep of a guessed length.
    while (!release.load()) std::this_thread::yield();
    return absl::OkStatus();
  });
  group.Wait(absl::Milliseconds(1), [&] {
    if (++ticks >= 2) release = true;
  });
  EXPECT_GE(ticks.load(), 2);
  EXPECT_TRUE(group.first_error().ok());
}

}  // namespace
}  // namespace hogwild
