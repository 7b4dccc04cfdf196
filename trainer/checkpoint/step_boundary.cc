#include "trainer/checkpoint/step_boundary.h"

#include <algorithm>
#include <utility>

#include "core/logging.h"
#include "core/status_macros.h"

namespace hogwild {

StepBoundary::StepBoundary(Options options, SnapshotFn snapshot,
                           std::function<void()> release_peers)
    : options_(std::move(options)),
      snapshot_(std::move(snapshot)),
      release_peers_(std::move(release_peers)),
      next_step_(options_.start_next_step),
      next_due_step_(options_.start_global_step + options_.every_steps),
      last_checkpoint_time_(std::chrono::steady_clock::now()) {
  HOGWILD_CHECK(options_.num_workers >= 1, "StepBoundary: num_workers must be >= 1");
  HOGWILD_CHECK(SupportsCheckpoints(options_.mode) || options_.checkpoint_dir.empty(),
                "StepBoundary: this mode has no checkpoints");
  HOGWILD_CHECK(options_.cut_period >= 1, "StepBoundary: cut_period must be >= 1");
  if (static_cast<int>(next_step_.size()) != options_.num_workers) {
    next_step_.assign(options_.num_workers, 0);
  }
}

bool StepBoundary::StopRequested() const {
  return options_.stop_requested != nullptr &&
         options_.stop_requested->load(std::memory_order_relaxed);
}

bool StepBoundary::DueLocked(int64_t global_step) const {
  if (options_.checkpoint_dir.empty()) return false;
  if (options_.every_steps > 0 && global_step >= next_due_step_) return true;
  if (options_.every_seconds > 0) {
    const std::chrono::duration<double> since =
        std::chrono::steady_clock::now() - last_checkpoint_time_;
    if (since.count() >= options_.every_seconds) return true;
  }
  return false;
}

absl::Status StepBoundary::WriteLocked(std::unique_lock<std::mutex>& lock) {
  const std::vector<int64_t> next_step = next_step_;
  lock.unlock();
  absl::StatusOr<Checkpoint> checkpoint = snapshot_(next_step);
  // No update since the start: the state is the resumed checkpoint's, or a fresh model that is
  // not worth a file; writing it would replace a checkpoint (--overwrite_checkpoint, a stop
  // during start-up) with nothing trained.
  const bool untrained = checkpoint.ok() && checkpoint->global_step == options_.start_global_step;
  // A rank that takes part in the snapshot (the async cut) without writing it.
  const absl::Status status = !checkpoint.ok() ? checkpoint.status()
                              : untrained || !options_.writes_checkpoints
                                  ? absl::OkStatus()
                                  : WriteCheckpoint(options_.checkpoint_dir, *checkpoint);
  lock.lock();
  // Whether or not it worked, wait a full period before the next attempt.
  last_checkpoint_time_ = std::chrono::steady_clock::now();
  if (!checkpoint.ok()) return status;
  next_due_step_ = checkpoint->global_step + options_.every_steps;
  if (status.ok() && !untrained) last_checkpoint_step_ = checkpoint->global_step;
  return status;
}

void StepBoundary::SkipWriteLocked(int64_t global_step) {
  // The writing rank saved this very state: keep the same schedule as it does.
  last_checkpoint_time_ = std::chrono::steady_clock::now();
  next_due_step_ = global_step + options_.every_steps;
  if (global_step != options_.start_global_step) last_checkpoint_step_ = global_step;
}

absl::StatusOr<bool> StepBoundary::AtBoundary(int worker, int64_t next_step, int64_t global_step) {
  const bool checkpoints = !options_.checkpoint_dir.empty();
  switch (options_.mode) {
    case Mode::kAsync:
    case Mode::kLocked:  // async's cut: a worker parks between two steps, never holding the lock
    case Mode::kAsyncLocalSgd:  // anywhere in its round: the policy saves the round's state
      return AsyncBoundary(worker, next_step, global_step);
    case Mode::kSsp:
      if (checkpoints) return AsyncBoundary(worker, next_step, global_step);
      return StopOnlyBoundary();
    case Mode::kBackup:
    case Mode::kLocalSgd:
      if (checkpoints) return LockstepBoundary(worker, next_step, global_step);
      return StopOnlyBoundary();
    case Mode::kSync:
      break;
    default:
      return StopOnlyBoundary();
  }
  if (worker == 0) return SyncBoundary(next_step, global_step);
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return absl::CancelledError("training was cancelled");
  return stopped_;
}

absl::StatusOr<bool> StepBoundary::SyncBoundary(int64_t next_step, int64_t global_step) {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return absl::CancelledError("training was cancelled");
  // All towers of a sync run are at the same step.
  next_step_.assign(options_.num_workers, next_step);
  if (options_.start_agreement) return AgreedSyncBoundary(lock, global_step);
  const bool stop = StopRequested();
  if ((stop && !options_.checkpoint_dir.empty()) || DueLocked(global_step)) {
    HOGWILD_RETURN_IF_ERROR(WriteLocked(lock));
  }
  if (!stop) return false;
  stopped_ = true;
  lock.unlock();
  // The peers are blocked at the next step's barrier (or computing towards it): only
  // cancellation can release them; the trainer reads their kCancelled as part of the stop.
  release_peers_();
  return true;
}

absl::StatusOr<bool> StepBoundary::AgreedSyncBoundary(std::unique_lock<std::mutex>& lock,
                                                      int64_t global_step) {
  // The job's decision on the requests of the previous boundary, the same on every rank.
  lock.unlock();
  absl::StatusOr<uint32_t> job = options_.finish_agreement();
  lock.lock();
  HOGWILD_RETURN_IF_ERROR(job.status());
  const bool stop = (*job & kStopBit) != 0;
  if ((stop && !options_.checkpoint_dir.empty()) || (*job & kDueBit) != 0) {
    if (options_.writes_checkpoints) {
      HOGWILD_RETURN_IF_ERROR(WriteLocked(lock));
    } else {
      SkipWriteLocked(global_step);
    }
  }
  if (stop) {
    stopped_ = true;
    lock.unlock();
    release_peers_();  // as in SyncBoundary
    return true;
  }
  // This boundary's requests, after the write above moved the schedule on, for the next one.
  const uint32_t mine = (StopRequested() ? kStopBit : 0) | (DueLocked(global_step) ? kDueBit : 0);
  lock.unlock();
  const absl::Status started = options_.start_agreement(mine);
  lock.lock();
  HOGWILD_RETURN_IF_ERROR(started);
  return false;
}

absl::StatusOr<bool> StepBoundary::StopOnlyBoundary() {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return absl::CancelledError("training was cancelled");
  if (stopped_) return true;
  if (!StopRequested()) return false;
  stopped_ = true;
  lock.unlock();
  // The peers may wait for this worker (ssp's bound): only cancellation can release them; the
  // trainer reads their kCancelled as part of the stop.
  release_peers_();
  return true;
}

int64_t StepBoundary::NextCutTargetLocked() const {
  // A worker announced next_step_[w] before its current step, so its next boundary is at most
  // one past it: a target past every announcement is one no worker has passed.
  int64_t latest = 0;
  for (int64_t s : next_step_) latest = std::max(latest, s);
  const int64_t base = options_.start_next_step.empty() ? 0 : options_.start_next_step[0];
  const int64_t period = options_.cut_period;
  return base + ((latest + 1 - base) + period - 1) / period * period;
}

absl::StatusOr<bool> StepBoundary::LockstepBoundary(int worker, int64_t next_step,
                                                    int64_t global_step) {
  std::unique_lock<std::mutex> lock(mu_);
  next_step_[worker] = next_step;
  HOGWILD_CHECK(cut_target_ < 0 || next_step <= cut_target_,
                "StepBoundary: a worker passed the lockstep cut's target");
  if (cancelled_) return absl::CancelledError("training was cancelled");
  if (stopped_) return true;
  if (cut_target_ < 0 && (StopRequested() || DueLocked(global_step))) {
    cut_target_ = NextCutTargetLocked();
  }
  if (next_step != cut_target_) return false;
  // Wait at T for the others; the last to arrive takes the cut. Finished workers count, although
  // in lockstep every worker ends at the same step, so none can finish while another waits at T.
  const uint64_t cut = cuts_done_;
  ++at_target_;
  cv_.notify_all();
  // One writer: the others, woken while it writes with mu_ released, keep waiting.
  cv_.wait(lock, [&] {
    return cancelled_ || cuts_done_ != cut ||
           (!cut_writing_ && at_target_ + finished_ == options_.num_workers);
  });
  if (cancelled_) return absl::CancelledError("training was cancelled");
  if (cuts_done_ != cut) return stopped_;
  cut_writing_ = true;
  const absl::Status status = WriteLocked(lock);
  cut_writing_ = false;
  if (status.ok() && StopRequested()) stopped_ = true;
  cut_target_ = -1;
  at_target_ = 0;
  ++cuts_done_;
  cv_.notify_all();
  HOGWILD_RETURN_IF_ERROR(status);
  return stopped_;
}

bool StepBoundary::OthersQuiescentLocked() const {
  const int blocked = options_.blocked_in_policy ? options_.blocked_in_policy() : 0;
  return parked_ + finished_ + blocked == options_.num_workers - 1;
}

absl::StatusOr<bool> StepBoundary::AsyncBoundary(int worker, int64_t next_step,
                                                 int64_t global_step) {
  std::unique_lock<std::mutex> lock(mu_);
  next_step_[worker] = next_step;
  while (true) {
    if (cancelled_) return absl::CancelledError("training was cancelled");
    if (stopped_) return true;
    if (!pausing_) break;
    // Another worker is taking a snapshot: stay out of the parameters until it is done.
    ++parked_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !pausing_ || cancelled_; });
    --parked_;
  }
  if (options_.test_agreement) return AgreedAsyncBoundary(lock, global_step);
  const bool stop = StopRequested();
  if (!stop && !DueLocked(global_step)) return false;

  // This worker coordinates: park every other worker (or see it finished, or blocked in the
  // policy: ssp), then snapshot. The policy's waits do not notify cv_: poll while any may count.
  pausing_ = true;
  const auto quiescent = [this] { return OthersQuiescentLocked() || cancelled_; };
  if (options_.blocked_in_policy) {
    while (!cv_.wait_for(lock, std::chrono::milliseconds(1), quiescent)) {
    }
  } else {
    cv_.wait(lock, quiescent);
  }
  absl::Status status;
  if (cancelled_) {
    status = absl::CancelledError("training was cancelled");
  } else if (!options_.checkpoint_dir.empty()) {
    status = WriteLocked(lock);
  }
  if (status.ok() && stop) stopped_ = true;
  pausing_ = false;
  cv_.notify_all();
  HOGWILD_RETURN_IF_ERROR(status);
  if (stopped_ && options_.blocked_in_policy) {
    // Workers blocked in the policy (the ssp bound) never reach a boundary: only cancellation
    // releases them; the trainer reads their kCancelled as part of the stop.
    lock.unlock();
    release_peers_();
  }
  return stopped_;
}

absl::StatusOr<bool> StepBoundary::AgreedAsyncBoundary(std::unique_lock<std::mutex>& lock,
                                                       int64_t global_step) {
  if (!round_pending_) return false;
  // At most one poll per poll_period: an MPI_Test at every boundary cost a job of 35 us steps
  // 9% of its wall time (benchmarks/results/2026-12-02-mpi.md).
  const auto now = std::chrono::steady_clock::now();
  if (now - last_poll_ < options_.poll_period) return false;
  last_poll_ = now;
  HOGWILD_ASSIGN_OR_RETURN(const std::optional<uint32_t> job, options_.test_agreement());
  if (!job.has_value()) return false;  // the job has not decided yet: train on
  round_pending_ = false;
  const bool stop = (*job & kStopBit) != 0;
  if ((stop && !options_.checkpoint_dir.empty()) || (*job & kDueBit) != 0) {
    // Every rank acts on this round: park this rank's other workers, then the job's cut.
    pausing_ = true;
    cv_.wait(lock,
             [this] { return parked_ + finished_ == options_.num_workers - 1 || cancelled_; });
    const absl::Status status =
        cancelled_ ? absl::CancelledError("training was cancelled") : WriteLocked(lock);
    // The step schedule counts this rank's own updates (the snapshot's step is the job's).
    next_due_step_ = global_step + options_.every_steps;
    pausing_ = false;
    cv_.notify_all();
    HOGWILD_RETURN_IF_ERROR(status);
  }
  if (stop) {
    stopped_ = true;
    cv_.notify_all();
    return true;
  }
  const uint32_t mine =
      kBusyBit | (StopRequested() ? kStopBit : 0) | (DueLocked(global_step) ? kDueBit : 0);
  HOGWILD_RETURN_IF_ERROR(options_.start_agreement(mine));
  round_pending_ = true;
  return false;
}

absl::Status StepBoundary::StartAgreement() {
  if (!options_.test_agreement) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  HOGWILD_RETURN_IF_ERROR(options_.start_agreement(kBusyBit));
  round_pending_ = true;
  return absl::OkStatus();
}

absl::Status StepBoundary::FinishAgreement() {
  if (!options_.test_agreement) return absl::OkStatus();
  std::unique_lock<std::mutex> lock(mu_);
  while (round_pending_ && !cancelled_) {
    lock.unlock();
    const absl::StatusOr<uint32_t> job = options_.finish_agreement();
    lock.lock();
    HOGWILD_RETURN_IF_ERROR(job.status());
    round_pending_ = false;
    const bool stop = (*job & kStopBit) != 0;
    if ((stop && !options_.checkpoint_dir.empty()) || (*job & kDueBit) != 0) {
      HOGWILD_RETURN_IF_ERROR(WriteLocked(lock));  // every local worker has returned
    }
    if (stop) {
      stopped_ = true;
      break;
    }
    if ((*job & kBusyBit) == 0) break;  // every rank has finished: the same round everywhere
    // Still here for the others: only a stop request (no steps of its own are due).
    const uint32_t mine = StopRequested() ? kStopBit : 0;
    lock.unlock();
    const absl::Status started = options_.start_agreement(mine);
    lock.lock();
    HOGWILD_RETURN_IF_ERROR(started);
    round_pending_ = true;
  }
  return absl::OkStatus();
}

void StepBoundary::Finished(int worker, int64_t next_step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    next_step_[worker] = next_step;
    ++finished_;
  }
  cv_.notify_all();
}

void StepBoundary::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

bool StepBoundary::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_;
}

int64_t StepBoundary::last_checkpoint_step() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_checkpoint_step_;
}

absl::Status StepBoundary::WriteFinal() {
  std::unique_lock<std::mutex> lock(mu_);
  if (options_.checkpoint_dir.empty() || stopped_ || cancelled_) return absl::OkStatus();
  // The writing rank saves the same final state (sync: every rank ends with the same one).
  // async across processes: every rank takes part in the final cut.
  if (!options_.writes_checkpoints && !options_.test_agreement) return absl::OkStatus();
  return WriteLocked(lock);
}

}  // namespace hogwild
