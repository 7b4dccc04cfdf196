#include "sync/locked.h"

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

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

absl::Status Locked::TakeLock(int worker, const char* call) {
  std::unique_lock<std::mutex> lock(mu_);
  if (holder_ == worker) {
    return absl::FailedPreconditionError(
        absl::StrFormat("Locked::%s(%d): the worker is inside a step already; call FinishStep or "
                        "FinishSparseStep first",
                        call, worker));
  }
  const auto free = [&] { return holder_ < 0 || cancelled_; };
  if (!free()) {
    ++waiting_;
    released_.wait(lock, free);
    --waiting_;
  }
  if (cancelled_) return absl::CancelledError("training was cancelled");
  holder_ = worker;
  return absl::OkStatus();
}

absl::StatusOr<StepStats> Locked::UpdateAndRelease(
    int worker, const char* call, const char* begin_call,
    absl::FunctionRef<absl::StatusOr<StepStats>()> update) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (holder_ != worker) {
      return absl::FailedPreconditionError(
          absl::StrFormat("Locked::%s(%d): the worker does not hold the lock; call %s first", call,
                          worker, begin_call));
    }
  }
  absl::StatusOr<StepStats> stats = update();
  {
    std::lock_guard<std::mutex> lock(mu_);
    holder_ = -1;
  }
  released_.notify_all();
  return stats;
}

absl::StatusOr<DeviceSpan<const float>> Locked::DoBeginStep(int worker) {
  HOGWILD_RETURN_IF_ERROR(TakeLock(worker, "BeginStep"));
  // The lock is this worker's until FinishStep: no update lands while it reads, computes and
  // updates, so Hogwild's read is exact.
  return updates().BeginStep(worker);
}

absl::StatusOr<const float*> Locked::DoBeginSparseStep(int worker) {
  HOGWILD_RETURN_IF_ERROR(TakeLock(worker, "BeginSparseStep"));
  // The live array, which no other worker updates until FinishSparseStep releases the lock.
  return updates().BeginSparseStep(worker);
}

absl::StatusOr<StepStats> Locked::DoFinishStep(int worker, DeviceSpan<const float> grad, float lr) {
  return UpdateAndRelease(worker, "FinishStep", "BeginStep",
                          [&] { return updates().FinishStep(worker, grad, lr); });
}

absl::StatusOr<StepStats> Locked::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                     float lr) {
  return UpdateAndRelease(worker, "FinishSparseStep", "BeginSparseStep",
                          [&] { return updates().FinishSparseStep(worker, grad, lr); });
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
