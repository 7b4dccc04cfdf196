// The study runner's records and report (benchmarks/sync_vs_async.cc): one record file per
// finished run, written atomically so that an interrupted study can be resumed, and the report
// per configuration (everything but the seed) over seeds, as Markdown and CSV.
//
// Thread-safety: plain functions and values.
#ifndef HOGWILD_BENCHMARKS_STUDY_REPORT_H_
#define HOGWILD_BENCHMARKS_STUDY_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmarks/run_summary.h"

namespace hogwild {

// One finished run of the grid.
struct StudyRun {
  std::string key;     // unique per configuration and seed, safe as a file name
  std::string config;  // the configuration without the seed, e.g. "ssp(bound=3) w=2 lr=0.05 m=0"
  double lr = 0.0;
  double momentum = 0.0;
  double final_test_loss = 0.0;
  // Training diverged (a non-finite loss or gradient): the final values are not results; the
  // time and examples to target are those of the evaluations before it, if any.
  bool diverged = false;
  // The staleness histogram as "staleness:count;..." (non-zero buckets only).
  std::string staleness_histogram;
  // mode, workers, seed, batch, rates, final accuracy, staleness, log path; the time and
  // examples to target are not stored in the record but recomputed from the log
  // (FillTarget), so that a rerun with another --target_accuracy reuses the runs.
  RunSummary summary;
};

// The record of a run: "field=value" lines, doubles with 17 significant digits (a record read
// back reports the same numbers). Pure.
std::string StudyRunRecord(const StudyRun& run);

// The inverse of StudyRunRecord. Errors: kInvalidArgument naming the missing or malformed field.
absl::StatusOr<StudyRun> ParseStudyRunRecord(const std::string& text);

// Sets run.summary's time and examples to target from the run's evaluations: the first at or
// above target_accuracy, or none.
void FillTarget(const std::vector<EvalPoint>& evals, double target_accuracy, StudyRun& run);

// The report: one row per configuration, in order of first appearance in `runs`, over its
// seeds: time and examples to target (or "k of n seeds did not reach X%", study_stats.h), final
// test accuracy and loss, staleness mean, each as mean ± half-width of the 95% Student-t
// interval; where seeds diverged, the final values say "k of n seeds diverged" instead of an
// average of the others. Below the table, what a cell is, and where a configuration has only 2 to
// 4 seeds, how wide that makes its interval (FewSeedsNote, study_stats.h). Errors:
// kInvalidArgument for a non-finite value of a run that did not diverge.
absl::StatusOr<std::string> StudyMarkdown(const std::vector<StudyRun>& runs,
                                          double target_accuracy);
// Which final accuracy the report gives: that of the parameters after each run's last update,
// whose batch is full with `drop_last` (TrainerOptions::drop_last) and may be an epoch's short
// remainder without it; the sentence says which, and how to get the other. Pure.
std::string FinalAccuracyNote(bool drop_last);

// The same as CSV: the means and half-widths in columns (empty where undefined: no interval
// with one seed, no time to target when a seed did not reach it; not_reached counts those, no
// final values when a seed diverged; diverged counts those).
absl::StatusOr<std::string> StudyCsv(const std::vector<StudyRun>& runs, double target_accuracy);

}  // namespace hogwild

#endif  // HOGWILD_BENCHMARKS_STUDY_REPORT_H_
