#include "sync/stale_synchronous.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/logging.h"
#include "core/status_macros.h"

namespace hogwild {

StaleSynchronous::StaleSynchronous(ParameterStore* store, int num_workers, SgdOptions options,
                                   int64_t staleness_bound)
    : HogwildInside(Mode::kSsp, store, num_workers, options, Hogwild::ReadPoint::kLatest),
      bound_(staleness_bound),
      clocks_(num_workers, 0),
      done_(num_workers, false),
      waiting_on_bound_(num_workers, false) {
  HOGWILD_CHECK(staleness_bound >= 0, "StaleSynchronous: staleness_bound must be >= 0");
}

void StaleSynchronous::DoRestoreWorkerSteps(const std::vector<int64_t>& steps) {
  std::lock_guard<std::mutex> lock(mu_);
  // A worker's clock is the steps it has completed: its next batch index in its own data plan.
  if (!steps.empty()) clocks_ = steps;
}

int64_t StaleSynchronous::clock(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return clocks_[worker];
}

int64_t StaleSynchronous::min_clock() const {
  std::lock_guard<std::mutex> lock(mu_);
  return MinClockLocked();
}

int StaleSynchronous::num_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

int StaleSynchronous::num_blocked_workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  int blocked = 0;
  for (size_t w = 0; w < waiting_on_bound_.size(); ++w) {
    if (waiting_on_bound_[w] && !MayBeginStepLocked(static_cast<int>(w))) ++blocked;
  }
  return blocked;
}

int64_t StaleSynchronous::MinClockLocked() const {
  int64_t min = std::numeric_limits<int64_t>::max();
  for (size_t w = 0; w < clocks_.size(); ++w) {
    if (!done_[w]) min = std::min(min, clocks_[w]);
  }
  if (min != std::numeric_limits<int64_t>::max()) return min;
  return *std::max_element(clocks_.begin(), clocks_.end());
}

bool StaleSynchronous::MayBeginStep(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return MayBeginStepLocked(worker);
}

bool StaleSynchronous::MayBeginStepLocked(int worker) const {
  return clocks_[worker] - MinClockLocked() <= bound_;
}

absl::Status StaleSynchronous::WaitForBound(int worker) {
  std::unique_lock<std::mutex> lock(mu_);
  auto may_start = [&] { return cancelled_ || MayBeginStepLocked(worker); };
  if (!may_start()) {
    ++waiting_;
    waiting_on_bound_[worker] = true;
    advanced_.wait(lock, may_start);
    waiting_on_bound_[worker] = false;
    --waiting_;
  }
  if (cancelled_) return absl::CancelledError("training was cancelled");
  return absl::OkStatus();
}

absl::StatusOr<StepStats> StaleSynchronous::AdvanceClock(int worker,
                                                         absl::StatusOr<StepStats> stats) {
  if (!stats.ok()) return stats;
  bool was_slowest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_slowest = clocks_[worker] == MinClockLocked();
    ++clocks_[worker];
  }
  // Only the slowest worker's progress can let a waiting worker through.
  if (was_slowest) advanced_.notify_all();
  return stats;
}

absl::StatusOr<DeviceSpan<const float>> StaleSynchronous::DoBeginStep(int worker) {
  HOGWILD_RETURN_IF_ERROR(WaitForBound(worker));
  return updates().BeginStep(worker);
}

absl::StatusOr<const float*> StaleSynchronous::DoBeginSparseStep(int worker) {
  HOGWILD_RETURN_IF_ERROR(WaitForBound(worker));
  return updates().BeginSparseStep(worker);
}

absl::StatusOr<StepStats> StaleSynchronous::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                         float lr) {
  return AdvanceClock(worker, updates().FinishStep(worker, grad, lr));
}

absl::StatusOr<StepStats> StaleSynchronous::DoFinishSparseStep(int worker,
                                                               const SparseGradient& grad,
                                                               float lr) {
  return AdvanceClock(worker, updates().FinishSparseStep(worker, grad, lr));
}

absl::Status StaleSynchronous::DoWorkerDone(int worker) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_[worker] = true;
  }
  advanced_.notify_all();
  return absl::OkStatus();
}

void StaleSynchronous::DoCancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  advanced_.notify_all();
  HogwildInside::DoCancel();
}

}  // namespace hogwild
