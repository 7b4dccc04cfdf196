#include "sync/step_barrier.h"

#include "absl/base/internal/raw_logging.h"

namespace hogwild {

StepBarrier::StepBarrier(int parties) : parties_(parties) {
  ABSL_RAW_CHECK(parties >= 1, "StepBarrier: parties must be >= 1");
}

absl::Status StepBarrier::ArriveAndWait() {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return absl::CancelledError("step barrier cancelled");
  const uint64_t my_generation = generation_;
  if (++arrived_ == parties_) {
    // The last arrival opens the barrier: waiters see the generation change, so the barrier can
    // be re-entered immediately without a waiter missing its wake-up.
    arrived_ = 0;
    ++generation_;
    return absl::OkStatus();
  }
  auto released = [this, my_generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return generation_ != my_generation || cancelled_;
  };
  mu_.Await(absl::Condition(&released));
  if (generation_ != my_generation) return absl::OkStatus();
  return absl::CancelledError("step barrier cancelled");
}

void StepBarrier::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

bool StepBarrier::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

}  // namespace hogwild
