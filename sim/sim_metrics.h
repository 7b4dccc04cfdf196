// What a simulation records per update: counts, the exact staleness histogram and sequence, and
// the convergence-log rows (trainer/metrics/convergence_log.h's schema) stamped with simulated
// time. A train row closes every `log_every` global steps over all workers (worker -1); an
// evaluation row carries the mean training loss of the last closed window (or the open one).
// The rows' exchanges, bytes_per_worker, outer_step_norm and dropped columns are the counts the
// simulated policy records here (RecordExchanges, CountDropped), or, while a real policy runs
// the simulation (SetPolicy: async, ssp, async_local_sgd), that policy's.
//
// Thread-safety: none (the simulation's one thread).
#ifndef HOGWILD_SIM_SIM_METRICS_H_
#define HOGWILD_SIM_SIM_METRICS_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sync/update_policy.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/evaluator.h"

namespace hogwild {

class SimMetrics {
 public:
  // log may be null (no convergence log). train_size > 0, log_every >= 1, num_workers >= 1.
  SimMetrics(ConvergenceLog* log, int64_t train_size, int64_t log_every, int num_workers)
      : log_(log), train_size_(train_size), log_every_(log_every), num_workers_(num_workers) {}

  // `exchanges` communication rounds in which the simulated workers sent `bytes_sent` bytes in
  // all, and the outer step's norm when given: UpdatePolicy::RecordExchanges's contract, for
  // the policies the simulator computes itself (sync, backup, local_sgd). Record an exchange
  // before the RecordUpdate of its steps, so that their row counts it.
  void RecordExchanges(int64_t exchanges, int64_t bytes_sent,
                       std::optional<double> outer_step_norm = std::nullopt);
  // One gradient computed and not applied (backup's late one; async's too stale one is counted
  // by its real policy).
  void CountDropped() { ++dropped_; }
  // While `policy` is not null, communication() and dropped() are its (UpdatePolicy::
  // communication and num_dropped); SetPolicy(nullptr) keeps its last counts (call it before
  // the policy dies).
  void SetPolicy(const UpdatePolicy* policy);
  // The counts so far (CommunicationStats, with bytes_per_worker = bytes_sent / W).
  CommunicationStats communication() const;
  int64_t dropped() const;

  // One applied update: `examples` examples with loss sum `loss_sum`, its staleness, the
  // learning rate applied, at simulated time `time_s`; the global step becomes steps() + 1.
  // Errors: the log's write error.
  absl::Status RecordUpdate(int64_t examples, double loss_sum, uint64_t staleness, float lr,
                            double time_s);

  // A gradient computed but not applied (async's too stale one, SgdOptions::max_delay): its
  // examples and loss count, as the real trainer counts them; no step, no staleness.
  void RecordDropped(int64_t examples, double loss_sum);

  // An evaluation of the parameters after steps() updates, at simulated time `time_s`, and of
  // their weight EMA's (trainer/weight_ema.h) when there is one.
  absl::Status RecordEval(const EvalResult& eval, float lr, double time_s,
                          const std::optional<EvalResult>& ema = std::nullopt);

  // Writes the open window's train row, if it holds updates.
  absl::Status Flush(float lr, double time_s);

  int64_t steps() const { return steps_; }
  int64_t examples() const { return examples_; }
  int64_t last_eval_step() const { return last_eval_step_; }
  double staleness_mean() const;
  uint64_t staleness_max() const { return histogram_.empty() ? 0 : histogram_.size() - 1; }
  const std::vector<uint64_t>& histogram() const { return histogram_; }
  // Moves the staleness of every update out ([steps]); steps() and the rows are unaffected.
  std::vector<uint32_t> TakeStalenessPerUpdate() { return std::move(staleness_); }

 private:
  // Sets `row`'s exchanges, bytes_per_worker, outer_step_norm and dropped, then writes it.
  absl::Status Write(LogRow row);

  ConvergenceLog* const log_;
  const int64_t train_size_;
  const int64_t log_every_;
  const int num_workers_;
  const UpdatePolicy* policy_ = nullptr;  // SetPolicy
  CommunicationStats communication_;      // without a policy; bytes_per_worker unset
  int64_t dropped_ = 0;
  int64_t steps_ = 0;
  int64_t examples_ = 0;
  double staleness_sum_ = 0.0;
  std::vector<uint64_t> histogram_;  // [staleness_max + 1]
  std::vector<uint32_t> staleness_;  // [steps]
  int64_t last_eval_step_ = -1;
  // The open window of train updates.
  int64_t window_steps_ = 0;
  int64_t window_examples_ = 0;
  double window_loss_sum_ = 0.0;
  double window_staleness_sum_ = 0.0;
  uint64_t window_staleness_max_ = 0;
  double last_mean_loss_ = 0.0;  // of the last closed window
  bool closed_once_ = false;
};

}  // namespace hogwild

#endif  // HOGWILD_SIM_SIM_METRICS_H_
