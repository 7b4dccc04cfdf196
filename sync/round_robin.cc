#include "sync/round_robin.h"

#include "absl/strings/str_format.h"

namespace hogwild {

RoundRobin::RoundRobin(ParameterStore* store, int num_workers, SgdOptions options)
    : HogwildInside(Mode::kRoundRobin, store, num_workers, options,
                    Hogwild::ReadPoint::kAfterOwnUpdate),
      done_(num_workers, false) {}

int RoundRobin::turn() const {
  std::lock_guard<std::mutex> lock(mu_);
  return turn_;
}

int RoundRobin::num_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

void RoundRobin::PassTurnLocked(int worker) {
  if (turn_ != worker) return;
  const int n = static_cast<int>(done_.size());
  turn_ = -1;
  for (int i = 1; i <= n; ++i) {
    if (!done_[(worker + i) % n]) {
      turn_ = (worker + i) % n;
      break;
    }
  }
}

absl::StatusOr<DeviceSpan<const float>> RoundRobin::DoBeginStep(int worker) {
  // Never waits: the snapshot is this worker's own, pinned by its previous update.
  return updates().BeginStep(worker);
}

absl::StatusOr<const float*> RoundRobin::DoBeginSparseStep(int worker) {
  // Never waits: the live array, read while the others apply their updates in turn.
  return updates().BeginSparseStep(worker);
}

absl::StatusOr<StepStats> RoundRobin::UpdateInTurn(
    int worker, const char* call, absl::FunctionRef<absl::StatusOr<StepStats>()> update) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_[worker]) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "RoundRobin::%s(%d): the worker has left the rotation (WorkerDone)", call, worker));
    }
    const auto mine = [&] { return turn_ == worker || cancelled_; };
    if (!mine()) {
      ++waiting_;
      turn_changed_.wait(lock, mine);
      --waiting_;
    }
    if (cancelled_) return absl::CancelledError("training was cancelled");
  }
  // Only the worker whose turn it is gets here, so the updates never overlap.
  absl::StatusOr<StepStats> stats = update();
  {
    std::lock_guard<std::mutex> lock(mu_);
    PassTurnLocked(worker);
  }
  turn_changed_.notify_all();
  return stats;
}

absl::StatusOr<StepStats> RoundRobin::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                   float lr) {
  return UpdateInTurn(worker, "FinishStep", [&] { return updates().FinishStep(worker, grad, lr); });
}

absl::StatusOr<StepStats> RoundRobin::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                         float lr) {
  return UpdateInTurn(worker, "FinishSparseStep",
                      [&] { return updates().FinishSparseStep(worker, grad, lr); });
}

absl::Status RoundRobin::DoWorkerDone(int worker) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_[worker] = true;
    PassTurnLocked(worker);
  }
  turn_changed_.notify_all();
  return absl::OkStatus();
}

void RoundRobin::DoCancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  turn_changed_.notify_all();
  HogwildInside::DoCancel();
}

}  // namespace hogwild
