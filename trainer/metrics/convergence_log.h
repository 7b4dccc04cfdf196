// The convergence log: one row per evaluation and per `log_every` steps of each worker, as CSV
// (any path not ending in .jsonl) or JSON Lines (path ending in .jsonl). Schema (README.md):
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
//
// Thread-safety: Write() is thread-safe (internal mutex). Rows are flushed as written so a
// crashed run keeps its log.
#ifndef HOGWILD_TRAINER_METRICS_CONVERGENCE_LOG_H_
#define HOGWILD_TRAINER_METRICS_CONVERGENCE_LOG_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <mutex>

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
};

class ConvergenceLog {
 public:
  // Creates (truncates) `path`. Errors: kInvalidArgument naming the path and the OS reason.
  static absl::StatusOr<std::unique_ptr<ConvergenceLog>> Open(const std::string& path);
  ~ConvergenceLog();

  void Write(const LogRow& row);

  // "wall_time_s,kind,epoch,..." (the CSV header; also the JSON keys in order).
  static const char* Header();

 private:
  ConvergenceLog(std::FILE* file, bool json) : file_(file), json_(json) {}

  std::mutex mu_;
  std::FILE* file_;  // guarded by mu_
  const bool json_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_CONVERGENCE_LOG_H_
