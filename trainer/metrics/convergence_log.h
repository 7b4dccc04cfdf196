// The convergence log: one row per evaluation and per `log_every` steps of each worker, as CSV
// (any path not ending in .jsonl) or JSON Lines (path ending in .jsonl, in any case; a path
// ending in .json is refused by ValidateOptions). Schema (docs/convergence_log.md):
//
//   wall_time_s     seconds since training started (float)
//   kind            "train" (a worker's window of steps) or "eval" (a test-set evaluation)
//   epoch           examples seen / training-set size (float)
//   step            global step: updates applied to the parameters so far
//   examples_seen   training examples processed by all workers so far
//   worker          the worker of a train row; -1 for eval rows
//   train_loss      mean training loss over the row's window (eval rows: over all workers'
//                   latest windows)
//   test_loss       mean test loss (eval rows; empty / null on train rows)
//   test_accuracy   fraction in [0, 1] (eval rows; empty / null on train rows)
//   staleness_mean  mean staleness of the window's updates (0 in sync mode)
//   staleness_max   largest staleness in the window
//   lr              learning rate of the window's last step
//   delay_s         straggler delay added after the window's steps, seconds (trainer/
//                   straggler.h; 0 without stragglers and on eval rows)
//   remote_staleness_mean, remote_staleness_max
//                   async across processes (mpi/sharded_hogwild.h): remote staleness of the
//                   exchanges with the other ranks that the window's steps made (eval rows: all
//                   exchanges so far); empty / null when there was none (always in one process)
//   ema_test_accuracy
//                   eval rows of a run with a weight EMA (trainer/weight_ema.h): the test
//                   accuracy of the moving average at the row's step; empty / null otherwise
//   eval_seconds    wall seconds the periodic evaluations finished before the row took, summed,
//                   each from the start of its evaluation (not its wait in the queue;
//                   trainer/metrics/eval_runner.h): wall_time_s - eval_seconds is the row's
//                   time without evaluations when they run inline (one worker, or sync)
//   exchanges       communication rounds so far (UpdatePolicy::communication; per mode in
//                   docs/convergence_log.md): sync, backup one per step, local_sgd one per
//                   averaging (per fragment exchange with Streaming DiLoCo), async_local_sgd one
//                   per push; 0 where the workers share memory (async, ssp, locked, round_robin)
//   bytes_per_worker
//                   the logical payload one worker sent in them so far, mean over the workers,
//                   bytes rounded to a whole number (4 per float32: its gradient, replica,
//                   fragment or pseudo-gradient); a ring all-reduce puts 2 (W - 1) / W times
//                   this on the wire
//   outer_step_norm local_sgd, async_local_sgd: ||theta_after - theta_before||_2 of the last
//                   outer step (averaging, fragment exchange or push); empty / null in the other
//                   modes and before the first outer step
//   dropped         gradients computed but not applied so far (UpdatePolicy::num_dropped:
//                   backup's late ones, async's too stale ones)
//
// Write errors are never ignored: each row is one write(2), checked, so once Write() returns OK
// the row is in the kernel's hands and a crash of this process keeps it; Close() checks the
// fsync (regular files) and the close. The choice (docs/convergence_log.md): a failing log
// stops the run. The log is part of the run's result (the convergence study is read from it),
// so a run that cannot write it reports an error naming the path and the OS reason instead of
// exiting 0 with a truncated log. Nothing already written is lost: the rows before the failure
// stay in the file, and a row cut short by the failure is cut off (regular files), so the file
// holds whole rows only; the run's last checkpoint is kept.
//
// Thread-safety: Write() and Close() are thread-safe (internal mutex).
#ifndef HOGWILD_TRAINER_METRICS_CONVERGENCE_LOG_H_
#define HOGWILD_TRAINER_METRICS_CONVERGENCE_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hogwild {

struct LogRow {
  double wall_time_s = 0.0;
  bool eval = false;
  double epoch = 0.0;
  int64_t step = 0;
  int64_t examples_seen = 0;
  int worker = -1;
  double train_loss = 0.0;
  std::optional<double> test_loss;
  std::optional<double> test_accuracy;
  double staleness_mean = 0.0;
  uint64_t staleness_max = 0;
  double lr = 0.0;
  double delay_s = 0.0;
  std::optional<double> remote_staleness_mean;
  std::optional<int64_t> remote_staleness_max;
  std::optional<double> ema_test_accuracy;
  double eval_seconds = 0.0;
  int64_t exchanges = 0;
  double bytes_per_worker = 0.0;
  std::optional<double> outer_step_norm;
  int64_t dropped = 0;
};

// The end-of-run summaries' part for the exchanges and bytes_per_worker columns' totals:
// " | 705 exchanges, 4.5 MB sent per worker" (bytes in B, kB, MB or GB, powers of 1000), or ""
// when `exchanges` is 0. Pure.
std::string FormatExchanges(int64_t exchanges, double bytes_per_worker);

// Receives convergence-log rows as they are written, e.g. to plot a run live or to hand the
// rows to another language (python/hogwild). Returns OK, or an error that stops the run like a
// log write error. TrainerOptions::log_row_sink states when and on which threads it is called.
using LogRowSink = std::function<absl::Status(const LogRow&)>;

class ConvergenceLog {
 public:
  // Creates (truncates) `path` and writes the CSV header (JSON Lines has none). Never blocks:
  // a pipe that no process reads is refused (core/output_path.h's OpenOutputStream, whose errors
  // it returns). Errors: also kInvalidArgument when `path` ends in .json (CSV under a JSON name;
  // nothing is written); a failed header write as Write(). Callers that must not replace a previous
  // run's log call CheckWouldNotReplace() first (Train() does, unless told to overwrite).
  static absl::StatusOr<std::unique_ptr<ConvergenceLog>> Open(const std::string& path);

  // OK when opening `path` destroys no rows: it does not exist, is empty, or is not a regular
  // file (a device such as /dev/stdout or /dev/null, a pipe). Else kFailedPrecondition naming
  // the path and its size, and `overwrite_option`, the option that allows replacing it. Reads
  // metadata only. Thread-safe.
  static absl::Status CheckWouldNotReplace(const std::string& path,
                                           const std::string& overwrite_option);
  // Closes the file if Close() was not called; an error there is logged to stderr, since a
  // destructor cannot return it (call Close() to see it).
  ~ConvergenceLog();

  // Appends one row. Errors: "convergence log <path>: cannot write a row (<strerror>)", with
  // the code absl::ErrnoToStatusCode gives (ENOSPC: kResourceExhausted). After an error, or
  // after Close(), nothing more is written and every call returns that first error (a row
  // after a gap would misrepresent the log).
  absl::Status Write(const LogRow& row);

  // Flushes to disk (fsync, regular files only: pipes and devices cannot) and closes. Returns
  // the first error of the log's life (a failed Write, fsync or close). Idempotent.
  absl::Status Close();

  const std::string& path() const { return path_; }

  // "wall_time_s,kind,epoch,..." (the CSV header; also the JSON keys in order).
  static const char* Header();

 private:
  ConvergenceLog(int fd, std::string path, bool json)
      : fd_(fd), path_(std::move(path)), json_(json) {}

  // Writes `bytes` whole or records and returns the error. Requires mu_.
  absl::Status AppendLocked(const std::string& bytes);
  // Records the first error (what failed and errno). Requires mu_.
  void SetErrorLocked(const char* what, int err);

  std::mutex mu_;
  int fd_;               // guarded by mu_; -1 once closed
  absl::Status status_;  // guarded by mu_; the first error
  const std::string path_;
  const bool json_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_CONVERGENCE_LOG_H_
