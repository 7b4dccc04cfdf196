// The sync-vs-async convergence study: `bazel run //benchmarks:sync_vs_async`.
//
// Trains the same model on the same data, with the same seed and learning-rate schedule, in
// both modes (Hogwild! async and tower-averaging sync) for each worker count, in this one
// process (the library exposes both modes). Writes into --out_dir:
//   log_<mode>_w<W>_s<seed>.csv   the convergence log of each run (trainer/convergence_log.h)
//   staleness.csv                 the staleness histogram of each run (mode,workers,seed,s,count)
//   summary.csv, summary.md       one line per run (benchmarks/run_summary.h)
//   *.png                         the figures, drawn by benchmarks/plot_convergence.py
// and prints the Markdown table, then the peak memory of the process against the bound
// "2x the dataset's in-memory size plus the parameters".
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "benchmarks/run_summary.h"
#include "core/status_macros.h"
#include "trainer/data/mnist.h"
#include "trainer/trainer.h"

ABSL_FLAG(std::string, dataset, "fashion_mnist", "fashion_mnist or mnist");
ABSL_FLAG(std::string, data_dir, "", "directory with the IDX files (default: installed path)");
ABSL_FLAG(std::string, modes, "async,sync", "modes to run, comma-separated");
ABSL_FLAG(std::string, workers, "1,2,0",
          "worker counts, comma-separated; 0 means the number of hardware threads");
ABSL_FLAG(std::string, runs, "",
          "explicit runs mode:workers,... (e.g. async:1,async:2,sync:2); overrides "
          "--modes x --workers");
ABSL_FLAG(std::string, seeds, "1", "seeds, comma-separated (one run per seed)");
ABSL_FLAG(int64_t, epochs, 3, "epochs per run");
ABSL_FLAG(int64_t, batch_size, 64, "async: examples per worker step");
ABSL_FLAG(int64_t, sync_batch_size, 64, "sync: the global batch, split across the workers");
ABSL_FLAG(double, lr, 0.05, "constant learning rate");
ABSL_FLAG(std::string, hidden, "256,256", "mlp hidden sizes");
ABSL_FLAG(double, eval_every_epochs, 0.25,
          "test-set evaluation period in epochs (0: only at the end, not in the wall time)");
ABSL_FLAG(double, target_accuracy, 0.85, "test accuracy for the time-to-target column");
ABSL_FLAG(int64_t, log_every, 20, "convergence-log train row per worker every N steps");
ABSL_FLAG(std::string, out_dir, "/tmp/hogwild_bench", "where logs, tables and figures go");
ABSL_FLAG(bool, plot, true, "draw the figures with benchmarks/plot_convergence.py");
ABSL_FLAG(std::string, python, "/usr/bin/python3", "interpreter with matplotlib");

namespace hogwild {
namespace {

// argv[0], to find the plot script in the runfiles when RUNFILES_DIR is not set.
std::string program_path;

struct RunSpec {
  Mode mode;
  int workers;
};

absl::StatusOr<std::vector<int64_t>> ParseInts(const std::string& flag, const std::string& text) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s=%s: '%s' is not a non-negative integer", flag, text, std::string(part)));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrFormat("--%s is empty", flag));
  return out;
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
      HOGWILD_ASSIGN_OR_RETURN(Mode mode, ParseMode(parts[0]));
      runs.push_back({mode, workers == 0 ? HardwareThreads() : workers});
    }
    return runs;
  }
  HOGWILD_ASSIGN_OR_RETURN(std::vector<int64_t> counts,
                           ParseInts("workers", absl::GetFlag(FLAGS_workers)));
  std::vector<int> workers;
  for (int64_t c : counts) {
    const int w = c == 0 ? HardwareThreads() : static_cast<int>(c);
    if (std::find(workers.begin(), workers.end(), w) == workers.end()) workers.push_back(w);
  }
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_modes), ',', absl::SkipEmpty())) {
    HOGWILD_ASSIGN_OR_RETURN(Mode mode, ParseMode(name));
    for (int w : workers) runs.push_back({mode, w});
  }
  return runs;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  // The text may still sit in the stream's buffer: only close() writes it and reports a full
  // disk (the destructor would drop that error).
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrFormat("cannot write %s (%s)", path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status Run() {
  HOGWILD_ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ParseRuns());
  HOGWILD_ASSIGN_OR_RETURN(std::vector<int64_t> seeds,
                           ParseInts("seeds", absl::GetFlag(FLAGS_seeds)));
  const std::string out_dir = absl::GetFlag(FLAGS_out_dir);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--out_dir=%s: cannot create it (%s)", out_dir, ec.message()));
  }

  HOGWILD_ASSIGN_OR_RETURN(DatasetInfo info, LookupDataset(absl::GetFlag(FLAGS_dataset)));
  std::string dir = absl::GetFlag(FLAGS_data_dir);
  if (dir.empty()) dir = info.default_dir;
  HOGWILD_ASSIGN_OR_RETURN(Dataset train, LoadMnistSplit(info, dir, "train"));
  HOGWILD_ASSIGN_OR_RETURN(Dataset test, LoadMnistSplit(info, dir, "t10k"));
  Normalize(train, test);

  TrainerOptions base;
  base.epochs = absl::GetFlag(FLAGS_epochs);
  base.lr.base_lr = static_cast<float>(absl::GetFlag(FLAGS_lr));
  base.model.name = "mlp";
  base.model.hidden.clear();
  HOGWILD_ASSIGN_OR_RETURN(std::vector<int64_t> hidden,
                           ParseInts("hidden", absl::GetFlag(FLAGS_hidden)));
  base.model.hidden = hidden;
  base.eval_every_steps = 0;
  base.eval_every_epochs = absl::GetFlag(FLAGS_eval_every_epochs);
  base.log_every_steps = absl::GetFlag(FLAGS_log_every);
  const double target = absl::GetFlag(FLAGS_target_accuracy);

  std::vector<RunSummary> summaries;
  std::string staleness_csv = "mode,workers,seed,staleness,count\n";
  int64_t num_params = 0;
  for (int64_t seed : seeds) {
    for (const RunSpec& spec : runs) {
      TrainerOptions options = base;
      options.mode = spec.mode;
      options.num_workers = spec.workers;
      options.seed = static_cast<uint64_t>(seed);
      options.batch_size = spec.mode == Mode::kSync ? absl::GetFlag(FLAGS_sync_batch_size)
                                                    : absl::GetFlag(FLAGS_batch_size);
      options.log_path = absl::StrFormat("%s/log_%s_w%d_s%d.csv", out_dir, ModeName(spec.mode),
                                         spec.workers, seed);
      options.overwrite_log = true;  // the study regenerates every log in its output directory
      absl::PrintF("running %s, %d workers, seed %d, batch %d, %d epochs ...\n",
                   ModeName(spec.mode), spec.workers, seed, options.batch_size, options.epochs);
      std::fflush(stdout);
      HOGWILD_ASSIGN_OR_RETURN(TrainResult result, Train(options, train, test));
      num_params = static_cast<int64_t>(result.params.size());
      HOGWILD_ASSIGN_OR_RETURN(std::vector<EvalPoint> evals, ReadEvalPoints(options.log_path));
      summaries.push_back(
          Summarize(result, seed, options.batch_size, evals, target, options.log_path));
      absl::PrintF("  %s\n", FormatSummary(result));
      for (size_t s = 0; s < result.staleness_histogram.size(); ++s) {
        if (result.staleness_histogram[s] == 0) continue;
        absl::StrAppendFormat(&staleness_csv, "%s,%d,%d,%d,%d\n", result.mode, spec.workers, seed,
                              s, result.staleness_histogram[s]);
      }
    }
  }
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/summary.csv", SummaryCsv(summaries)));
  const std::string table = SummaryMarkdown(summaries, target);
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/summary.md", table));
  HOGWILD_RETURN_IF_ERROR(WriteFile(out_dir + "/staleness.csv", staleness_csv));
  absl::PrintF("\n%s\n", table);

  // Peak resident memory of this process (every run above, plus the dataset) against the
  // target bound of issue 4.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_mb = usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
  const double dataset_mb = (train.bytes() + test.bytes()) / (1024.0 * 1024.0);
  const double bound_mb = 2.0 * dataset_mb + num_params * sizeof(float) / (1024.0 * 1024.0);
  absl::PrintF(
      "peak memory (max RSS) %.1f MiB; bound 2 x dataset (%.1f MiB) + parameters = %.1f MiB: %s\n",
      peak_mb, dataset_mb, bound_mb, peak_mb < bound_mb ? "within" : "OVER");
  absl::PrintF("logs and tables in %s\n", out_dir);

  std::fflush(stdout);
  if (absl::GetFlag(FLAGS_plot)) {
    // The plot script sits next to this binary in its runfiles.
    const char* runfiles = std::getenv("RUNFILES_DIR");
    std::string script = std::string(runfiles != nullptr ? runfiles : "") +
                         "/hogwild/benchmarks/plot_convergence.py";
    if (runfiles == nullptr || !std::filesystem::exists(script)) {
      script = program_path + ".runfiles/hogwild/benchmarks/plot_convergence.py";
    }
    const std::string command =
        absl::StrFormat("'%s' '%s' --out_dir '%s' --target %g", absl::GetFlag(FLAGS_python), script,
                        out_dir, target);
    if (std::system(command.c_str()) != 0) {
      return absl::InternalError(absl::StrFormat(
          "plotting failed: %s (is python3-matplotlib installed? tools/setup.sh --bench)",
          command));
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace hogwild

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Sync-vs-async convergence study: trains in both modes for each worker count, writes the "
      "logs, the summary table and the figures.\n  bazel run //benchmarks:sync_vs_async -- "
      "--epochs=3 --out_dir=/tmp/hogwild_bench");
  absl::ParseCommandLine(argc, argv);
  hogwild::program_path = argv[0];
  const absl::Status status = hogwild::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
