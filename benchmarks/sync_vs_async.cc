// The study runner: `bazel run //benchmarks:study` (= //benchmarks:sync_vs_async).
//
// Runs a grid of update policies x worker counts x learning rates x momentums x seeds with the
// same model, data and data order, in this one process (the library runs every policy), with
// the policy options and stragglers applied to every run. Resumable: each finished run leaves
// a record in --out_dir/runs/ (written atomically, keyed by its configuration and seed), and a
// rerun skips the runs that have one. Writes into --out_dir:
//   runs/<key>.run, runs/<key>.csv  each run's record and convergence log (trainer/metrics/)
//   study.md, study.csv             the report per configuration over seeds: mean and 95%
//                                   Student-t interval (benchmarks/study_report.h)
//   runs.csv                        configuration, seed and log of every run (for the figures)
//   summary.csv, summary.md         one line per run (benchmarks/run_summary.h)
//   staleness.csv                   the staleness histogram of each run (mode,workers,seed,s,count)
//   *.png                           plot_convergence.py's and plot_study.py's figures
// and prints the report, then the peak memory of the process against the bound
// "2x the dataset's in-memory size plus the parameters".
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "benchmarks/run_summary.h"
#include "benchmarks/study_report.h"
#include "core/atomic_file.h"
#include "core/capabilities.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "sim/simulator.h"
#include "sparse/epoch_log.h"
#include "sparse/matrix_factorization.h"
#include "sparse/ratings.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "sparse/synthetic_flags.h"
#include "sync/outer_optimizer.h"
#include "sync/streaming.h"
#include "trainer/data/mnist.h"
#include "trainer/model/model.h"
#include "trainer/straggler.h"
#include "trainer/trainer.h"
#include "trainer/workloads/mf_workload.h"
#include "trainer/workloads/sparse_linear.h"

ABSL_FLAG(std::string, workload, "dense",
          "what every run trains: dense (an mlp of --hidden on --dataset), sparse_logreg or "
          "sparse_svm (the RCV1-like synthetic set, --synthetic_*), mf (matrix factorization of "
          "--ratings, rank --rank)");
ABSL_FLAG(std::string, dataset, "fashion_mnist", "dense workload: fashion_mnist or mnist");
ABSL_FLAG(std::string, ratings, "movielens",
          "mf: 'movielens' (tools/setup.sh --movielens) or a user,item,rating CSV; 90/10 split");
ABSL_FLAG(int32_t, rank, 16, "mf: factor rank k, in [1, 1024]");
ABSL_FLAG(double, weight_decay, 0.0,
          "L2 weight decay, >= 0: the optimizer's (dense) or each example's regularizer on its "
          "support (sparse, mf: trainer/workloads/)");
ABSL_FLAG(std::string, data_dir, "", "directory with the IDX files (default: installed path)");
ABSL_FLAG(int64_t, train_examples, 0, "use only the first N training examples (0: all)");
ABSL_FLAG(std::string, modes, "async,sync",
          "update policies, comma-separated: async, sync, ssp, backup, local_sgd, locked, "
          "round_robin");
ABSL_FLAG(std::string, workers, "1,2,0",
          "worker counts, comma-separated; 0 means the number of hardware threads");
ABSL_FLAG(std::string, runs, "",
          "explicit runs mode:workers,... (e.g. async:1,async:2,sync:2); overrides "
          "--modes x --workers");
ABSL_FLAG(std::string, seeds, "1", "seeds, comma-separated (one run per seed)");
ABSL_FLAG(std::string, lrs, "0.05", "constant learning rates, comma-separated, each > 0");
ABSL_FLAG(std::string, sync_lrs, "",
          "learning rates of the modes that split a global batch (sync, backup, local_sgd), "
          "comma-separated; empty: --lrs");
ABSL_FLAG(std::string, momentums, "0", "SGD momentums, comma-separated, each in [0, 1)");
ABSL_FLAG(std::string, staleness_bound, "3",
          "ssp runs: steps a worker may run ahead, each >= 0; a list is a grid axis");
ABSL_FLAG(std::string, backup_workers, "1",
          "backup runs: gradients dropped per step, each in [0, W - 1] for every worker count "
          "W; a list is a grid axis");
ABSL_FLAG(std::string, average_every, "8",
          "local_sgd and async_local_sgd runs: local steps per round (between averagings, or "
          "between a worker's pushes), each >= 1; a list is a grid axis");
ABSL_FLAG(std::string, outer, "avg",
          "local_sgd and async_local_sgd runs: the outer optimizer of each averaging or push, "
          "comma-separated (a grid axis): "
          "avg (plain averaging), diloco (Douillard et al. 2023: outer lr 0.7, Nesterov momentum "
          "0.9) or LR:MOMENTUM[:nesterov], e.g. 0.7:0.9:nesterov");
ABSL_FLAG(std::string, streaming, "off",
          "local_sgd runs: Streaming DiLoCo's fragments (Douillard et al. 2025), comma-separated "
          "(a grid axis): off (all parameters at once) or F:TAU:ALPHA (F fragments, each "
          "exchange overlapping TAU steps and merged with factor ALPHA), e.g. 4:1:0.5");
ABSL_FLAG(std::string, async_lr, "constant",
          "async runs with more than one worker: the learning-rate rule of each update, "
          "comma-separated (a grid axis): constant, staleness_aware (lr / staleness, Zhang et al. "
          "2016) or delay_adaptive (lr * min(1, W / staleness), Koloskova et al. and Mishchenko "
          "et al. 2022)");
ABSL_FLAG(std::string, staleness_aware_lr, "off",
          "async runs with more than one worker: off, on, or off,on (a grid axis): divide the "
          "learning rate by each update's staleness (Zhang et al. 2016); the same as "
          "--async_lr=constant, staleness_aware or constant,staleness_aware");
ABSL_FLAG(std::string, max_delay, "0",
          "async runs with more than one worker: drop an update staler than this many updates "
          "(Ringmaster ASGD's R, Maranjyan et al. 2025), each >= 0, 0: none; a list is a grid "
          "axis");
ABSL_FLAG(std::string, delayed_nesterov, "1",
          "async_local_sgd runs: pushes per update of the outer momentum (Liu et al. 2024's "
          "delayed Nesterov), each >= 1 (> 1 needs an outer optimizer with momentum); a list is a "
          "grid axis");
ABSL_FLAG(std::string, dynamic_local_updates, "off",
          "async_local_sgd runs: off, on, or off,on (a grid axis): each worker's round length "
          "from its speed (Liu et al. 2024's DyLU)");
ABSL_FLAG(bool, simulate, false,
          "run every configuration in the simulation (sim/simulator.h): W logical workers on "
          "one thread, deterministic, times in simulated seconds");
ABSL_FLAG(double, step_time_ms, 10.0,
          "--simulate: mean compute time of one worker step, in (0, 1e9] ms");
ABSL_FLAG(double, jitter, 0.0,
          "--simulate: log-normal sigma of each step's compute time, in [0, 4]");
ABSL_FLAG(double, allreduce_ms, 0.0,
          "--simulate: all-reduce time of each sync/backup step, local_sgd averaging and "
          "async_local_sgd push, in "
          "[0, 1e9] ms");
ABSL_FLAG(double, bandwidth_gbps, 0.0,
          "--simulate, instead of --allreduce_ms: each exchange's time from its bytes, "
          "--latency_ms plus the bytes on a worker's link (ring all-reduce 2(W-1)/W x 4P, an "
          "async_local_sgd push and pull 2 x 4P) over this bandwidth in Gbit/s, in [0, 8e6]; 0: "
          "off");
ABSL_FLAG(double, latency_ms, 0.0,
          "--simulate with --bandwidth_gbps: the fixed part of each exchange, in [0, 1e9] ms");
ABSL_FLAG(std::string, stragglers, "",
          "every run: slowed workers, worker:factor,... (e.g. 1:3); see trainer/straggler.h "
          "(with --simulate: sim/compute_time.h)");
ABSL_FLAG(std::string, straggler_delay, "",
          "every real run: random delays after steps, mean@probability (e.g. 50ms@0.1)");
ABSL_FLAG(int64_t, epochs, 3, "epochs per run");
ABSL_FLAG(int64_t, batch_size, 64, "async, ssp, locked, round_robin: examples per worker step");
ABSL_FLAG(int64_t, async_total_batch, 0,
          "async, ssp, locked, round_robin: if > 0, each worker's batch is this / W (W must divide "
          "it), so the W "
          "workers' concurrent steps cover the same examples whatever W (Zhang et al. 2016's "
          "protocol); replaces --batch_size");
ABSL_FLAG(int64_t, sync_batch_size, 0,
          "sync, backup and local_sgd: the global batch, split across the workers; 0: W times "
          "an async worker's batch (--batch_size, or --async_total_batch / W), so that a worker "
          "step computes as many examples in every mode (a fair comparison per second)");
ABSL_FLAG(bool, drop_last, false,
          "every run: leave out each epoch's short last batch (per worker where the batch is), so "
          "the final accuracy is read after a full-batch step (TrainerOptions::drop_last)");
ABSL_FLAG(std::string, hidden, "256,256", "mlp hidden sizes");
ABSL_FLAG(double, eval_every_epochs, 0.25,
          "test-set evaluation period in epochs (0: only at the end, not in the run's time)");
ABSL_FLAG(double, target_accuracy, 0.85,
          "test accuracy in (0, 1] for the time- and examples-to-target columns");
ABSL_FLAG(int64_t, log_every, 20, "convergence-log train row per worker every N steps");
ABSL_FLAG(std::string, out_dir, "/tmp/hogwild_bench",
          "where records, logs, tables and figures go; finished runs found there are skipped");
ABSL_FLAG(bool, plot, true,
          "draw the figures with benchmarks/plot_convergence.py and plot_study.py");
ABSL_FLAG(std::string, python, "/usr/bin/python3", "interpreter with matplotlib");

namespace hogwild {
namespace {

// argv[0], to find the plot scripts in the runfiles when RUNFILES_DIR is not set.
std::string program_path;

struct RunSpec {
  Mode mode;
  int workers;
};

// One run of the grid: its options (log path not yet set), key and configuration label.
struct GridRun {
  TrainerOptions options;
  std::string key;
  std::string config;
  double lr = 0.0;
  double momentum = 0.0;
};

// `distinct`: a grid axis, where a value given twice would run once and be counted twice.
absl::StatusOr<std::vector<int64_t>> ParseInts(const std::string& flag, const std::string& text,
                                               bool distinct = true) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s=%s: '%s' is not a non-negative integer", flag, text, std::string(part)));
    }
    if (distinct && std::find(out.begin(), out.end(), v) != out.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s=%s: %d is given twice; give each value once", flag, text, v));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrFormat("--%s is empty", flag));
  return out;
}

// Comma-separated doubles in [low, high) (high_open) or [low, high]; `allowed` words the range.
absl::StatusOr<std::vector<double>> ParseDoubles(const std::string& flag, const std::string& text,
                                                 double low, bool low_open, double high,
                                                 bool high_open, const std::string& allowed) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    double v = 0;
    if (!absl::SimpleAtod(part, &v) || !std::isfinite(v) || v < low || (low_open && v == low) ||
        v > high || (high_open && v == high)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s=%s: '%s' is out of range; each value must be %s", flag, text,
                          std::string(part), allowed));
    }
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s is empty; give values %s", flag, allowed));
  }
  return out;
}

absl::StatusOr<Mode> ParseModeFlag(const std::string& flag, absl::string_view name) {
  absl::StatusOr<Mode> mode = ParseMode(name);
  if (!mode.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s: %s", flag, std::string(mode.status().message())));
  }
  return mode;
}

int HardwareThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

absl::StatusOr<std::vector<RunSpec>> ParseRuns() {
  std::vector<RunSpec> runs;
  const std::string explicit_runs = absl::GetFlag(FLAGS_runs);
  if (!explicit_runs.empty()) {
    for (absl::string_view item : absl::StrSplit(explicit_runs, ',', absl::SkipEmpty())) {
      const std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
      int workers = 0;
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &workers) || workers < 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--runs: '%s' is not mode:workers (e.g. async:2)", std::string(item)));
      }
      HOGWILD_ASSIGN_OR_RETURN(Mode mode, ParseModeFlag("runs", parts[0]));
      runs.push_back({mode, workers == 0 ? HardwareThreads() : workers});
    }
    return runs;
  }
  HOGWILD_ASSIGN_OR_RETURN(std::vector<int64_t> counts,
                           ParseInts("workers", absl::GetFlag(FLAGS_workers)));
  std::vector<int> workers;
  for (int64_t c : counts) {
    if (c > kMaxWorkers) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--workers: %d is out of range; each value must be in [0, %d]", c, kMaxWorkers));
    }
    const int w = c == 0 ? HardwareThreads() : static_cast<int>(c);
    if (std::find(workers.begin(), workers.end(), w) == workers.end()) workers.push_back(w);
  }
  std::vector<Mode> modes;
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_modes), ',', absl::SkipEmpty())) {
    HOGWILD_ASSIGN_OR_RETURN(Mode mode, ParseModeFlag("modes", name));
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  }
  if (modes.empty()) {
    return absl::InvalidArgumentError(
        "--modes is empty; the modes are async, sync, ssp, backup, local_sgd, locked and "
        "round_robin");
  }
  for (Mode mode : modes) {
    for (int w : workers) runs.push_back({mode, w});
  }
  return runs;
}

// An outer optimizer as --outer spells it: "avg", "diloco" or "LR:MOMENTUM[:nesterov]".
std::string OuterLabel(const OuterOptimizer& outer) {
  if (outer == OuterOptimizer{}) return "avg";
  if (outer == kDiloco) return "diloco";
  return absl::StrFormat("%g:%g%s", outer.lr, outer.momentum, outer.nesterov ? ":nesterov" : "");
}

// The mode with its policy option, e.g. "ssp(bound=3)".
std::string ModeLabel(const TrainerOptions& o) {
  switch (o.mode) {
    case Mode::kSsp:
      return absl::StrFormat("ssp(bound=%d)", o.staleness_bound);
    case Mode::kBackup:
      return absl::StrFormat("backup(b=%d)", o.backup_workers);
    case Mode::kLocalSgd: {
      // Plain averaging and one fragment keep the older labels, and so the older runs' keys.
      const std::string streaming =
          o.streaming.is_default()
              ? ""
              : absl::StrFormat(" streaming=%d:%d:%g", o.streaming.fragments,
                                o.streaming.overlap_steps, o.streaming.mix_alpha);
      if (o.outer == OuterOptimizer{}) {
        return absl::StrFormat("local_sgd(H=%d%s)", o.average_every, streaming);
      }
      return absl::StrFormat("local_sgd(H=%d outer=%s%s)", o.average_every, OuterLabel(o.outer),
                             streaming);
    }
    case Mode::kAsyncLocalSgd: {
      // Spaces, not commas: labels are fields of runs.csv and staleness.csv.
      std::string label = absl::StrFormat("async_local_sgd(H=%d", o.average_every);
      if (!(o.outer == OuterOptimizer{})) absl::StrAppend(&label, " outer=", OuterLabel(o.outer));
      if (o.delayed_nesterov > 1) absl::StrAppendFormat(&label, " N=%d", o.delayed_nesterov);
      if (o.dynamic_local_updates) absl::StrAppend(&label, " dylu");
      return label + ")";
    }
    case Mode::kAsync: {
      // The plain rule keeps the bare name, so that the keys of older studies stay the same.
      std::vector<std::string> rules;
      if (o.sgd.staleness_aware_lr) rules.push_back("lr/staleness");
      if (o.sgd.delay_adaptive_lr) rules.push_back("lr delay-adaptive");
      if (o.sgd.max_delay > 0) rules.push_back(absl::StrFormat("R=%d", o.sgd.max_delay));
      if (rules.empty()) return "async";
      // Spaces, not commas: labels are fields of runs.csv and staleness.csv.
      return absl::StrFormat("async(%s)", absl::StrJoin(rules, " "));
    }
    default:
      return ModeName(o.mode);
  }
}

// 32-bit FNV-1a: a stable hash (unlike absl::Hash) of the settings every run shares.
uint32_t Fnv1a(const std::string& text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// A flag given for runs the grid does not have would be silently dropped: refused, naming what
// it is for.
absl::Status CheckFlagsHaveRuns(const std::vector<RunSpec>& specs) {
  auto any = [&](auto pred) { return std::any_of(specs.begin(), specs.end(), pred); };
  // local_rounds: read by both modes with local rounds (core/mode.h HasLocalRounds).
  const struct {
    const char* flag;
    Mode mode;
    bool local_rounds;
  } policy_flags[] = {{"staleness_bound", Mode::kSsp, false},
                      {"backup_workers", Mode::kBackup, false},
                      {"average_every", Mode::kLocalSgd, true},
                      {"outer", Mode::kLocalSgd, true},
                      {"streaming", Mode::kLocalSgd, false},
                      {"delayed_nesterov", Mode::kAsyncLocalSgd, false},
                      {"dynamic_local_updates", Mode::kAsyncLocalSgd, false}};
  for (const auto& [flag, mode, local_rounds] : policy_flags) {
    const auto reads = [mode = mode, local_rounds = local_rounds](const RunSpec& r) {
      return local_rounds ? HasLocalRounds(r.mode) : r.mode == mode;
    };
    if (absl::flags_internal::WasPresentOnCommandLine(flag) && !any(reads)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s has no effect: the grid has no %s runs (--modes or --runs)", flag,
                          local_rounds ? "local_sgd or async_local_sgd" : ModeName(mode)));
    }
  }
  // Async's delay rules act on stale updates: with one worker there are none.
  if (!any([](const RunSpec& r) { return r.mode == Mode::kAsync && r.workers > 1; })) {
    if (absl::StrContains(absl::GetFlag(FLAGS_staleness_aware_lr), "on")) {
      return absl::InvalidArgumentError(
          "--staleness_aware_lr=on has no effect: the grid has no async runs with more than one "
          "worker");
    }
    for (const char* flag : {"async_lr", "max_delay"}) {
      if (absl::flags_internal::WasPresentOnCommandLine(flag)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--%s has no effect: the grid has no async runs with more than one worker", flag));
      }
    }
  }
  if ((absl::GetFlag(FLAGS_allreduce_ms) != 0 || absl::GetFlag(FLAGS_bandwidth_gbps) != 0) &&
      !any([](const RunSpec& r) { return Exchanges(r.mode); })) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s has no effect: the grid has no sync, backup, local_sgd or async_local_sgd runs "
        "(async and ssp have no all-reduce)",
        absl::GetFlag(FLAGS_allreduce_ms) != 0 ? "allreduce_ms" : "bandwidth_gbps"));
  }
  return absl::OkStatus();
}

// Async's learning-rate rule (--async_lr), one of SgdOptions' exclusive rules.
enum class AsyncLr { kConstant, kStalenessAware, kDelayAdaptive };

// The grid's axes besides the runs (mode x workers): each value once.
struct GridAxes {
  std::vector<int64_t> seeds;
  std::vector<double> lrs;
  std::vector<double> sync_lrs;  // the modes that split a global batch
  std::vector<double> momentums;
  std::vector<int64_t> staleness_bounds;     // ssp
  std::vector<int64_t> average_everys;       // local_sgd, async_local_sgd
  std::vector<OuterOptimizer> outers;        // local_sgd, async_local_sgd
  std::vector<StreamingOptions> streamings;  // local_sgd
  std::vector<int64_t> backup_workers;       // backup
  std::vector<AsyncLr> async_lrs;            // async with more than one worker
  std::vector<int64_t> max_delays;           // async with more than one worker; 0: none
  std::vector<int64_t> delayed_nesterovs;    // async_local_sgd
  std::vector<bool> dynamic_local_updates;   // async_local_sgd
};

// Comma-separated integers, each in [low, high].
absl::StatusOr<std::vector<int64_t>> ParseIntsInRange(const std::string& flag,
                                                      const std::string& text, int64_t low,
                                                      int64_t high) {
  HOGWILD_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseInts(flag, text));
  for (int64_t v : values) {
    if (v < low || v > high) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s: %d is out of range; each value must be in [%d, %d]", flag, v, low, high));
    }
  }
  return values;
}

// --outer: each value once, in the order given.
absl::StatusOr<std::vector<OuterOptimizer>> ParseOuters() {
  const std::string text = absl::GetFlag(FLAGS_outer);
  std::vector<OuterOptimizer> outers;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    OuterOptimizer outer;
    if (part == "diloco") {
      outer = kDiloco;
    } else if (part != "avg") {
      const std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
      double lr = 0, momentum = 0;
      if (fields.size() < 2 || fields.size() > 3 || !absl::SimpleAtod(fields[0], &lr) ||
          !absl::SimpleAtod(fields[1], &momentum) ||
          (fields.size() == 3 && fields[2] != "nesterov")) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--outer=%s: '%s' is not avg, diloco or LR:MOMENTUM[:nesterov] (e.g. "
                            "0.7:0.9:nesterov)",
                            text, std::string(part)));
      }
      outer = {.lr = static_cast<float>(lr),
               .momentum = static_cast<float>(momentum),
               .nesterov = fields.size() == 3};
      if (const absl::Status valid = CheckOuterOptimizer(outer, "outer "); !valid.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--outer=%s: '%s': %s", text, std::string(part), valid.message()));
      }
    }
    if (std::find(outers.begin(), outers.end(), outer) == outers.end()) outers.push_back(outer);
  }
  return outers;
}

// --streaming: each value once, in the order given. The ranges that depend on H are checked
// with each run (ValidateOptions).
absl::StatusOr<std::vector<StreamingOptions>> ParseStreamings() {
  const std::string text = absl::GetFlag(FLAGS_streaming);
  std::vector<StreamingOptions> streamings;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    StreamingOptions streaming;
    if (part != "off") {
      const std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
      int fragments = 0;
      int64_t overlap = 0;
      double alpha = 0;
      if (fields.size() != 3 || !absl::SimpleAtoi(fields[0], &fragments) ||
          !absl::SimpleAtoi(fields[1], &overlap) || !absl::SimpleAtod(fields[2], &alpha)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--streaming=%s: '%s' is not off or F:TAU:ALPHA (e.g. 4:1:0.5)", text,
                            std::string(part)));
      }
      streaming = {
          .fragments = fragments, .overlap_steps = overlap, .mix_alpha = static_cast<float>(alpha)};
      if (const absl::Status valid =
              CheckStreamingOptions(streaming, kMaxAverageEvery, /*num_params=*/0, "streaming ");
          !valid.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--streaming=%s: '%s': %s", text, std::string(part), valid.message()));
      }
    }
    if (std::find(streamings.begin(), streamings.end(), streaming) == streamings.end()) {
      streamings.push_back(streaming);
    }
  }
  return streamings;
}

// --async_lr, or the older --staleness_aware_lr (off: constant, on: staleness_aware), not
// both: each value once, in the order given.
absl::StatusOr<std::vector<AsyncLr>> ParseAsyncLrs() {
  const bool legacy = absl::flags_internal::WasPresentOnCommandLine("staleness_aware_lr");
  if (legacy && absl::flags_internal::WasPresentOnCommandLine("async_lr")) {
    return absl::InvalidArgumentError(
        "--async_lr and --staleness_aware_lr both choose async's learning-rate rule; give "
        "--async_lr alone (--staleness_aware_lr=off,on is --async_lr=constant,staleness_aware)");
  }
  const std::string flag = legacy ? "staleness_aware_lr" : "async_lr";
  const std::string text =
      legacy ? absl::GetFlag(FLAGS_staleness_aware_lr) : absl::GetFlag(FLAGS_async_lr);
  std::vector<AsyncLr> rules;
  for (absl::string_view v : absl::StrSplit(text, ',')) {
    AsyncLr rule;
    if (legacy && (v == "off" || v == "on")) {
      rule = v == "on" ? AsyncLr::kStalenessAware : AsyncLr::kConstant;
    } else if (!legacy && v == "constant") {
      rule = AsyncLr::kConstant;
    } else if (!legacy && v == "staleness_aware") {
      rule = AsyncLr::kStalenessAware;
    } else if (!legacy && v == "delay_adaptive") {
      rule = AsyncLr::kDelayAdaptive;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s=%s: '%s' is %s", flag, text, std::string(v),
          legacy ? "neither off nor on (give off, on or off,on)"
                 : "not a learning-rate rule (give constant, staleness_aware or delay_adaptive, "
                   "comma-separated)"));
    }
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
  }
  return rules;
}

// The axes' flags (and --target_accuracy), checked in the order of their help.
absl::StatusOr<GridAxes> ParseGridAxes() {
  GridAxes axes;
  HOGWILD_ASSIGN_OR_RETURN(axes.seeds, ParseInts("seeds", absl::GetFlag(FLAGS_seeds)));
  HOGWILD_ASSIGN_OR_RETURN(axes.lrs, ParseDoubles("lrs", absl::GetFlag(FLAGS_lrs), 0.0, true, 1e6,
                                                  false, "in (0, 1e6]"));
  HOGWILD_ASSIGN_OR_RETURN(axes.momentums, ParseDoubles("momentums", absl::GetFlag(FLAGS_momentums),
                                                        0.0, false, 1.0, true, "in [0, 1)"));
  const double target = absl::GetFlag(FLAGS_target_accuracy);
  if (!(target > 0.0 && target <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--target_accuracy=%g is out of range; it must be in (0, 1] (0.85 is 85%%)", target));
  }
  axes.sync_lrs = axes.lrs;
  if (const std::string text = absl::GetFlag(FLAGS_sync_lrs); !text.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(axes.sync_lrs,
                             ParseDoubles("sync_lrs", text, 0.0, true, 1e6, false, "in (0, 1e6]"));
  }
  HOGWILD_ASSIGN_OR_RETURN(axes.staleness_bounds,
                           ParseIntsInRange("staleness_bound", absl::GetFlag(FLAGS_staleness_bound),
                                            0, kMaxStalenessBound));
  HOGWILD_ASSIGN_OR_RETURN(
      axes.average_everys,
      ParseIntsInRange("average_every", absl::GetFlag(FLAGS_average_every), 1, kMaxAverageEvery));
  HOGWILD_ASSIGN_OR_RETURN(axes.outers, ParseOuters());
  HOGWILD_ASSIGN_OR_RETURN(axes.streamings, ParseStreamings());
  HOGWILD_ASSIGN_OR_RETURN(axes.backup_workers,
                           ParseInts("backup_workers", absl::GetFlag(FLAGS_backup_workers)));
  HOGWILD_ASSIGN_OR_RETURN(axes.async_lrs, ParseAsyncLrs());
  HOGWILD_ASSIGN_OR_RETURN(
      axes.max_delays,
      ParseIntsInRange("max_delay", absl::GetFlag(FLAGS_max_delay), 0, kMaxStalenessBound));
  HOGWILD_ASSIGN_OR_RETURN(
      axes.delayed_nesterovs,
      ParseIntsInRange("delayed_nesterov", absl::GetFlag(FLAGS_delayed_nesterov), 1,
                       kMaxDelayedNesterov));
  for (absl::string_view value : absl::StrSplit(absl::GetFlag(FLAGS_dynamic_local_updates), ',')) {
    if (value != "off" && value != "on") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--dynamic_local_updates: \"%s\" is not off or on; give off, on or off,on", value));
    }
    if (std::find(axes.dynamic_local_updates.begin(), axes.dynamic_local_updates.end(),
                  value == "on") == axes.dynamic_local_updates.end()) {
      axes.dynamic_local_updates.push_back(value == "on");
    }
  }
  return axes;
}

// --stragglers and --straggler_delay, applied to every run.
absl::StatusOr<StragglerOptions> ParseStragglerFlags() {
  StragglerOptions stragglers;
  const std::string slowdown_text = absl::GetFlag(FLAGS_stragglers);
  const std::string delay_text = absl::GetFlag(FLAGS_straggler_delay);
  if (!slowdown_text.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(stragglers.slowdown, ParseSlowdown("stragglers", slowdown_text));
  }
  if (!delay_text.empty()) {
    if (absl::GetFlag(FLAGS_simulate)) {
      return absl::InvalidArgumentError(
          "--straggler_delay delays real threads; with --simulate give --jitter (random step "
          "times) and --stragglers (slowed workers)");
    }
    HOGWILD_RETURN_IF_ERROR(ParseRandomDelay("straggler_delay", delay_text, stragglers));
  }
  return stragglers;
}

// The workloads the study trains (trainer/workloads/), by --workload.
enum class StudyWorkload { kDense, kSparseLogreg, kSparseSvm, kMf };

absl::StatusOr<StudyWorkload> ParseWorkloadFlag() {
  const std::string name = absl::GetFlag(FLAGS_workload);
  if (name == "dense") return StudyWorkload::kDense;
  if (name == "sparse_logreg") return StudyWorkload::kSparseLogreg;
  if (name == "sparse_svm") return StudyWorkload::kSparseSvm;
  if (name == "mf") return StudyWorkload::kMf;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--workload=%s is not a workload: dense, sparse_logreg, sparse_svm or mf", name));
}

// The capabilities table's row of --workload (checked by CheckWorkloadFlags first).
WorkloadKind StudyWorkloadKind() {
  const std::string name = absl::GetFlag(FLAGS_workload);
  if (name == "sparse_logreg" || name == "sparse_svm") return WorkloadKind::kSparseLinear;
  if (name == "mf") return WorkloadKind::kMatrixFactorization;
  return WorkloadKind::kDense;
}

// --workload and the flags of each workload's data, checked before any data is loaded: a flag
// of another workload's data is refused.
absl::Status CheckWorkloadFlags() {
  HOGWILD_ASSIGN_OR_RETURN(const StudyWorkload workload, ParseWorkloadFlag());
  const bool sparse =
      workload == StudyWorkload::kSparseLogreg || workload == StudyWorkload::kSparseSvm;
  const struct {
    const char* flag;
    bool applies;
    const char* to;
  } owned[] = {{"dataset", workload == StudyWorkload::kDense, "dense"},
               {"data_dir", workload == StudyWorkload::kDense, "dense"},
               {"train_examples", workload == StudyWorkload::kDense, "dense"},
               {"hidden", workload == StudyWorkload::kDense, "dense"},
               {sparse::kSyntheticFlagNames[0], sparse, "sparse_logreg or sparse_svm"},
               {sparse::kSyntheticFlagNames[1], sparse, "sparse_logreg or sparse_svm"},
               {sparse::kSyntheticFlagNames[2], sparse, "sparse_logreg or sparse_svm"},
               {sparse::kSyntheticFlagNames[3], sparse, "sparse_logreg or sparse_svm"},
               {sparse::kSyntheticFlagNames[4], sparse, "sparse_logreg or sparse_svm"},
               {"ratings", workload == StudyWorkload::kMf, "mf"},
               {"rank", workload == StudyWorkload::kMf, "mf"}};
  for (const auto& o : owned) {
    if (!o.applies && absl::flags_internal::WasPresentOnCommandLine(o.flag)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s applies to --workload=%s only", o.flag, o.to));
    }
  }
  if (sparse && absl::GetFlag(FLAGS_synthetic_test_examples) == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--workload=%s has no test set to compare the runs on: give --synthetic_test_examples "
        "(e.g. 5000)",
        absl::GetFlag(FLAGS_workload)));
  }
  if (workload != StudyWorkload::kDense && !absl::GetFlag(FLAGS_simulate)) {
    // The sparse trainers' real runs are plain SGD on their own threads.
    for (const char* flag : {"momentums", "drop_last", "stragglers", "straggler_delay",
                             "staleness_aware_lr", "async_lr", "max_delay"}) {
      if (absl::flags_internal::WasPresentOnCommandLine(flag)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--%s has no effect on --workload=%s's real runs (the sparse trainers' plain SGD); "
            "add --simulate or leave it out",
            flag, absl::GetFlag(FLAGS_workload)));
      }
    }
  }
  // The ranges are the trainers' own (the dense one's is checked with each run's options, the
  // sparse linear one's when its workload is made).
  if (workload == StudyWorkload::kMf) {
    HOGWILD_RETURN_IF_ERROR(sparse::ValidateMfOptions(
        {.rank = absl::GetFlag(FLAGS_rank),
         .weight_decay = static_cast<float>(absl::GetFlag(FLAGS_weight_decay))}));
  }
  return absl::OkStatus();
}

// The flags that size the batches and the data, each >= 0.
absl::Status CheckSizeFlags() {
  if (absl::GetFlag(FLAGS_sync_batch_size) < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--sync_batch_size=%d is out of range; it must be >= 0 (0: W times an async worker's "
        "batch)",
        absl::GetFlag(FLAGS_sync_batch_size)));
  }
  if (absl::GetFlag(FLAGS_async_total_batch) < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--async_total_batch=%d is out of range; it must be >= 0 (0: use --batch_size)",
        absl::GetFlag(FLAGS_async_total_batch)));
  }
  const int64_t train_examples = absl::GetFlag(FLAGS_train_examples);
  if (train_examples < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--train_examples=%d is out of range; it must be >= 0 (0: all)", train_examples));
  }
  return absl::OkStatus();
}

// The options every run shares (model, epochs, evaluations, log, stragglers).
absl::StatusOr<TrainerOptions> BaseOptions(const StragglerOptions& stragglers) {
  TrainerOptions base;
  base.epochs = absl::GetFlag(FLAGS_epochs);
  base.drop_last = absl::GetFlag(FLAGS_drop_last);
  base.model.name = "mlp";
  HOGWILD_ASSIGN_OR_RETURN(std::vector<int64_t> hidden,
                           ParseInts("hidden", absl::GetFlag(FLAGS_hidden), /*distinct=*/false));
  base.model.hidden = hidden;
  if (absl::Status model = Model::Create(base.model).status(); !model.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hidden=%s: %s", absl::GetFlag(FLAGS_hidden), std::string(model.message())));
  }
  // The sparse and mf workloads own their regularizer (trainer/workloads/): the optimizer's
  // weight decay is the dense workload's only.
  if (absl::GetFlag(FLAGS_workload) == "dense") {
    base.sgd.weight_decay = static_cast<float>(absl::GetFlag(FLAGS_weight_decay));
  }
  base.eval_every_steps = 0;
  base.eval_every_epochs = absl::GetFlag(FLAGS_eval_every_epochs);
  base.log_every_steps = absl::GetFlag(FLAGS_log_every);
  base.stragglers = stragglers;
  return base;
}

// The workload's own settings for a run's key: none for the dense workload without weight
// decay, so that the keys of a study from before --workload stay the same.
std::string WorkloadSettings() {
  std::string out;
  if (const double wd = absl::GetFlag(FLAGS_weight_decay); wd != 0) {
    out = absl::StrFormat(" weight_decay=%.17g", wd);
  }
  const std::string workload = absl::GetFlag(FLAGS_workload);
  if (workload == "dense") return out;
  if (workload == "mf") {
    return absl::StrFormat(" workload=mf ratings=%s rank=%d%s", absl::GetFlag(FLAGS_ratings),
                           absl::GetFlag(FLAGS_rank), out);
  }
  return absl::StrFormat(" workload=%s synthetic=%s%s", workload, sparse::SyntheticFlagsText(),
                         out);
}

// The settings every run shares, hashed into each run's key so that a rerun with other
// settings does not reuse the runs.
std::string SharedSettings(const TrainerOptions& base) {
  return absl::StrFormat(
             "dataset=%s train_examples=%d epochs=%d batch=%d sync_batch=%d hidden=%s eval=%.17g "
             "log_every=%d stragglers=%s delay=%s%s",
             absl::GetFlag(FLAGS_dataset), absl::GetFlag(FLAGS_train_examples), base.epochs,
             // A total batch is told apart from any --batch_size by its sign.
             absl::GetFlag(FLAGS_async_total_batch) > 0 ? -absl::GetFlag(FLAGS_async_total_batch)
                                                        : absl::GetFlag(FLAGS_batch_size),
             absl::GetFlag(FLAGS_sync_batch_size), absl::GetFlag(FLAGS_hidden),
             base.eval_every_epochs, base.log_every_steps, absl::GetFlag(FLAGS_stragglers),
             absl::GetFlag(FLAGS_straggler_delay), base.drop_last ? " drop_last" : "") +
         (absl::GetFlag(FLAGS_simulate)
              ? absl::StrFormat(" simulate step_ms=%.17g jitter=%.17g allreduce_ms=%.17g",
                                absl::GetFlag(FLAGS_step_time_ms), absl::GetFlag(FLAGS_jitter),
                                absl::GetFlag(FLAGS_allreduce_ms)) +
                    // Only when on, so that earlier studies keep their run keys.
                    (absl::GetFlag(FLAGS_bandwidth_gbps) != 0
                         ? absl::StrFormat(" bandwidth_gbps=%.17g latency_ms=%.17g",
                                           absl::GetFlag(FLAGS_bandwidth_gbps),
                                           absl::GetFlag(FLAGS_latency_ms))
                         : "")
              : "") +
         WorkloadSettings();
}

// The batch of a run of `spec`: the global batch in the modes that split one, else a worker's.
absl::StatusOr<int64_t> RunBatchSize(const RunSpec& spec) {
  const int64_t total = absl::GetFlag(FLAGS_async_total_batch);
  if (SplitsGlobalBatch(spec.mode)) {
    // By default the W workers' steps together take what W async workers' steps take, so
    // that a worker step computes as many examples in every mode: the simulation's step
    // time does not depend on the batch (and the README compares per second).
    const int64_t sync_batch = absl::GetFlag(FLAGS_sync_batch_size);
    return sync_batch > 0 ? sync_batch
           : total > 0    ? total
                          : absl::GetFlag(FLAGS_batch_size) * spec.workers;
  }
  if (total > 0) {
    if (total % spec.workers != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--async_total_batch=%d is not a multiple of %d workers; give a multiple of every "
          "worker count of the async and ssp runs",
          total, spec.workers));
    }
    return total / spec.workers;
  }
  return absl::GetFlag(FLAGS_batch_size);
}

// The mode's own options, one configuration per value (its grid axis), from `v`.
absl::StatusOr<std::vector<TrainerOptions>> PolicyVariants(const RunSpec& spec, TrainerOptions v,
                                                           const GridAxes& axes) {
  std::vector<TrainerOptions> variants;
  switch (spec.mode) {
    case Mode::kSsp:
      // With one worker nobody can run ahead: one run, not one per bound.
      for (int64_t bound : axes.staleness_bounds) {
        v.staleness_bound = bound;
        variants.push_back(v);
        if (spec.workers == 1) break;
      }
      break;
    case Mode::kLocalSgd:
      for (int64_t h : axes.average_everys) {
        for (const OuterOptimizer& outer : axes.outers) {
          for (const StreamingOptions& streaming : axes.streamings) {
            v.average_every = h;
            v.outer = outer;
            v.streaming = streaming;
            variants.push_back(v);
          }
        }
      }
      break;
    case Mode::kAsyncLocalSgd:
      // A delay that no --outer value has momentum for would be skipped everywhere: refused, not
      // dropped (with --outer=avg alone, --delayed_nesterov=2 would leave an empty grid).
      for (int64_t n : axes.delayed_nesterovs) {
        if (n > 1 && std::none_of(axes.outers.begin(), axes.outers.end(),
                                  [](const OuterOptimizer& o) { return o.has_momentum(); })) {
          return CheckDelayedNesterov(n, axes.outers.front(), "--delayed_nesterov",
                                      "an --outer value with momentum (diloco, or LR:MOMENTUM)");
        }
      }
      for (int64_t h : axes.average_everys) {
        for (const OuterOptimizer& outer : axes.outers) {
          for (int64_t n : axes.delayed_nesterovs) {
            // Delaying needs momentum to delay (CheckDelayedNesterov): skipped, as 1-worker
            // async skips its rules.
            if (n > 1 && !outer.has_momentum()) continue;
            for (bool dylu : axes.dynamic_local_updates) {
              v.average_every = h;
              v.outer = outer;
              v.delayed_nesterov = n;
              v.dynamic_local_updates = dylu;
              variants.push_back(v);
            }
          }
        }
      }
      break;
    case Mode::kBackup:
      for (int64_t backup : axes.backup_workers) {
        if (backup >= spec.workers) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "--backup_workers%s: %d is out of range for %d workers; each value must be in "
              "[0, %d] (fewer than every worker count of the backup runs)",
              absl::flags_internal::WasPresentOnCommandLine("backup_workers")
                  ? ""
                  : " (default 1; give --backup_workers=0 for 1-worker backup runs)",
              backup, spec.workers, spec.workers - 1));
        }
        v.backup_workers = static_cast<int>(backup);
        variants.push_back(v);
      }
      break;
    case Mode::kAsync:
      // With one worker there is no staleness to scale by or drop for: only the plain run.
      for (AsyncLr rule : axes.async_lrs) {
        for (int64_t max_delay : axes.max_delays) {
          if (spec.workers == 1 && (rule != AsyncLr::kConstant || max_delay != 0)) continue;
          v.sgd.staleness_aware_lr = rule == AsyncLr::kStalenessAware;
          v.sgd.delay_adaptive_lr = rule == AsyncLr::kDelayAdaptive;
          v.sgd.max_delay = max_delay;
          variants.push_back(v);
        }
      }
      if (variants.empty()) {  // no plain value was asked for: the 1-worker run is the same
        v.sgd.staleness_aware_lr = false;
        v.sgd.delay_adaptive_lr = false;
        v.sgd.max_delay = 0;
        variants.push_back(v);
      }
      break;
    default:
      variants.push_back(v);
  }
  return variants;
}

// Appends the runs of one configuration (`variant`, seed `seed`) over the learning rates and
// momentums, each checked by ValidateOptions.
absl::Status AppendRuns(const TrainerOptions& variant, const RunSpec& spec, int64_t seed,
                        const GridAxes& axes, const std::string& shared,
                        std::vector<GridRun>& grid) {
  for (double lr : SplitsGlobalBatch(spec.mode) ? axes.sync_lrs : axes.lrs) {
    for (double momentum : axes.momentums) {
      GridRun run;
      TrainerOptions& o = run.options;
      o = variant;
      o.seed = static_cast<uint64_t>(seed);
      o.lr.base_lr = static_cast<float>(lr);
      o.sgd.momentum = static_cast<float>(momentum);
      run.lr = lr;
      run.momentum = momentum;
      run.config = absl::StrFormat("%s w=%d lr=%g m=%g", ModeLabel(o), spec.workers, lr, momentum);
      run.key = absl::StrFormat("%s_w%d_lr%g_m%g_s%d_%08x", ModeName(o.mode), spec.workers, lr,
                                momentum, seed, Fnv1a(shared + " " + ModeLabel(o)));
      // The cell of the study's workload where its runs go (the simulated one with --simulate).
      absl::Status valid = CheckSupported(
          StudyWorkloadKind(), o.mode,
          absl::GetFlag(FLAGS_simulate) ? Substrate::kSimulated : Substrate::kThreads,
          "TrainerOptions::mode");
      if (valid.ok()) valid = ValidateOptions(o);
      if (!valid.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("run %s seed %d: %s", run.config, seed, std::string(valid.message())));
      }
      grid.push_back(std::move(run));
    }
  }
  return absl::OkStatus();
}

// Every run of the grid, seeds outermost, each checked by ValidateOptions. Errors: one line
// naming the flag and the allowed values.
absl::StatusOr<std::vector<GridRun>> BuildGrid() {
  HOGWILD_ASSIGN_OR_RETURN(std::vector<RunSpec> specs, ParseRuns());
  HOGWILD_RETURN_IF_ERROR(CheckFlagsHaveRuns(specs));
  HOGWILD_ASSIGN_OR_RETURN(const GridAxes axes, ParseGridAxes());
  HOGWILD_ASSIGN_OR_RETURN(const StragglerOptions stragglers, ParseStragglerFlags());
  HOGWILD_RETURN_IF_ERROR(CheckSizeFlags());
  HOGWILD_ASSIGN_OR_RETURN(const TrainerOptions base, BaseOptions(stragglers));
  const std::string shared = SharedSettings(base);

  std::vector<GridRun> grid;
  for (int64_t seed : axes.seeds) {
    for (const RunSpec& spec : specs) {
      TrainerOptions v = base;
      v.mode = spec.mode;
      v.num_workers = spec.workers;
      HOGWILD_ASSIGN_OR_RETURN(v.batch_size, RunBatchSize(spec));
      HOGWILD_ASSIGN_OR_RETURN(std::vector<TrainerOptions> variants, PolicyVariants(spec, v, axes));
      if (stragglers.enabled()) {
        absl::Status s = ValidateStragglerOptions(stragglers, spec.workers);
        if (!s.ok()) {
          return absl::InvalidArgumentError(
              absl::StrFormat("--stragglers/--straggler_delay with %d workers: %s", spec.workers,
                              std::string(s.message())));
        }
      }
      for (const TrainerOptions& variant : variants) {
        HOGWILD_RETURN_IF_ERROR(AppendRuns(variant, spec, seed, axes, shared, grid));
      }
    }
  }
  return grid;
}

// The library's field names in an error, as the study's flags that set them.
std::string WithStudyFlagNames(absl::string_view message) {
  return absl::StrReplaceAll(message,
                             {{"TrainerOptions::batch_size", "--batch_size (or --sync_batch_size)"},
                              {"TrainerOptions::epochs", "--epochs"},
                              {"TrainerOptions::sgd.weight_decay", "--weight_decay"},
                              {"TrainerOptions::log_every_steps", "--log_every"},
                              {"TrainerOptions::eval_every_epochs", "--eval_every_epochs"},
                              {"TrainerOptions::stragglers.slowdown", "--stragglers"},
                              {"TrainerOptions::stragglers", "--straggler_delay"},
                              {"TrainerOptions::num_workers", "--workers"},
                              {"TrainerOptions::sgd.max_delay", "--max_delay"},
                              {"SimOptions::allreduce_time_s", "--allreduce_ms"},
                              {"SimOptions::bandwidth_bytes_per_s", "--bandwidth_gbps"},
                              {"SimOptions::latency_s", "--latency_ms"}});
}

// The simulation's own options, checked before any data is loaded.
absl::Status CheckSimulationFlags() {
  if (!absl::GetFlag(FLAGS_simulate)) {
    for (const char* flag :
         {"step_time_ms", "jitter", "allreduce_ms", "bandwidth_gbps", "latency_ms"}) {
      if (absl::flags_internal::WasPresentOnCommandLine(flag)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--%s has no effect without --simulate", flag));
      }
    }
    return absl::OkStatus();
  }
  const double step_ms = absl::GetFlag(FLAGS_step_time_ms);
  if (!(step_ms > 0 && step_ms <= 1e9)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--step_time_ms=%g is out of range (0, 1e9] ms", step_ms));
  }
  const double allreduce_ms = absl::GetFlag(FLAGS_allreduce_ms);
  if (!(allreduce_ms >= 0 && allreduce_ms <= 1e9)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--allreduce_ms=%g is out of range [0, 1e9] ms", allreduce_ms));
  }
  const double gbps = absl::GetFlag(FLAGS_bandwidth_gbps);
  if (!(gbps >= 0 && gbps <= 8e6)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--bandwidth_gbps=%g is out of range [0, 8e6] Gbit/s", gbps));
  }
  const double latency_ms = absl::GetFlag(FLAGS_latency_ms);
  if (!(latency_ms >= 0 && latency_ms <= 1e9)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--latency_ms=%g is out of range [0, 1e9] ms", latency_ms));
  }
  // The combination (a latency needs a bandwidth; one model of the two), checked here so that a
  // bad one stops the study before its first run.
  SimOptions model;
  model.allreduce_time_s = allreduce_ms / 1000.0;
  model.latency_s = latency_ms / 1000.0;
  model.bandwidth_bytes_per_s = gbps * 1e9 / 8;
  if (const absl::Status checked = CheckExchangeTimeModel(model); !checked.ok()) {
    return absl::InvalidArgumentError(WithStudyFlagNames(checked.message()));
  }
  const double jitter = absl::GetFlag(FLAGS_jitter);
  if (!(jitter >= 0 && jitter <= kMaxSimJitter)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--jitter=%g is out of range [0, %g]", jitter, kMaxSimJitter));
  }
  return absl::OkStatus();
}

// Records and tables are replaced whole (core/atomic_file.h): a rerun reads them back.
absl::Status WriteFile(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, text);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("cannot read %s", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string HistogramText(const std::vector<uint64_t>& histogram) {
  std::vector<std::string> parts;
  for (size_t s = 0; s < histogram.size(); ++s) {
    if (histogram[s] != 0) parts.push_back(absl::StrFormat("%d:%d", s, histogram[s]));
  }
  return absl::StrJoin(parts, ";");
}

// Runs a plot script from this binary's runfiles on out_dir.
absl::Status Plot(const std::string& name, const std::string& out_dir, double target) {
  const char* runfiles = std::getenv("RUNFILES_DIR");
  std::string script =
      std::string(runfiles != nullptr ? runfiles : "") + "/hogwild/benchmarks/" + name;
  if (runfiles == nullptr || !std::filesystem::exists(script)) {
    script = program_path + ".runfiles/hogwild/benchmarks/" + name;
  }
  // The x axis of a simulated study is simulated time, and says so.
  const std::string command =
      absl::StrFormat("'%s' '%s' --out_dir '%s' --target %g%s", absl::GetFlag(FLAGS_python), script,
                      out_dir, target, absl::GetFlag(FLAGS_simulate) ? " --simulated" : "");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrFormat(
        "plotting failed: %s (is python3-matplotlib installed? tools/setup.sh)", command));
  }
  return absl::OkStatus();
}

// Creates --out_dir and its runs/ folder.
absl::Status MakeOutDir(const std::string& out_dir, const std::string& runs_dir) {
  std::error_code ec;
  std::filesystem::create_directories(runs_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--out_dir=%s: cannot create it (%s)", out_dir, ec.message()));
  }
  return absl::OkStatus();
}

// The record a finished run left at `record_path`.
absl::StatusOr<StudyRun> ReadDoneRun(const std::string& record_path, const std::string& runs_dir,
                                     const GridRun& run) {
  HOGWILD_ASSIGN_OR_RETURN(std::string text, ReadFile(record_path));
  absl::StatusOr<StudyRun> record = ParseStudyRunRecord(text);
  if (!record.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s (delete it to rerun that run)",
                                                      record_path, record.status().message()));
  }
  // The log lies next to the record, wherever --out_dir has moved since.
  record->summary.log_path = absl::StrFormat("%s/%s.csv", runs_dir, run.key);
  return record;
}

// The dataset of every run (--dataset, --data_dir, --train_examples).
// What every run trains: the dense workload's images, or the data of a sparse or mf workload
// and the workload over it (trainer/workloads/). Not movable: the workload points into it.
struct StudyData {
  TrainTestSplits images;  // dense: the train and test splits
  std::optional<sparse::SyntheticSplit> sparse;
  std::optional<sparse::RatingsSplit> ratings;
  std::unique_ptr<Workload> workload;  // null for the dense workload (Train and Simulate)
};

absl::Status LoadStudyData(StudyData& data) {
  HOGWILD_ASSIGN_OR_RETURN(const StudyWorkload workload, ParseWorkloadFlag());
  const auto wd = static_cast<float>(absl::GetFlag(FLAGS_weight_decay));
  switch (workload) {
    case StudyWorkload::kDense: {
      HOGWILD_ASSIGN_OR_RETURN(DatasetInfo info, LookupDataset(absl::GetFlag(FLAGS_dataset)));
      std::string dir = absl::GetFlag(FLAGS_data_dir);
      if (dir.empty()) dir = info.default_dir;
      HOGWILD_ASSIGN_OR_RETURN(
          data.images,
          LoadTrainTest(info, dir, absl::GetFlag(FLAGS_train_examples), "--train_examples"));
      return absl::OkStatus();
    }
    case StudyWorkload::kSparseLogreg:
    case StudyWorkload::kSparseSvm: {
      // One data set for every seed of the study (//sparse:train's of seed 1): the seeds vary
      // the runs.
      HOGWILD_ASSIGN_OR_RETURN(data.sparse, sparse::SyntheticSplitFromFlags(/*seed=*/1));
      HOGWILD_ASSIGN_OR_RETURN(
          data.workload,
          SparseLinearWorkload::Create(
              workload == StudyWorkload::kSparseSvm ? sparse::LinearModel::kHinge
                                                    : sparse::LinearModel::kLogistic,
              &data.sparse->train, data.sparse->test ? &*data.sparse->test : nullptr, wd));
      return absl::OkStatus();
    }
    case StudyWorkload::kMf: {
      std::string path = absl::GetFlag(FLAGS_ratings);
      if (path == "movielens") path = sparse::kMovieLensPath;
      HOGWILD_ASSIGN_OR_RETURN(sparse::Ratings all, sparse::ReadRatingsFile(path));
      data.ratings = sparse::SplitRatings(all, /*seed=*/1);
      HOGWILD_ASSIGN_OR_RETURN(data.workload,
                               MfWorkload::Create(absl::GetFlag(FLAGS_rank), &data.ratings->train,
                                                  &data.ratings->test, wd));
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown workload");
}

// One run in the simulation (--simulate), of the dense workload or data.workload, its result in
// the shape of a real run's: wall time
// and rates in simulated seconds. The stragglers slow simulated workers. `line` receives the
// simulation's own summary (FormatSimSummary), which says simulated time.
absl::StatusOr<TrainResult> SimulateRun(const TrainerOptions& options, const StudyData& data,
                                        std::string& line) {
  SimOptions sim;
  sim.trainer = options;
  sim.trainer.stragglers = StragglerOptions{};
  sim.compute.stragglers = options.stragglers.slowdown;
  sim.compute.step_time_s = absl::GetFlag(FLAGS_step_time_ms) / 1000.0;
  sim.compute.jitter = absl::GetFlag(FLAGS_jitter);
  if (Exchanges(options.mode)) {
    sim.allreduce_time_s = absl::GetFlag(FLAGS_allreduce_ms) / 1000.0;
    sim.latency_s = absl::GetFlag(FLAGS_latency_ms) / 1000.0;
    sim.bandwidth_bytes_per_s = absl::GetFlag(FLAGS_bandwidth_gbps) * 1e9 / 8;
  }
  HOGWILD_ASSIGN_OR_RETURN(SimResult r, data.workload != nullptr
                                            ? SimulateWorkload(sim, *data.workload)
                                            : Simulate(sim, data.images.train, data.images.test));
  line = FormatSimSummary(r);
  TrainResult result;
  result.mode = r.mode;
  result.num_workers = r.num_workers;
  result.wall_time_s = r.simulated_time_s;
  result.examples = r.examples;
  result.steps = r.steps;
  result.examples_per_s = r.examples_per_simulated_s;
  result.final_test_loss = r.final_test_loss;
  result.final_test_accuracy = r.final_test_accuracy;
  result.staleness_mean = r.staleness_mean;
  result.staleness_max = r.staleness_max;
  result.staleness_histogram = std::move(r.staleness_histogram);
  for (int64_t d : r.dropped) result.dropped += d;
  result.params = std::move(r.params);
  return result;
}

// One real run of a sparse or mf workload, by the sparse trainers (sparse/sparse_train.h,
// sparse/matrix_factorization.h: the modes they run, batch-1 fused steps), its result in the
// shape of a dense run's. They evaluate after each epoch: the log gets each epoch's train and
// eval rows (sparse/epoch_log.h), whatever --eval_every_epochs says. Their weight decay is
// applied once per update on its support (the simulated workloads' per example: the same with
// batch 1).
absl::StatusOr<TrainResult> TrainSparseRun(const TrainerOptions& options, const StudyData& data) {
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<ConvergenceLog> log,
                           ConvergenceLog::Open(options.log_path));
  const auto start = std::chrono::steady_clock::now();
  auto on_epoch = [&](const sparse::SparseEpochReport& r) {
    return sparse::WriteEpochRows(
        log.get(), r,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  const auto wd = static_cast<float>(absl::GetFlag(FLAGS_weight_decay));
  // The option of the run's mode; the others keep their defaults (the sparse trainers refuse a
  // value a mode does not read).
  const ModeOptions mode_options = ModeOptionsOf(options);
  TrainResult result;
  result.mode = options.mode;
  result.num_workers = options.num_workers;
  sparse::SparseEpochReport last;
  // The fields both trainers' options share (SparseTrainOptions, MfOptions), set once.
  auto with_run = [&](auto trainer_options) {
    trainer_options.mode = options.mode;
    trainer_options.num_workers = options.num_workers;
    trainer_options.batch_size = static_cast<int>(options.batch_size);
    trainer_options.mode_options = mode_options;
    trainer_options.epochs = static_cast<int>(options.epochs);
    trainer_options.lr = options.lr.base_lr;
    trainer_options.weight_decay = wd;
    trainer_options.seed = options.seed;
    trainer_options.on_epoch = on_epoch;
    return trainer_options;
  };
  if (data.ratings) {
    HOGWILD_ASSIGN_OR_RETURN(sparse::MfResult r,
                             sparse::TrainMatrixFactorization(
                                 with_run(sparse::MfOptions{.rank = absl::GetFlag(FLAGS_rank)}),
                                 data.ratings->train, &data.ratings->test));
    last = r.epochs.back();
    result.wall_time_s = r.train_time_s;
    result.params = std::move(r.factors);
  } else {
    const sparse::LinearModel model = absl::GetFlag(FLAGS_workload) == "sparse_svm"
                                          ? sparse::LinearModel::kHinge
                                          : sparse::LinearModel::kLogistic;
    HOGWILD_ASSIGN_OR_RETURN(
        sparse::SparseTrainResult r,
        sparse::TrainSparse(with_run(sparse::SparseTrainOptions{.model = model}),
                            data.sparse->train, data.sparse->test ? &*data.sparse->test : nullptr));
    last = r.epochs.back();
    result.wall_time_s = r.train_time_s;
    result.params = std::move(r.weights);
  }
  HOGWILD_RETURN_IF_ERROR(log->Close());
  result.examples = last.examples;
  result.steps = last.updates;
  result.examples_per_s = result.wall_time_s > 0 ? result.examples / result.wall_time_s : 0.0;
  result.final_test_loss = last.test_loss.value_or(0.0);
  result.final_test_accuracy = last.test_accuracy.value_or(0.0);
  return result;
}

// Trains (or simulates) one run of the grid whose log path is set, writes its record to
// `record_path` and prints its summary; `num_params` receives its parameter count.
absl::StatusOr<StudyRun> TrainGridRun(const GridRun& run, const StudyData& data,
                                      const std::string& record_path, double target,
                                      int64_t& num_params) {
  const TrainerOptions& options = run.options;
  std::string sim_line;
  absl::StatusOr<TrainResult> trained =
      absl::GetFlag(FLAGS_simulate) ? SimulateRun(options, data, sim_line)
      : data.workload != nullptr    ? TrainSparseRun(options, data)
                                    : Train(options, data.images.train, data.images.test);
  // A diverged run is a result of the grid (this learning rate is too high for this policy),
  // recorded as such; any other error ends the study.
  const bool diverged =
      !trained.ok() && absl::StartsWith(trained.status().message(), "training diverged");
  if (!trained.ok() && !diverged) return trained.status();
  TrainResult result;
  if (diverged) {
    result.mode = options.mode;
    result.num_workers = options.num_workers;
  } else {
    result = *std::move(trained);
    num_params = static_cast<int64_t>(result.params.size());
  }
  // A diverged run's log holds the evaluations before it diverged (or nothing).
  absl::StatusOr<std::vector<EvalPoint>> evals = ReadEvalPoints(options.log_path);
  if (!evals.ok() && !diverged) return evals.status();
  StudyRun record;
  record.key = run.key;
  record.config = run.config;
  record.lr = run.lr;
  record.momentum = run.momentum;
  record.diverged = diverged;
  record.final_test_loss = result.final_test_loss;
  record.staleness_histogram = HistogramText(result.staleness_histogram);
  record.summary =
      Summarize(result, options.seed, options.batch_size,
                evals.ok() ? *evals : std::vector<EvalPoint>{}, target, options.log_path);
  // The policy with its option (ssp(bound=4), backup(b=2)), so that summary.md and
  // staleness.csv tell the configurations apart.
  record.summary.mode = ModeLabel(options);
  // The log is complete before the record exists: a run with a record is finished.
  HOGWILD_RETURN_IF_ERROR(WriteFileAtomically(record_path, StudyRunRecord(record)));
  if (diverged) {
    absl::PrintF("  diverged: %s\n", trained.status().message());
  } else {
    absl::PrintF("  %s\n", absl::GetFlag(FLAGS_simulate) ? sim_line : FormatSummary(result));
  }
  return record;
}

// summary.csv, summary.md, staleness.csv and runs.csv of every run, once each run's
// time-to-target is filled in from its log.
absl::Status WriteRunTables(std::vector<StudyRun>& done, const std::string& out_dir,
                            double target) {
  std::vector<RunSummary> summaries;
  std::string staleness_csv = "mode,workers,seed,staleness,count\n";
  std::string runs_csv = "config,mode,workers,lr,momentum,seed,log\n";
  for (StudyRun& r : done) {
    absl::StatusOr<std::vector<EvalPoint>> evals = ReadEvalPoints(r.summary.log_path);
    if (!evals.ok() && !r.diverged) return evals.status();
    FillTarget(evals.ok() ? *evals : std::vector<EvalPoint>{}, target, r);
    summaries.push_back(r.summary);
    for (absl::string_view item : absl::StrSplit(r.staleness_histogram, ';', absl::SkipEmpty())) {
      const std::pair<std::string, std::string> sc = absl::StrSplit(item, ':');
      absl::StrAppendFormat(&staleness_csv, "%s,%d,%d,%s,%s\n", r.summary.mode, r.summary.workers,
                            r.summary.seed, sc.first, sc.second);
    }
    absl::StrAppendFormat(&runs_csv, "%s,%s,%d,%g,%g,%d,%s\n", r.config, r.summary.mode,
                          r.summary.workers, r.lr, r.momentum, r.summary.seed, r.summary.log_path);
  }
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/summary.csv", SummaryCsv(summaries)));
  HOGWILD_RETURN_IF_ERROR(WriteFile(
      out_dir + "/summary.md", SummaryMarkdown(summaries, target, absl::GetFlag(FLAGS_simulate))));
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/staleness.csv", staleness_csv));
  return WriteFile(out_dir + "/runs.csv", runs_csv);
}

// The report's first line for a sparse or mf study: what was trained, and what its columns mean
// there; empty for the dense workload.
std::string WorkloadNote() {
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const char* real = absl::GetFlag(FLAGS_simulate)
                         ? ""
                         : " Real runs are the sparse trainers' (sparse/): they measure no "
                           "staleness (shown as 0) and evaluate once per epoch.";
  if (workload == "dense") return "";
  if (workload == "mf") {
    return absl::StrFormat(
        "Workload: matrix factorization, rank %d, of %s (90/10 split); the test loss is the "
        "RMSE, and accuracy (and its target) does not apply (0).%s\n\n",
        absl::GetFlag(FLAGS_rank), absl::GetFlag(FLAGS_ratings), real);
  }
  return absl::StrFormat(
      "Workload: %s on the synthetic RCV1-like set (%d training and %d test examples, %d "
      "features, about %d non-zeros each).%s\n\n",
      workload, absl::GetFlag(FLAGS_synthetic_examples),
      absl::GetFlag(FLAGS_synthetic_test_examples), absl::GetFlag(FLAGS_synthetic_features),
      absl::GetFlag(FLAGS_synthetic_nnz), real);
}

// Writes every table (the runs', then study.csv and study.md over seeds); returns the report.
absl::StatusOr<std::string> WriteTables(std::vector<StudyRun>& done, const std::string& out_dir,
                                        double target) {
  HOGWILD_RETURN_IF_ERROR(WriteRunTables(done, out_dir, target));
  HOGWILD_ASSIGN_OR_RETURN(std::string study_csv, StudyCsv(done, target));
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/study.csv", study_csv));
  HOGWILD_ASSIGN_OR_RETURN(std::string report, StudyMarkdown(done, target));
  absl::StrAppend(&report, "\n", FinalAccuracyNote(absl::GetFlag(FLAGS_drop_last)), "\n");
  report = WorkloadNote() + report;
  if (absl::GetFlag(FLAGS_simulate)) {
    report = absl::StrFormat(
        "Simulated runs (sim/simulator.h): times are simulated seconds, %g ms per worker step, "
        "jitter %g, %s.\n\n%s",
        absl::GetFlag(FLAGS_step_time_ms), absl::GetFlag(FLAGS_jitter),
        absl::GetFlag(FLAGS_bandwidth_gbps) != 0
            ? absl::StrFormat("exchanges at %g Gbit/s with %g ms latency",
                              absl::GetFlag(FLAGS_bandwidth_gbps), absl::GetFlag(FLAGS_latency_ms))
            : absl::StrFormat("all-reduce %g ms", absl::GetFlag(FLAGS_allreduce_ms)),
        report);
  }
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/study.md", report));
  return report;
}

// Peak resident memory of this process (the runs trained here, plus the dataset) against
// the bound "2x the dataset plus the parameters" (not with --train_examples: the whole split
// was loaded).
void PrintPeakMemory(const TrainTestSplits& data, int64_t num_params) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_mb = usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
  const double dataset_mb = (data.train.bytes() + data.test.bytes()) / (1024.0 * 1024.0);
  const double bound_mb = 2.0 * dataset_mb + num_params * sizeof(float) / (1024.0 * 1024.0);
  absl::PrintF(
      "peak memory (max RSS) %.1f MiB; bound 2 x dataset (%.1f MiB) + parameters = %.1f MiB: "
      "%s\n",
      peak_mb, dataset_mb, bound_mb, peak_mb < bound_mb ? "within" : "OVER");
}

absl::Status DrawFigures(const std::string& out_dir, double target) {
  // plot_convergence.py smooths real runs' per-worker rows; simulated logs have one row per
  // window of all workers, so only plot_study.py's figures are drawn for them.
  if (!absl::GetFlag(FLAGS_simulate)) {
    HOGWILD_RETURN_IF_ERROR(Plot("plot_convergence.py", out_dir, target));
  }
  return Plot("plot_study.py", out_dir, target);
}

absl::Status Run() {
  // Every flag is checked before the dataset is loaded.
  HOGWILD_RETURN_IF_ERROR(CheckWorkloadFlags());
  HOGWILD_RETURN_IF_ERROR(CheckSimulationFlags());
  HOGWILD_ASSIGN_OR_RETURN(std::vector<GridRun> grid, BuildGrid());
  const double target = absl::GetFlag(FLAGS_target_accuracy);
  const std::string out_dir = absl::GetFlag(FLAGS_out_dir);
  if (out_dir.empty()) {
    return absl::InvalidArgumentError(
        "--out_dir is empty (an unset shell variable?); give the directory for the results");
  }
  // Created once the data has loaded (or when every run is done), so that a missing dataset
  // leaves nothing behind.
  const std::string runs_dir = out_dir + "/runs";

  // The dataset is loaded only when a run is left to train.
  std::unique_ptr<StudyData> data;
  std::vector<StudyRun> done;
  int skipped = 0;
  int64_t num_params = 0;
  const int n = static_cast<int>(grid.size());
  for (int i = 0; i < n; ++i) {
    GridRun& run = grid[i];
    const std::string record_path = absl::StrFormat("%s/%s.run", runs_dir, run.key);
    const std::string label = absl::StrFormat("%s seed=%d", run.config, run.options.seed);
    if (std::filesystem::exists(record_path)) {
      HOGWILD_ASSIGN_OR_RETURN(StudyRun record, ReadDoneRun(record_path, runs_dir, run));
      absl::PrintF("run %d/%d: %s: done before, skipped\n", i + 1, n, label);
      done.push_back(std::move(record));
      ++skipped;
      continue;
    }
    if (!data) {
      data = std::make_unique<StudyData>();
      HOGWILD_RETURN_IF_ERROR(LoadStudyData(*data));
      HOGWILD_RETURN_IF_ERROR(MakeOutDir(out_dir, runs_dir));
    }
    run.options.log_path = absl::StrFormat("%s/%s.csv", runs_dir, run.key);
    run.options.overwrite_log = true;  // a log without a record is a run that did not finish
    absl::PrintF("run %d/%d: %s (batch %d, %d epochs) ...\n", i + 1, n, label,
                 run.options.batch_size, run.options.epochs);
    std::fflush(stdout);
    HOGWILD_ASSIGN_OR_RETURN(StudyRun record,
                             TrainGridRun(run, *data, record_path, target, num_params));
    done.push_back(std::move(record));
  }
  if (skipped > 0) {
    absl::PrintF("skipped %d of %d runs: their results were already in %s\n", skipped, n, runs_dir);
  }
  HOGWILD_RETURN_IF_ERROR(MakeOutDir(out_dir, runs_dir));
  HOGWILD_ASSIGN_OR_RETURN(const std::string report, WriteTables(done, out_dir, target));
  absl::PrintF("\n%s\n", report);
  if (data && data->workload == nullptr && absl::GetFlag(FLAGS_train_examples) == 0) {
    PrintPeakMemory(data->images, num_params);
  }
  absl::PrintF("records, logs and tables in %s\n", out_dir);
  std::fflush(stdout);
  if (absl::GetFlag(FLAGS_plot)) HOGWILD_RETURN_IF_ERROR(DrawFigures(out_dir, target));
  return absl::OkStatus();
}

}  // namespace
}  // namespace hogwild

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Study runner: trains a grid of update policies x worker counts x learning rates x "
      "momentums x seeds, resumably, and writes the report over seeds and the figures.\n"
      "  bazel run //benchmarks:study -- --modes=async,sync,ssp,backup --workers=2 "
      "--seeds=1,2,3 --out_dir=/tmp/study");
  // --help lists this file's flags and the synthetic set's (sparse/synthetic_flags.h), not only
  // those of files named like the program.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view path) {
    return absl::StrContains(path, "benchmarks/sync_vs_async.cc") ||
           absl::StrContains(path, "sparse/synthetic_flags.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  // Relative paths mean the directory `bazel run` was typed in, not the runfiles tree.
  if (const absl::Status cwd = hogwild::EnterBuildWorkingDirectory(); !cwd.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(cwd.message()).c_str());
    return 1;
  }
  if (positional.size() > 1) {
    std::fprintf(stderr, "error: unexpected argument '%s' (flags are --name=value)\n",
                 positional[1]);
    return 1;
  }
  hogwild::program_path = argv[0];
  // A stop signal during a record's or table's write removes its temporary file.
  hogwild::InstallTempFileCleanupOnSignals();
  const absl::Status status = hogwild::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", hogwild::WithStudyFlagNames(status.message()).c_str());
    return hogwild::CheckedExitCode(1);
  }
  return hogwild::CheckedExitCode(0);
}
