#include "trainer/metrics/training_metrics.h"

#include <algorithm>
#include <utility>

#include "core/status_macros.h"

namespace hogwild {

TrainingMetrics::TrainingMetrics(int num_workers, int64_t train_size, ConvergenceLog* log,
                                 int64_t log_every, LogRowSink sink, PolicyCountersSource counters)
    : train_size_(std::max<int64_t>(1, train_size)),
      log_(log),
      log_every_(std::max<int64_t>(1, log_every)),
      start_(absl::Now()),
      sink_(std::move(sink)),
      counters_(std::move(counters)),
      windows_(num_workers),
      histogram_(kStalenessBuckets, 0) {}

TrainingMetrics::~TrainingMetrics() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Held& held : held_) {
    if (held.pending_eval >= 0 || held.drop) continue;
    if (!WriteLocked(held.row).ok()) break;  // the run already reported the log's error
  }
}

double TrainingMetrics::ElapsedSeconds() const {
  return absl::ToDoubleSeconds(absl::Now() - start_);
}

absl::Status TrainingMetrics::WriteLocked(const LogRow& row) {
  if (log_ != nullptr) HOGWILD_RETURN_IF_ERROR(log_->Write(row));
  // A sink that failed once is not called again (as the log writes nothing after an error).
  if (!sink_ || !sink_status_.ok()) return sink_status_;
  sink_status_ = sink_(row);
  return sink_status_;
}

void TrainingMetrics::FillPolicyCountersLocked(LogRow& row) const {
  if (!counters_) return;
  const PolicyCounters c = counters_();
  row.exchanges = c.exchanges;
  row.bytes_per_worker = c.bytes_per_worker;
  row.outer_step_norm = c.outer_step_norm;
  row.dropped = c.dropped;
}

absl::Status TrainingMetrics::EmitLocked(const LogRow& row) {
  if (!held_.empty()) {
    held_.push_back(Held{.row = row});
    return absl::OkStatus();
  }
  return WriteLocked(row);
}

absl::Status TrainingMetrics::FlushHeldLocked() {
  absl::Status status;
  while (!held_.empty() && held_.front().pending_eval < 0) {
    const Held held = std::move(held_.front());
    held_.pop_front();
    if (held.drop || !status.ok()) continue;  // after a write error, drop the rest as the log does
    status = WriteLocked(held.row);
  }
  return status;
}

absl::Status TrainingMetrics::RecordStep(int worker, int64_t examples, double loss_sum,
                                         std::optional<uint64_t> staleness, float lr,
                                         int64_t global_step, double delay_s,
                                         int64_t remote_staleness) {
  std::lock_guard<std::mutex> lock(mu_);
  examples_seen_ += examples;
  train_loss_sum_ += loss_sum;
  ++updates_;
  // In async mode a worker's global step was read before its update, so steps reach here
  // slightly out of order: a row reports the largest step recorded, which never decreases.
  last_global_step_ = std::max(last_global_step_, global_step);
  Window& w = windows_[worker];
  if (staleness.has_value()) {
    ++staleness_updates_;
    staleness_sum_ += static_cast<double>(*staleness);
    staleness_max_ = std::max(staleness_max_, *staleness);
    ++histogram_[std::min<uint64_t>(*staleness, kStalenessBuckets - 1)];
    ++w.staleness_steps;
    w.staleness_sum += static_cast<double>(*staleness);
    w.staleness_max = std::max(w.staleness_max, *staleness);
  }
  ++w.steps;
  w.delay_s += delay_s;
  w.examples += examples;
  w.loss_sum += loss_sum;
  if (remote_staleness >= 0) {
    ++exchanges_;
    remote_sum_ += remote_staleness;
    remote_max_ = std::max(remote_max_, remote_staleness);
    ++w.exchanges;
    w.remote_sum += remote_staleness;
    w.remote_max = std::max(w.remote_max, remote_staleness);
  }
  if (!w.closed_once && w.examples > 0) w.last_mean_loss = w.loss_sum / w.examples;
  if (w.steps < log_every_) return absl::OkStatus();
  return CloseWindowLocked(worker, lr);
}

absl::Status TrainingMetrics::CloseWindowLocked(int worker, float lr) {
  Window& w = windows_[worker];
  const double mean_loss = w.examples > 0 ? w.loss_sum / w.examples : 0.0;
  LogRow row{.wall_time_s = ElapsedSeconds(),
             .eval = false,
             .epoch = static_cast<double>(examples_seen_) / train_size_,
             .step = last_global_step_,
             .examples_seen = examples_seen_,
             .worker = worker,
             .train_loss = mean_loss,
             .staleness_mean = w.staleness_steps > 0 ? w.staleness_sum / w.staleness_steps : 0.0,
             .staleness_max = w.staleness_max,
             .lr = lr,
             .delay_s = w.delay_s,
             .eval_seconds = eval_seconds_};
  if (w.exchanges > 0) {
    row.remote_staleness_mean = static_cast<double>(w.remote_sum) / w.exchanges;
    row.remote_staleness_max = w.remote_max;
  }
  FillPolicyCountersLocked(row);
  w = Window{.last_mean_loss = mean_loss, .closed_once = true};
  return EmitLocked(row);
}

double TrainingMetrics::RecentLossLocked() const {
  double sum = 0.0;
  int count = 0;
  for (const Window& w : windows_) {
    if (w.closed_once || w.examples > 0) {
      sum += w.last_mean_loss;
      ++count;
    }
  }
  return count > 0 ? sum / count : 0.0;
}

int64_t TrainingMetrics::last_eval_step() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_eval_step_;
}

absl::Status TrainingMetrics::FlushWindows(float lr) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t worker = 0; worker < windows_.size(); ++worker) {
    if (windows_[worker].steps == 0) continue;
    HOGWILD_RETURN_IF_ERROR(CloseWindowLocked(static_cast<int>(worker), lr));
  }
  return absl::OkStatus();
}

TrainingMetrics::PendingEval TrainingMetrics::BeginEval(int64_t global_step, float lr) {
  std::lock_guard<std::mutex> lock(mu_);
  last_global_step_ = std::max(last_global_step_, global_step);
  PendingEval pending{
      .row = LogRow{.wall_time_s = ElapsedSeconds(),
                    .eval = true,
                    .epoch = static_cast<double>(examples_seen_) / train_size_,
                    .step = last_global_step_,
                    .examples_seen = examples_seen_,
                    .worker = -1,
                    .train_loss = RecentLossLocked(),
                    .staleness_mean =
                        staleness_updates_ > 0 ? staleness_sum_ / staleness_updates_ : 0.0,
                    .staleness_max = staleness_max_,
                    .lr = lr,
                    .eval_seconds = eval_seconds_},
      .started = absl::Now(),
      .id = next_eval_id_++};
  FillPolicyCountersLocked(pending.row);
  if (exchanges_ > 0) {
    pending.row.remote_staleness_mean = static_cast<double>(remote_sum_) / exchanges_;
    pending.row.remote_staleness_max = remote_max_;
  }
  // Its place in the log: every row recorded from now on is written after it.
  held_.push_back(Held{.row = pending.row, .pending_eval = pending.id});
  return pending;
}

absl::Status TrainingMetrics::FinishEval(const PendingEval& pending,
                                         const absl::StatusOr<EvalResult>& eval,
                                         const std::optional<EvalResult>& ema) {
  std::lock_guard<std::mutex> lock(mu_);
  ++evals_;
  eval_seconds_ += absl::ToDoubleSeconds(absl::Now() - pending.started);
  absl::Status status = eval.status();
  const auto it = std::find_if(held_.begin(), held_.end(), [&](const Held& h) {
    return h.pending_eval >= 0 && h.pending_eval == pending.id;
  });
  // Not found: a PendingEval finished twice, or not from BeginEval (a programmer error).
  if (it == held_.end()) return absl::InternalError("FinishEval of an evaluation not pending");
  it->pending_eval = -1;
  it->drop = !eval.ok();
  if (eval.ok()) {
    if (pending.row.step >= last_eval_step_) {
      last_eval_ = *eval;
      last_eval_step_ = pending.row.step;
    }
    it->row.test_loss = eval->loss;
    it->row.test_accuracy = eval->accuracy;
    if (ema) it->row.ema_test_accuracy = ema->accuracy;
  }
  const absl::Status written = FlushHeldLocked();
  return status.ok() ? written : status;
}

absl::Status TrainingMetrics::RecordEval(const EvalResult& eval, int64_t global_step, float lr,
                                         const std::optional<EvalResult>& ema) {
  return FinishEval(BeginEval(global_step, lr), eval, ema);
}

TrainingMetrics::Snapshot TrainingMetrics::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot s;
  s.wall_time_s = ElapsedSeconds();
  s.examples_seen = examples_seen_;
  s.updates = updates_;
  s.epoch = static_cast<double>(examples_seen_) / train_size_;
  s.recent_train_loss = RecentLossLocked();
  s.train_loss_sum = train_loss_sum_;
  s.last_eval = last_eval_;
  s.staleness_mean = staleness_updates_ > 0 ? staleness_sum_ / staleness_updates_ : 0.0;
  s.staleness_max = staleness_max_;
  s.evals = evals_;
  s.eval_seconds = eval_seconds_;
  return s;
}

std::vector<uint64_t> TrainingMetrics::StalenessHistogram() const {
  std::lock_guard<std::mutex> lock(mu_);
  return histogram_;
}

}  // namespace hogwild
