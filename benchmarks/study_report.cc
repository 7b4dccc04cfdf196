#include "benchmarks/study_report.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "benchmarks/study_stats.h"

namespace hogwild {
namespace {

// The runs of each configuration, configurations in order of first appearance.
std::vector<std::vector<const StudyRun*>> GroupByConfig(const std::vector<StudyRun>& runs) {
  std::vector<std::vector<const StudyRun*>> groups;
  std::map<std::string, size_t> index;
  for (const StudyRun& r : runs) {
    auto [it, inserted] = index.emplace(r.config, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  return groups;
}

template <typename F>
std::vector<double> Collect(const std::vector<const StudyRun*>& group, F f) {
  std::vector<double> out;
  for (const StudyRun* r : group) out.push_back(f(*r));
  return out;
}

std::vector<std::optional<double>> TimeToTarget(const std::vector<const StudyRun*>& group) {
  std::vector<std::optional<double>> out;
  for (const StudyRun* r : group) out.push_back(r->summary.time_to_target_s);
  return out;
}

std::vector<std::optional<double>> ExamplesToTarget(const std::vector<const StudyRun*>& group) {
  std::vector<std::optional<double>> out;
  for (const StudyRun* r : group) {
    if (r->summary.examples_to_target) {
      out.push_back(static_cast<double>(*r->summary.examples_to_target));
    } else {
      out.push_back(std::nullopt);
    }
  }
  return out;
}

// "mean,half_width" with empty fields where undefined.
absl::StatusOr<std::string> CsvPair(const std::vector<std::optional<double>>& values) {
  std::vector<double> reached;
  for (const auto& v : values) {
    if (!v) return std::string(",");
    reached.push_back(*v);
  }
  absl::StatusOr<MeanInterval> m = Mean95(reached);
  if (!m.ok()) return m.status();
  return absl::StrFormat("%.6g,%s", m->mean,
                         m->half_width ? absl::StrFormat("%.6g", *m->half_width) : "");
}

std::vector<std::optional<double>> AllPresent(const std::vector<double>& v) {
  return std::vector<std::optional<double>>(v.begin(), v.end());
}

int CountDiverged(const std::vector<const StudyRun*>& group) {
  int n = 0;
  for (const StudyRun* r : group) n += r->diverged ? 1 : 0;
  return n;
}

}  // namespace

std::string StudyRunRecord(const StudyRun& run) {
  const RunSummary& s = run.summary;
  return absl::StrFormat(
      "key=%s\nconfig=%s\nmode=%s\nworkers=%d\nseed=%d\nlr=%.17g\nmomentum=%.17g\n"
      "batch_size=%d\nexamples_per_s=%.17g\nwall_time_s=%.17g\nfinal_test_accuracy=%.17g\n"
      "final_test_loss=%.17g\nstaleness_mean=%.17g\nstaleness_max=%d\nstaleness_histogram=%s\n"
      "diverged=%d\nlog=%s\n",
      run.key, run.config, s.mode, s.workers, s.seed, run.lr, run.momentum, s.batch_size,
      s.examples_per_s, s.wall_time_s, s.final_test_accuracy, run.final_test_loss, s.staleness_mean,
      s.staleness_max, run.staleness_histogram, run.diverged ? 1 : 0, s.log_path);
}

absl::StatusOr<StudyRun> ParseStudyRunRecord(const std::string& text) {
  std::map<std::string, std::string> fields;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("run record: line '%s' is not field=value", std::string(line)));
    }
    fields[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  bool ok = true;
  auto str = [&](const char* name) -> std::string {
    auto it = fields.find(name);
    if (it == fields.end()) {
      ok = false;
      return "";
    }
    return it->second;
  };
  std::string bad;
  auto num = [&](const char* name, auto* out) {
    const std::string v = str(name);
    bool parsed;
    if constexpr (std::is_floating_point_v<std::remove_pointer_t<decltype(out)>>) {
      parsed = absl::SimpleAtod(v, out);
    } else {
      parsed = absl::SimpleAtoi(v, out);
    }
    if (!parsed && bad.empty()) bad = name;
  };
  StudyRun run;
  RunSummary& s = run.summary;
  run.key = str("key");
  run.config = str("config");
  s.mode = str("mode");
  num("workers", &s.workers);
  num("seed", &s.seed);
  num("lr", &run.lr);
  num("momentum", &run.momentum);
  num("batch_size", &s.batch_size);
  num("examples_per_s", &s.examples_per_s);
  num("wall_time_s", &s.wall_time_s);
  num("final_test_accuracy", &s.final_test_accuracy);
  num("final_test_loss", &run.final_test_loss);
  num("staleness_mean", &s.staleness_mean);
  num("staleness_max", &s.staleness_max);
  run.staleness_histogram = str("staleness_histogram");
  // Records written before divergence was recorded have no such field: they did not diverge.
  if (fields.count("diverged") > 0) {
    int diverged = 0;
    num("diverged", &diverged);
    run.diverged = diverged != 0;
  }
  s.log_path = str("log");
  if (!ok || !bad.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "run record: field %s is missing or malformed", bad.empty() ? "(some)" : bad));
  }
  return run;
}

void FillTarget(const std::vector<EvalPoint>& evals, double target_accuracy, StudyRun& run) {
  run.summary.time_to_target_s.reset();
  run.summary.examples_to_target.reset();
  for (const EvalPoint& p : evals) {
    if (p.test_accuracy >= target_accuracy) {
      run.summary.time_to_target_s = p.wall_time_s;
      run.summary.examples_to_target = p.examples_seen;
      return;
    }
  }
}

absl::StatusOr<std::string> StudyMarkdown(const std::vector<StudyRun>& runs,
                                          double target_accuracy) {
  const double pct = 100.0 * target_accuracy;
  std::string out = absl::StrFormat(
      "| configuration | seeds | time to %g%% (s) | examples to %g%% | final test acc (%%) | "
      "final test loss | staleness mean |\n|---|---:|---:|---:|---:|---:|---:|\n",
      pct, pct);
  for (const auto& group : GroupByConfig(runs)) {
    absl::StatusOr<std::string> time = FormatReached(TimeToTarget(group), target_accuracy, 2);
    if (!time.ok()) return time.status();
    absl::StatusOr<std::string> examples =
        FormatReached(ExamplesToTarget(group), target_accuracy, 0);
    if (!examples.ok()) return examples.status();
    std::string finals[3];
    if (const int diverged = CountDiverged(group); diverged > 0) {
      const std::string cell = absl::StrFormat("%d of %d seeds diverged", diverged, group.size());
      finals[0] = finals[1] = finals[2] = cell;
    } else {
      absl::StatusOr<MeanInterval> acc = Mean95(
          Collect(group, [](const StudyRun& r) { return 100.0 * r.summary.final_test_accuracy; }));
      if (!acc.ok()) return acc.status();
      absl::StatusOr<MeanInterval> loss =
          Mean95(Collect(group, [](const StudyRun& r) { return r.final_test_loss; }));
      if (!loss.ok()) return loss.status();
      absl::StatusOr<MeanInterval> stale =
          Mean95(Collect(group, [](const StudyRun& r) { return r.summary.staleness_mean; }));
      if (!stale.ok()) return stale.status();
      finals[0] = FormatMeanInterval(*acc, 2);
      finals[1] = FormatMeanInterval(*loss, 4);
      finals[2] = FormatMeanInterval(*stale, 2);
    }
    absl::StrAppendFormat(&out, "| %s | %d | %s | %s | %s | %s | %s |\n", group[0]->config,
                          group.size(), *time, *examples, finals[0], finals[1], finals[2]);
  }
  absl::StrAppend(&out,
                  "\nEach cell: mean over the seeds ± the half-width of its 95% confidence "
                  "interval (Student t with seeds − 1 degrees of freedom); one seed: the value "
                  "alone. Time to target includes the evaluations.\n");
  int fewest_seeds = 0;
  for (const auto& group : GroupByConfig(runs)) {
    const int n = static_cast<int>(group.size());
    if (n >= 2 && (fewest_seeds == 0 || n < fewest_seeds)) fewest_seeds = n;
  }
  if (const std::string note = FewSeedsNote(fewest_seeds); !note.empty()) {
    absl::StrAppend(&out, "\n", note, "\n");
  }
  return out;
}

std::string FinalAccuracyNote(bool drop_last) {
  return drop_last
             ? "Final test accuracy: the parameters after each run's last update, a full batch "
               "(--drop_last left out each epoch's short last batch)."
             : "Final test accuracy: the parameters after each run's last update, which may be "
               "an epoch's short last batch (the remainder of the examples over the batch, per "
               "worker where each worker walks its own shard) and move the accuracy by points; "
               "--drop_last leaves "
               "those batches out.";
}

absl::StatusOr<std::string> StudyCsv(const std::vector<StudyRun>& runs, double target_accuracy) {
  std::string out =
      "config,mode,workers,lr,momentum,seeds,not_reached,diverged,target_accuracy,"
      "time_to_target_s_mean,"
      "time_to_target_s_ci95,examples_to_target_mean,examples_to_target_ci95,"
      "final_test_accuracy_mean,final_test_accuracy_ci95,final_test_loss_mean,"
      "final_test_loss_ci95,staleness_mean_mean,staleness_mean_ci95\n";
  for (const auto& group : GroupByConfig(runs)) {
    int not_reached = 0;
    for (const StudyRun* r : group) not_reached += r->summary.time_to_target_s ? 0 : 1;
    const int diverged = CountDiverged(group);
    std::string cells;
    for (const auto& values : {TimeToTarget(group), ExamplesToTarget(group)}) {
      absl::StatusOr<std::string> pair = CsvPair(values);
      if (!pair.ok()) return pair.status();
      absl::StrAppend(&cells, ",", *pair);
    }
    if (diverged > 0) {
      absl::StrAppend(&cells, ",,,,,,");  // no final values: not an average of the others
    } else {
      for (const auto& values :
           {AllPresent(
                Collect(group, [](const StudyRun& r) { return r.summary.final_test_accuracy; })),
            AllPresent(Collect(group, [](const StudyRun& r) { return r.final_test_loss; })),
            AllPresent(
                Collect(group, [](const StudyRun& r) { return r.summary.staleness_mean; }))}) {
        absl::StatusOr<std::string> pair = CsvPair(values);
        if (!pair.ok()) return pair.status();
        absl::StrAppend(&cells, ",", *pair);
      }
    }
    const StudyRun& first = *group[0];
    absl::StrAppendFormat(&out, "%s,%s,%d,%g,%g,%d,%d,%d,%g%s\n", first.config, first.summary.mode,
                          first.summary.workers, first.lr, first.momentum, group.size(),
                          not_reached, diverged, target_accuracy, cells);
  }
  return out;
}

}  // namespace hogwild
