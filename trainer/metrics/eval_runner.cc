#include "trainer/metrics/eval_runner.h"

#include <utility>

namespace hogwild {

EvalRunner::EvalRunner(Evaluator* evaluator, TrainingMetrics* metrics, bool background)
    : evaluator_(evaluator), metrics_(metrics), background_(background) {
  if (background_) thread_ = std::thread([this] { Loop(); });
}

EvalRunner::~EvalRunner() {
  Cancel();
  (void)Finish();  // its status was the caller's to take; a destructor only joins
}

void EvalRunner::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  // Under the lock, so a waiter that has just checked the flag cannot miss the notification.
  cancelled_.store(true, std::memory_order_release);
  changed_.notify_all();
}

absl::Status EvalRunner::Run(const Job& job) {
  absl::StatusOr<EvalResult> eval = evaluator_->Evaluate(job.params, &cancelled_);
  std::optional<EvalResult> ema;
  if (eval.ok() && !job.ema_params.empty()) {
    absl::StatusOr<EvalResult> e = evaluator_->Evaluate(job.ema_params, &cancelled_);
    if (e.ok()) {
      ema = *e;
    } else {
      eval = e.status();
    }
  }
  return metrics_->FinishEval(job.pending, eval, ema);
}

absl::Status EvalRunner::WaitIdleLocked(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [&] { return !busy_ || cancelled_.load(std::memory_order_relaxed); });
  if (!first_error_.ok()) return first_error_;
  if (cancelled_.load(std::memory_order_relaxed))
    return absl::CancelledError("evaluation cancelled");
  return absl::OkStatus();
}

absl::Status EvalRunner::WaitIdle() {
  if (!background_) {
    std::lock_guard<std::mutex> lock(mu_);
    return first_error_;
  }
  std::unique_lock<std::mutex> lock(mu_);
  return WaitIdleLocked(lock);
}

absl::Status EvalRunner::Submit(const TrainingMetrics::PendingEval& pending,
                                std::vector<float> params, std::vector<float> ema_params) {
  Job job{.pending = pending, .params = std::move(params), .ema_params = std::move(ema_params)};
  if (!background_) {
    const absl::Status status = Run(job);
    std::lock_guard<std::mutex> lock(mu_);
    if (first_error_.ok()) first_error_ = status;
    return status;
  }
  std::unique_lock<std::mutex> lock(mu_);
  absl::Status status = WaitIdleLocked(lock);
  if (status.ok() && stopping_) status = absl::FailedPreconditionError("Submit after Finish");
  if (!status.ok()) {
    lock.unlock();
    // Nobody will evaluate it: close the row so the rows held behind it are written.
    (void)metrics_->FinishEval(pending, status);
    return status;
  }
  job_ = std::move(job);
  busy_ = true;
  changed_.notify_all();
  return absl::OkStatus();
}

void EvalRunner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    changed_.wait(lock, [&] { return job_.has_value() || stopping_; });
    if (!job_) return;  // stopping_, and nothing left to evaluate
    const Job job = std::move(*job_);
    job_.reset();
    lock.unlock();
    const absl::Status status = Run(job);
    lock.lock();
    if (!status.ok() && first_error_.ok()) first_error_ = status;
    busy_ = false;
    changed_.notify_all();
  }
}

absl::Status EvalRunner::Finish() {
  std::unique_lock<std::mutex> lock(mu_);
  if (background_) {
    // Not WaitIdleLocked: after Cancel() the running evaluation still has to close its row.
    changed_.wait(lock, [&] { return !busy_; });
    stopping_ = true;
    changed_.notify_all();
    lock.unlock();
    if (thread_.joinable()) thread_.join();
    lock.lock();
  }
  if (!first_error_.ok()) return first_error_;
  if (cancelled_.load(std::memory_order_relaxed))
    return absl::CancelledError("evaluation cancelled");
  return absl::OkStatus();
}

}  // namespace hogwild
