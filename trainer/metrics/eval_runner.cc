#include "trainer/metrics/eval_runner.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/time/clock.h"

namespace hogwild {

EvalRunner::EvalRunner(Evaluator* evaluator, TrainingMetrics* metrics, bool background,
                       int max_queued)
    : evaluator_(evaluator),
      metrics_(metrics),
      background_(background),
      max_queued_(static_cast<size_t>(std::max(1, max_queued))) {
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

double EvalRunner::wait_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wait_seconds_;
}

absl::Status EvalRunner::RefusalLocked() const {
  if (!first_error_.ok()) return first_error_;
  if (cancelled_.load(std::memory_order_relaxed))
    return absl::CancelledError("evaluation cancelled");
  return absl::OkStatus();
}

absl::Status EvalRunner::Run(Job job) {
  job.pending.started = absl::Now();
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

absl::Status EvalRunner::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  if (background_) {
    changed_.wait(lock, [&] {
      return (queue_.empty() && !running_) || cancelled_.load(std::memory_order_relaxed);
    });
  }
  return RefusalLocked();
}

absl::Status EvalRunner::Submit(const TrainingMetrics::PendingEval& pending,
                                std::vector<float> params, std::vector<float> ema_params) {
  Job job{.pending = pending, .params = std::move(params), .ema_params = std::move(ema_params)};
  const absl::Time wait_start = absl::Now();
  if (!background_) {
    absl::Status status;
    {
      std::lock_guard<std::mutex> turn(inline_mu_);
      {
        std::lock_guard<std::mutex> lock(mu_);
        wait_seconds_ += absl::ToDoubleSeconds(absl::Now() - wait_start);
        status = RefusalLocked();
      }
      if (status.ok()) return RecordInline(Run(std::move(job)));
    }
    (void)metrics_->FinishEval(job.pending, status);
    return status;
  }
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock,
                [&] { return queue_.size() < max_queued_ || !RefusalLocked().ok() || stopping_; });
  wait_seconds_ += absl::ToDoubleSeconds(absl::Now() - wait_start);
  absl::Status status = RefusalLocked();
  if (status.ok() && stopping_) status = absl::FailedPreconditionError("Submit after Finish");
  if (!status.ok()) {
    lock.unlock();
    // Nobody will evaluate it: close the row so the rows held behind it are written.
    (void)metrics_->FinishEval(job.pending, status);
    return status;
  }
  queue_.push_back(std::move(job));
  changed_.notify_all();
  return absl::OkStatus();
}

absl::Status EvalRunner::RecordInline(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (first_error_.ok()) first_error_ = status;
  return status;
}

void EvalRunner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping_, and nothing left to evaluate
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    // Room in the queue for a waiting Submit.
    changed_.notify_all();
    const absl::Status refusal = RefusalLocked();
    lock.unlock();
    absl::Status status;
    if (refusal.ok()) {
      status = Run(std::move(job));
    } else {
      // After an error or a cancellation nobody waits for these: close the rows unevaluated.
      (void)metrics_->FinishEval(job.pending, refusal);
    }
    lock.lock();
    if (!status.ok() && first_error_.ok()) first_error_ = status;
    running_ = false;
    changed_.notify_all();
  }
}

absl::Status EvalRunner::Finish() {
  std::unique_lock<std::mutex> lock(mu_);
  if (background_) {
    // Not released by Cancel(): a cancelled evaluation, and the queued ones, still close rows.
    changed_.wait(lock, [&] { return queue_.empty() && !running_; });
    stopping_ = true;
    changed_.notify_all();
    lock.unlock();
    if (thread_.joinable()) thread_.join();
    lock.lock();
  }
  return RefusalLocked();
}

}  // namespace hogwild
