#include "benchmarks/run_summary.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace hogwild {

absl::StatusOr<std::vector<EvalPoint>> ReadEvalPoints(const std::string& log_path) {
  std::ifstream in(log_path);
  if (!in) return absl::NotFoundError(absl::StrFormat("cannot read the log %s", log_path));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = absl::StrSplit(line, ',');
  auto column = [&](const std::string& name) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int time_col = column("wall_time_s"), kind_col = column("kind");
  const int seen_col = column("examples_seen"), acc_col = column("test_accuracy");
  if (time_col < 0 || kind_col < 0 || seen_col < 0 || acc_col < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not a CSV convergence log (header: %s)", log_path, line));
  }
  std::vector<EvalPoint> points;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    if (static_cast<int>(f.size()) != static_cast<int>(header.size()) || f[kind_col] != "eval") {
      continue;
    }
    EvalPoint p;
    if (absl::SimpleAtod(f[time_col], &p.wall_time_s) &&
        absl::SimpleAtoi(f[seen_col], &p.examples_seen) &&
        absl::SimpleAtod(f[acc_col], &p.test_accuracy)) {
      points.push_back(p);
    }
  }
  return points;
}

RunSummary Summarize(const TrainResult& result, uint64_t seed, int64_t batch_size,
                     const std::vector<EvalPoint>& evals, double target_accuracy,
                     const std::string& log_path) {
  RunSummary s;
  s.mode = ModeName(result.mode);
  s.workers = result.num_workers;
  s.seed = seed;
  s.batch_size = batch_size;
  s.examples_per_s = result.examples_per_s;
  s.wall_time_s = result.wall_time_s;
  s.final_test_accuracy = result.final_test_accuracy;
  s.staleness_mean = result.staleness_mean;
  s.staleness_max = result.staleness_max;
  s.log_path = log_path;
  for (const EvalPoint& p : evals) {
    if (p.test_accuracy >= target_accuracy) {
      s.time_to_target_s = p.wall_time_s;
      s.examples_to_target = p.examples_seen;
      break;
    }
  }
  return s;
}

std::string SummaryCsv(const std::vector<RunSummary>& runs) {
  std::string out =
      "mode,workers,seed,batch_size,examples_per_s,wall_time_s,time_to_target_s,"
      "examples_to_target,final_test_accuracy,staleness_mean,staleness_max,log\n";
  for (const RunSummary& r : runs) {
    absl::StrAppendFormat(&out, "%s,%d,%d,%d,%.1f,%.3f,%s,%s,%.4f,%.3f,%d,%s\n", r.mode, r.workers,
                          r.seed, r.batch_size, r.examples_per_s, r.wall_time_s,
                          r.time_to_target_s ? absl::StrFormat("%.3f", *r.time_to_target_s) : "",
                          r.examples_to_target ? absl::StrFormat("%d", *r.examples_to_target) : "",
                          r.final_test_accuracy, r.staleness_mean, r.staleness_max, r.log_path);
  }
  return out;
}

std::string SummaryMarkdown(const std::vector<RunSummary>& runs, double target_accuracy,
                            bool simulated) {
  const double pct = 100.0 * target_accuracy;
  const char* time = simulated ? "simulated time" : "wall time";
  std::string out = absl::StrFormat(
      "| mode | workers | seed | batch | examples per %s s | %s (s) | %s to %.0f%% (s) | "
      "examples to %.0f%% | final test acc | staleness mean / max |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      simulated ? "simulated" : "wall", time, time, pct, pct);
  for (const RunSummary& r : runs) {
    absl::StrAppendFormat(
        &out, "| %s | %d | %d | %d | %.0f | %.2f | %s | %s | %.2f%% | %.2f / %d |\n", r.mode,
        r.workers, r.seed, r.batch_size, r.examples_per_s, r.wall_time_s,
        r.time_to_target_s ? absl::StrFormat("%.2f", *r.time_to_target_s) : "not reached",
        r.examples_to_target ? absl::StrFormat("%d", *r.examples_to_target) : "-",
        100.0 * r.final_test_accuracy, r.staleness_mean, r.staleness_max);
  }
  return out;
}

}  // namespace hogwild
