// Aggregates what the workers report every step: examples, loss, staleness, learning rate.
// Writes a convergence-log row per worker every `log_every` of its steps and one per
// evaluation, and serves snapshots to the progress line and the final summary.
//
// Log rows: every row's counters (step, examples_seen, epoch, wall_time_s, losses, staleness)
// are taken under one lock acquisition, i.e. at one instant, and rows reach the log in that
// order, so `step` (the largest global step recorded so far) never goes backwards in the file.
// An evaluation row's counters are those of the instant its parameters were read
// (BeginEval); rows recorded while it is being evaluated are held back and written after it.
// Several evaluations may be pending at once (queued snapshots, trainer/metrics/eval_runner.h):
// each holds its place in the log from its BeginEval, and the rows are written in the order of
// their instants as the evaluations before them finish, whatever order they finish in.
//
// Rows go to the convergence log (if any), then to the row sink (if any), in that order, each
// row once, under the lock that orders them.
//
// Errors: a convergence-log write error, or the row sink's error, is returned by the call that
// wrote the row (and by every later one, without calling the sink again): the trainer stops the
// run on it (trainer/metrics/convergence_log.h).
//
// Thread-safety: every method is thread-safe (one std::mutex, taken once per step per worker,
// which is negligible next to a train step, and held while a row is written so rows keep their
// order; one row per log_every steps; std::mutex so ThreadSanitizer sees it, see
// sync/step_barrier.h).
#ifndef HOGWILD_TRAINER_METRICS_TRAINING_METRICS_H_
#define HOGWILD_TRAINER_METRICS_TRAINING_METRICS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/evaluator.h"

namespace hogwild {

class TrainingMetrics {
 public:
  // Staleness histogram: bucket s counts updates of staleness s; the last bucket collects
  // staleness >= kStalenessBuckets - 1.
  static constexpr int kStalenessBuckets = 65;

  struct Snapshot {
    double wall_time_s = 0.0;
    int64_t examples_seen = 0;
    int64_t updates = 0;             // steps recorded, summed over workers
    double epoch = 0.0;              // examples_seen / training-set size
    double recent_train_loss = 0.0;  // mean over every worker's latest window
    // The loss sums of every recorded step, added up: (difference of two snapshots' sums) /
    // (difference of their examples_seen) is the mean training loss between them.
    double train_loss_sum = 0.0;
    std::optional<EvalResult> last_eval;
    double staleness_mean = 0.0;  // over all updates
    uint64_t staleness_max = 0;
    int64_t evals = 0;          // periodic and final evaluations finished (FinishEval calls)
    double eval_seconds = 0.0;  // their wall time, BeginEval to FinishEval, summed
  };

  // The run's counters that the update policy keeps (UpdatePolicy::communication and
  // num_dropped): the log's exchanges, bytes_per_worker, outer_step_norm and dropped columns.
  struct PolicyCounters {
    int64_t exchanges = 0;
    double bytes_per_worker = 0.0;
    std::optional<double> outer_step_norm;
    int64_t dropped = 0;
  };
  // Reads them; called under this object's lock when a row is made, so it must be thread-safe
  // and must not call back into this object.
  using PolicyCountersSource = std::function<PolicyCounters()>;

  // log may be null (no convergence log); sink may be empty (no row sink); counters may be
  // empty (those columns stay 0 / empty). log_every >= 1.
  TrainingMetrics(int num_workers, int64_t train_size, ConvergenceLog* log, int64_t log_every,
                  LogRowSink sink = {}, PolicyCountersSource counters = {});

  // One step of `worker`: `examples` examples with loss sum `loss_sum`, update staleness,
  // learning rate, the global step after the update, and the straggler delay it added
  // (seconds, trainer/straggler.h). Errors: the log's (see above). `staleness` nullopt: a
  // gradient that was not applied (async's too stale one, SgdOptions::max_delay): its examples
  // and loss count, and the staleness statistics, which are those of applied updates, skip it.
  // `remote_staleness`: StepStats::remote_staleness (-1: the step made no exchange with other
  // processes).
  absl::Status RecordStep(int worker, int64_t examples, double loss_sum,
                          std::optional<uint64_t> staleness, float lr, int64_t global_step,
                          double delay_s = 0.0, int64_t remote_staleness = -1);

  // An evaluation in two halves, so its row has the counters of the instant the parameters
  // were read. BeginEval (call it just before reading them): the row's counters now, with step
  // max(global_step, the largest step recorded); until FinishEval, this row and every later one
  // are held back. FinishEval writes the evaluation row (if `eval` is OK; with `ema`, the weight
  // EMA's result, its ema_test_accuracy too), then the held rows up to the next evaluation still
  // pending, adds the evaluation's time (since `pending.started`: BeginEval's instant unless the
  // caller moved it to the start of the evaluation proper) to eval_seconds (the column of every
  // later row), and returns the first error of `eval` and the log. Every PendingEval must be
  // finished exactly once (with an error status if it was never evaluated), else the rows after
  // it are held until the destructor. FinishEval may run on another thread than BeginEval (the
  // evaluator thread, trainer/metrics/eval_runner.h), and several evaluations may be pending.
  struct PendingEval {
    LogRow row;
    absl::Time started;
    int64_t id = -1;  // BeginEval's sequence number, which FinishEval finds the row by
  };
  PendingEval BeginEval(int64_t global_step, float lr);
  absl::Status FinishEval(const PendingEval& pending, const absl::StatusOr<EvalResult>& eval,
                          const std::optional<EvalResult>& ema = std::nullopt);

  // Both halves at once, for parameters that no longer change (after training).
  absl::Status RecordEval(const EvalResult& eval, int64_t global_step, float lr,
                          const std::optional<EvalResult>& ema = std::nullopt);

  // The global step of the last RecordEval, or -1.
  int64_t last_eval_step() const;

  // Writes a train row for every worker whose current window holds steps (the end of a run:
  // short runs would otherwise log no train rows at all). Errors: the log's.
  absl::Status FlushWindows(float lr);

  // Writes rows still held back by an evaluation that never finished (a worker that threw);
  // the unfinished evaluations' own rows are dropped.
  ~TrainingMetrics();

  Snapshot Get() const;
  std::vector<uint64_t> StalenessHistogram() const;
  double ElapsedSeconds() const;

 private:
  struct Window {
    int64_t steps = 0;
    int64_t examples = 0;
    double loss_sum = 0.0;
    double staleness_sum = 0.0;
    int64_t staleness_steps = 0;  // steps with a staleness (applied updates)
    uint64_t staleness_max = 0;
    double delay_s = 0.0;
    int64_t exchanges = 0;  // steps with remote_staleness >= 0
    int64_t remote_sum = 0;
    int64_t remote_max = 0;
    double last_mean_loss = 0.0;  // of the last closed window (or the running one if none)
    bool closed_once = false;
  };

  double RecentLossLocked() const;  // requires mu_
  // Emits worker `worker`'s window (at least one step) as a train row and starts a new one.
  // Requires mu_.
  absl::Status CloseWindowLocked(int worker, float lr);
  // Sets the policy's columns of `row` from counters_ (if any). Requires mu_.
  void FillPolicyCountersLocked(LogRow& row) const;
  // Writes `row` now, or holds it back while an evaluation is pending. Requires mu_.
  absl::Status EmitLocked(const LogRow& row);
  // Writes the held rows from the front up to the first evaluation still pending; returns the
  // first write error. Requires mu_.
  absl::Status FlushHeldLocked();
  // Writes `row` to the log, then hands it to the sink. Returns the first error of either, or
  // OK (also when there is neither). Requires mu_.
  absl::Status WriteLocked(const LogRow& row);

  const int64_t train_size_;
  ConvergenceLog* const log_;
  const int64_t log_every_;
  const absl::Time start_;
  const LogRowSink sink_;
  const PolicyCountersSource counters_;

  // Everything below is guarded by mu_.
  mutable std::mutex mu_;
  std::vector<Window> windows_;
  int64_t examples_seen_ = 0;
  double train_loss_sum_ = 0.0;  // Snapshot::train_loss_sum
  int64_t updates_ = 0;
  int64_t staleness_updates_ = 0;  // updates with a staleness (applied)
  double staleness_sum_ = 0.0;
  uint64_t staleness_max_ = 0;
  int64_t exchanges_ = 0;  // as Window's, over the whole run
  int64_t remote_sum_ = 0;
  int64_t remote_max_ = 0;
  std::vector<uint64_t> histogram_;
  std::optional<EvalResult> last_eval_;
  int64_t last_eval_step_ = -1;
  int64_t last_global_step_ = 0;
  // A row held back: a train row (pending_eval -1) or an evaluation's, pending until its
  // FinishEval (then written, or dropped when it failed).
  struct Held {
    LogRow row;
    int64_t pending_eval = -1;  // the PendingEval's id while it is pending
    bool drop = false;          // a failed evaluation: nothing to write
  };
  int64_t next_eval_id_ = 0;
  int64_t evals_ = 0;
  double eval_seconds_ = 0.0;  // of the finished evaluations
  std::deque<Held> held_;      // from the oldest pending evaluation's row on, in order
  absl::Status sink_status_;   // the sink's first error
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_TRAINING_METRICS_H_
