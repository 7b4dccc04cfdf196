// The per-run summary of the sync-vs-async study: what a researcher compares between runs.
// Built from a TrainResult and the run's convergence log (trainer/convergence_log.h schema).
//
// Thread-safety: plain functions and values.
#ifndef HOGWILD_BENCHMARKS_RUN_SUMMARY_H_
#define HOGWILD_BENCHMARKS_RUN_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/trainer.h"

namespace hogwild {

struct RunSummary {
  std::string mode;  // "async" / "sync"
  int workers = 0;
  uint64_t seed = 0;
  int64_t batch_size = 0;       // per worker (async) or global (sync)
  double examples_per_s = 0.0;  // over the whole run, evaluations included
  double wall_time_s = 0.0;
  // First evaluation at or above the target accuracy: wall time (evaluations included) and
  // training examples seen; empty when never reached.
  std::optional<double> time_to_target_s;
  std::optional<int64_t> examples_to_target;
  double final_test_accuracy = 0.0;
  double staleness_mean = 0.0;
  uint64_t staleness_max = 0;
  std::string log_path;
};

// One evaluation row of a convergence log.
struct EvalPoint {
  double wall_time_s = 0.0;
  int64_t examples_seen = 0;
  double test_accuracy = 0.0;
};

// Reads the eval rows of a CSV convergence log. Errors: kNotFound (path), kInvalidArgument
// (no header with the expected columns).
absl::StatusOr<std::vector<EvalPoint>> ReadEvalPoints(const std::string& log_path);

// Fills a summary from the run's result and its eval rows; target in (0, 1].
RunSummary Summarize(const TrainResult& result, uint64_t seed, int64_t batch_size,
                     const std::vector<EvalPoint>& evals, double target_accuracy,
                     const std::string& log_path);

// The summary table as CSV (header + one line per run; the log's column names) and as
// Markdown, whose time columns say "simulated time" for `simulated` runs (sim/simulator.h: the
// wall_time_s they record is simulated seconds), "wall time" otherwise.
std::string SummaryCsv(const std::vector<RunSummary>& runs);
std::string SummaryMarkdown(const std::vector<RunSummary>& runs, double target_accuracy,
                            bool simulated);

}  // namespace hogwild

#endif  // HOGWILD_BENCHMARKS_RUN_SUMMARY_H_
