#include "sim/sim_metrics.h"

#include <limits>

namespace hogwild {

absl::Status SimMetrics::RecordUpdate(int64_t examples, double loss_sum, uint64_t staleness,
                                      float lr, double time_s) {
  ++steps_;
  examples_ += examples;
  staleness_sum_ += static_cast<double>(staleness);
  if (histogram_.size() <= staleness) histogram_.resize(staleness + 1, 0);
  ++histogram_[staleness];
  // W <= kMaxWorkers bounds the staleness of an update far below 2^32 in any run that fits.
  staleness_.push_back(staleness > std::numeric_limits<uint32_t>::max()
                           ? std::numeric_limits<uint32_t>::max()
                           : static_cast<uint32_t>(staleness));
  ++window_steps_;
  window_examples_ += examples;
  window_loss_sum_ += loss_sum;
  window_staleness_sum_ += static_cast<double>(staleness);
  if (staleness > window_staleness_max_) window_staleness_max_ = staleness;
  if (window_steps_ >= log_every_) return Flush(lr, time_s);
  return absl::OkStatus();
}

void SimMetrics::RecordDropped(int64_t examples, double loss_sum) {
  examples_ += examples;
  window_examples_ += examples;
  window_loss_sum_ += loss_sum;
}

absl::Status SimMetrics::Flush(float lr, double time_s) {
  if (window_steps_ == 0) return absl::OkStatus();
  const double mean_loss = window_examples_ > 0 ? window_loss_sum_ / window_examples_ : 0.0;
  const LogRow row{.wall_time_s = time_s,
                   .eval = false,
                   .epoch = static_cast<double>(examples_) / train_size_,
                   .step = steps(),
                   .examples_seen = examples_,
                   .worker = -1,
                   .train_loss = mean_loss,
                   .staleness_mean = window_staleness_sum_ / window_steps_,
                   .staleness_max = window_staleness_max_,
                   .lr = lr};
  last_mean_loss_ = mean_loss;
  closed_once_ = true;
  window_steps_ = 0;
  window_examples_ = 0;
  window_loss_sum_ = 0.0;
  window_staleness_sum_ = 0.0;
  window_staleness_max_ = 0;
  return Write(row);
}

absl::Status SimMetrics::RecordEval(const EvalResult& eval, float lr, double time_s,
                                    const std::optional<EvalResult>& ema) {
  double train_loss = last_mean_loss_;
  if (!closed_once_ && window_examples_ > 0) train_loss = window_loss_sum_ / window_examples_;
  last_eval_step_ = steps();
  return Write(
      LogRow{.wall_time_s = time_s,
             .eval = true,
             .epoch = static_cast<double>(examples_) / train_size_,
             .step = steps(),
             .examples_seen = examples_,
             .worker = -1,
             .train_loss = train_loss,
             .test_loss = eval.loss,
             .test_accuracy = eval.accuracy,
             .staleness_mean = staleness_mean(),
             .staleness_max = staleness_max(),
             .lr = lr,
             .ema_test_accuracy = ema ? std::optional<double>(ema->accuracy) : std::nullopt});
}

double SimMetrics::staleness_mean() const {
  return steps_ == 0 ? 0.0 : staleness_sum_ / static_cast<double>(steps_);
}

void SimMetrics::RecordExchanges(int64_t exchanges, int64_t bytes_sent,
                                 std::optional<double> outer_step_norm) {
  communication_.exchanges += exchanges;
  communication_.bytes_sent += bytes_sent;
  if (outer_step_norm) communication_.last_outer_step_norm = outer_step_norm;
}

void SimMetrics::SetPolicy(const UpdatePolicy* policy) {
  if (policy_ != nullptr) {
    communication_ = policy_->communication();
    dropped_ = policy_->num_dropped();
  }
  policy_ = policy;
}

CommunicationStats SimMetrics::communication() const {
  if (policy_ != nullptr) return policy_->communication();
  CommunicationStats stats = communication_;
  stats.bytes_per_worker = static_cast<double>(stats.bytes_sent) / num_workers_;
  return stats;
}

int64_t SimMetrics::dropped() const {
  return policy_ != nullptr ? policy_->num_dropped() : dropped_;
}

absl::Status SimMetrics::Write(LogRow row) {
  const CommunicationStats c = communication();
  row.exchanges = c.exchanges;
  row.bytes_per_worker = c.bytes_per_worker;
  row.outer_step_norm = c.last_outer_step_norm;
  row.dropped = dropped();
  return log_ == nullptr ? absl::OkStatus() : log_->Write(row);
}

}  // namespace hogwild
