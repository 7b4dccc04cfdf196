#include "sync/step_barrier.h"

#include "absl/base/internal/raw_logging.h"

namespace hogwild {

StepBarrier::StepBarrier(int parties) : parties_(parties) {
  ABSL_RAW_CHECK(parties >= 1, "StepBarrier: parties must be >= 1");
}

absl::Status StepBarrier::ArriveAndWait() {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return absl::CancelledError("step barrier cancelled");
  const uint64_t my_generation = generation_;
  if (++arrived_ == parties_) {
    // The last arrival opens the barrier: waiters see the generation change, so the barrier can
    // be re-entered immediately without a waiter missing its wake-up.
    arrived_ = 0;
    ++generation_;
    lock.unlock();
    released_.notify_all();
    return absl::OkStatus();
  }
  released_.wait(lock, [&] { return generation_ != my_generation || cancelled_; });
  if (generation_ != my_generation) return absl::OkStatus();
  return absl::CancelledError("step barrier cancelled");
}

void StepBarrier::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  released_.notify_all();
}

bool StepBarrier::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

}  // namespace hogwild
