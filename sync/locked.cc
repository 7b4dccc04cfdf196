#include "sync/locked.h"

#include "absl/strings/str_format.h"

namespace hogwild {

Locked::Locked(ParameterStore* store, int num_workers, SgdOptions options)
    : HogwildInside(Mode::kLocked, store, num_workers, options, Hogwild::ReadPoint::kLatest) {}

int Locked::num_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

absl::Status Locked::DoReadParams(absl::Span<float> out) const {
  std::unique_lock<std::mutex> lock(mu_);
  // Between two steps: no update is half applied. Holding mu_ keeps the next step out while the
  // copy runs.
  released_.wait(lock, [&] { return holder_ < 0 || cancelled_; });
  return HogwildInside::DoReadParams(out);
}

absl::StatusOr<DeviceSpan<const float>> Locked::DoBeginStep(int worker) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (holder_ == worker) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "Locked::BeginStep(%d): the worker is inside a step already; call FinishStep first",
          worker));
    }
    const auto free = [&] { return holder_ < 0 || cancelled_; };
    if (!free()) {
      ++waiting_;
      released_.wait(lock, free);
      --waiting_;
    }
    if (cancelled_) return absl::CancelledError("training was cancelled");
    holder_ = worker;
  }
  // The lock is this worker's until FinishStep: no update lands while it reads, computes and
  // updates, so Hogwild's read is exact.
  return updates().BeginStep(worker);
}

absl::StatusOr<StepStats> Locked::DoFinishStep(int worker, DeviceSpan<const float> grad, float lr) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (holder_ != worker) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "Locked::FinishStep(%d): the worker does not hold the lock; call BeginStep first",
          worker));
    }
  }
  absl::StatusOr<StepStats> stats = updates().FinishStep(worker, grad, lr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    holder_ = -1;
  }
  released_.notify_all();
  return stats;
}

void Locked::DoCancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  released_.notify_all();
  HogwildInside::DoCancel();
}

}  // namespace hogwild
