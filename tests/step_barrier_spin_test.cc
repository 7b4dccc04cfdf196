// The spin-then-block StepBarrier (sync/step_barrier.h): every generation orders all parties'
// writes before all parties' reads, in both the spinning and the sleeping path, and Cancel()
// releases spinners and sleepers.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sync/step_barrier.h"

namespace hogwild {
namespace {

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
TEST(StepBarrierSpin, SpinningPathOrdersWrites) {
  CheckGenerations(2, StepBarrier::kDefaultSpinIterations, 2000);
}

TEST(StepBarrierSpin, SleepingPathOrdersWrites) { CheckGenerations(3, 0, 500); }

TEST(StepBarrierSpin, CancelReleasesASleeper) {
  StepBarrier barrier(2, /*spin_iterations=*/0);
  absl::Status status;
  std::thread waiter([&] { status = barrier.ArriveAndWait(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  barrier.Cancel();
  waiter.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(barrier.ArriveAndWait().code(), absl::StatusCode::kCancelled);
}

TEST(StepBarrierSpin, CancelReleasesASpinner) {
  StepBarrier barrier(2, /*spin_iterations=*/1 << 30);
  absl::Status status;
  std::thread waiter([&] { status = barrier.ArriveAndWait(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  barrier.Cancel();
  waiter.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace hogwild
