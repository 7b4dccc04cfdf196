// The `simulate` command: a simulated run of W logical workers on one thread (sim/simulator.h),
// e.g. 256 async workers on Fashion-MNIST:
//   bazel run //sim:simulate -- --workers=256 --batch_size=16 --epochs=1
//     --staleness_csv=/tmp/staleness.csv   (one line)
// Every mode of the trainer (--mode=async|sync|ssp|backup|local_sgd, with --staleness_bound,
// --backup_workers, --average_every). Prints the summary with simulated and real seconds; writes
// the convergence log (--log) and the exact staleness histogram (--staleness_csv:
// "staleness,updates" rows). Bad input: one line naming the flag and the allowed range, exit
// status 1.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "core/atomic_file.h"
#include "core/mode.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "kernels/optimizer_name.h"
#include "sim/calibration.h"
#include "sim/simulator.h"
#include "trainer/cli/argv_flags.h"
#include "trainer/cli/async_flags.h"
#include "trainer/cli/flags_parse.h"
#include "trainer/cli/mode_flags.h"
#include "trainer/cli/option_flags.h"
#include "trainer/data/mnist.h"
#include "trainer/memory_estimate.h"
#include "trainer/metrics/convergence_log.h"

ABSL_FLAG(std::string, dataset, "fashion_mnist", "fashion_mnist or mnist");
ABSL_FLAG(std::string, data_dir, "",
          "directory with the IDX files; default: where tools/setup.sh installs the dataset");
ABSL_FLAG(std::string, mode, "async", hogwild::kModeFlagHelp);
ABSL_FLAG(int32_t, workers, 64, "simulated workers W, in [1, 4096]");
ABSL_FLAG(std::string, model, "mlp", "logreg, mlp or cnn");
ABSL_FLAG(std::string, hidden, "256,256", "mlp hidden layer sizes, comma-separated (mlp only)");
ABSL_FLAG(int64_t, batch_size, 32,
          "examples per step: per worker in async, ssp, locked, round_robin and async_local_sgd, "
          "the global batch in sync, backup and local_sgd");
ABSL_FLAG(int64_t, epochs, 1, "passes over the training set");
ABSL_FLAG(bool, drop_last, false,
          "leave out each epoch's short last batch (per worker in async and ssp), as train's");
ABSL_FLAG(double, lr, 0.005,
          "base learning rate, > 0; lower than train's 0.05, with which the default 64 async "
          "workers' updates, 63 steps stale, diverge");
ABSL_FLAG(double, momentum, 0.0, "SGD momentum in [0, 1) (PyTorch convention)");
ABSL_FLAG(double, weight_decay, 0.0, "L2 weight decay, >= 0");
ABSL_FLAG(std::string, seed, "1",
          "seed of initialization, data order and compute times, in [0, 2^64 - 1]");
ABSL_FLAG(std::string, eval_every, "1epoch",
          "test-set evaluation period: N (global steps), Nepoch(s), or 0 for only at the end");
ABSL_FLAG(std::string, log, "",
          "convergence log path (CSV, or JSON Lines for .jsonl); wall_time_s is simulated");
ABSL_FLAG(bool, overwrite_log, false, "replace the file at --log although it holds rows");
ABSL_FLAG(int64_t, log_every, 100, "convergence-log train row every N global steps");
ABSL_FLAG(int64_t, train_examples, 0, "use only the first N training examples (0: all)");
ABSL_FLAG(double, step_time_ms, 10.0, "mean compute time of one worker step, in (0, 1e9] ms");
ABSL_FLAG(double, jitter, 0.0,
          "log-normal sigma of the step time, in [0, 4] (0: every step takes --step_time_ms)");
ABSL_FLAG(std::string, stragglers, "",
          "slowed workers as worker:factor pairs, e.g. 3:4,7:2.5 (factor in [1, 1000])");
ABSL_FLAG(std::string, calibrate_from, "",
          "instead of --step_time_ms, --jitter and --stragglers: fit them to the step times of a "
          "real run's CSV convergence log written with --log_every=1 (sim/calibration.h); with "
          "another --workers than the log's, its mean step time and jitter, no stragglers");
ABSL_FLAG(double, allreduce_ms, 0.0,
          "sync, backup, local_sgd, async_local_sgd: all-reduce time added to each step "
          "(local_sgd: each averaging; async_local_sgd: each push and pull, which its worker "
          "waits for), in [0, 1e9] ms");
ABSL_FLAG(double, bandwidth_gbps, 0.0,
          "instead of --allreduce_ms, each exchange's time from its bytes: --latency_ms plus the "
          "bytes on a worker's link (ring all-reduce 2(W-1)/W x 4P, a push and pull 2 x 4P) over "
          "this bandwidth in gigabits per second, in (0, 8e6]; 0: off");
ABSL_FLAG(double, latency_ms, 0.0,
          "with --bandwidth_gbps: the fixed part of each exchange, in [0, 1e9] ms");
ABSL_FLAG(int64_t, max_state_bytes, int64_t{8} << 30,
          "refuse a simulation whose per-worker state (async, ssp, round_robin: W x P floats "
          "x 2, + 1 with momentum; locked, local_sgd: W x P with momentum; sim/simulator.h) "
          "exceeds this; when not given, also the memory available now (MemAvailable)");
ABSL_FLAG(std::string, staleness_csv, "",
          "write the staleness histogram here (CSV: staleness,updates); empty: none");
ABSL_FLAG(bool, overwrite_staleness_csv, false,
          "replace the file at --staleness_csv although it holds a histogram");

namespace {

// The library's field names in `status`, as the flags that set them.
absl::Status WithSimFlagNames(const absl::Status& status) {
  const absl::Status trainer = hogwild::WithFlagNames(status);
  if (trainer.ok()) return trainer;
  return absl::Status(
      trainer.code(),
      absl::StrReplaceAll(trainer.message(),
                          {{"SimOptions::latency_s", "--latency_ms"},
                           {"SimOptions::bandwidth_bytes_per_s", "--bandwidth_gbps"},
                           {"SimOptions::allreduce_time_s", "--allreduce_ms"},
                           {"ComputeTimeOptions::jitter", "--jitter"},
                           {"ComputeTimeOptions::stragglers", "--stragglers"},
                           {"SimOptions::max_state_bytes", "--max_state_bytes"}}));
}

std::string FlagText(const char* name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag == nullptr ? "" : flag->CurrentValue();
}

// A milliseconds flag, in (0, 1e9] or (zero_ok) [0, 1e9], as seconds.
absl::StatusOr<double> Milliseconds(const char* flag, double ms, bool zero_ok) {
  if (!((zero_ok ? ms >= 0 : ms > 0) && ms <= 1e9)) {
    return absl::InvalidArgumentError(absl::StrFormat("--%s=%s is out of range %s0, 1e9] ms", flag,
                                                      FlagText(flag), zero_ok ? "[" : "("));
  }
  return ms / 1000.0;
}

absl::Status WriteHistogram(const std::string& path, const std::vector<uint64_t>& histogram) {
  std::string csv = "staleness,updates\n";
  for (size_t s = 0; s < histogram.size(); ++s) absl::StrAppend(&csv, s, ",", histogram[s], "\n");
  const absl::Status written = hogwild::WriteFileAtomically(path, csv);
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat("--staleness_csv=", written.message()));
  }
  return absl::OkStatus();
}

// --mode, --workers and the mode's own option into `t`. A mode flag typed where it is not read
// is refused (RefuseUnreadModeFlags).
absl::Status ParseModeFlags(hogwild::TrainerOptions& t) {
  using namespace hogwild;
  HOGWILD_ASSIGN_OR_RETURN(const ModeChoice choice, ParseModeFlag(absl::GetFlag(FLAGS_mode)));
  t.mode = choice.mode;
  t.num_workers = absl::GetFlag(FLAGS_workers);
  HOGWILD_RETURN_IF_ERROR(RefuseUnreadModeFlags(t.mode, t.num_workers));
  SetModeOptions(ModeOptionsFromFlags(choice.defaults), t);
  return absl::OkStatus();
}

// The model, the recipe, the evaluations and the log into `t`.
absl::Status ParseTrainingFlags(hogwild::TrainerOptions& t) {
  using namespace hogwild;
  t.model.name = absl::GetFlag(FLAGS_model);
  t.model.hidden.clear();
  if (t.model.name == "mlp") {
    HOGWILD_ASSIGN_OR_RETURN(t.model.hidden, ParseHiddenSizes(absl::GetFlag(FLAGS_hidden)));
  } else if (FlagText("hidden") != "256,256") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hidden has no effect with --model=%s (only mlp has hidden layers)", t.model.name));
  }
  t.batch_size = absl::GetFlag(FLAGS_batch_size);
  t.epochs = absl::GetFlag(FLAGS_epochs);
  t.drop_last = absl::GetFlag(FLAGS_drop_last);
  HOGWILD_ASSIGN_OR_RETURN(t.seed, ParseSeed(absl::GetFlag(FLAGS_seed)));
  HOGWILD_ASSIGN_OR_RETURN(t.lr.base_lr, ToFloat32("lr", FlagText("lr")));
  HOGWILD_ASSIGN_OR_RETURN(t.sgd.momentum, ToFloat32("momentum", FlagText("momentum")));
  HOGWILD_ASSIGN_OR_RETURN(t.sgd.weight_decay, ToFloat32("weight_decay", FlagText("weight_decay")));
  ApplyAsyncFlags(t.sgd);
  HOGWILD_ASSIGN_OR_RETURN(EvalEvery eval_every, ParseEvalEvery(absl::GetFlag(FLAGS_eval_every)));
  t.eval_every_steps = eval_every.steps;
  t.eval_every_epochs = eval_every.epochs;
  t.log_path = absl::GetFlag(FLAGS_log);
  t.overwrite_log = absl::GetFlag(FLAGS_overwrite_log);
  t.log_every_steps = absl::GetFlag(FLAGS_log_every);
  if (t.log_path.empty() && absl::flags_internal::WasPresentOnCommandLine("log_every")) {
    return absl::InvalidArgumentError("--log_every has no effect without --log");
  }
  return absl::OkStatus();
}

// The histogram is written after the simulation: a path that cannot be a file fails now, and
// so does one that would replace a previous run's histogram unasked.
absl::Status CheckStalenessCsv(const std::string& log_path) {
  using namespace hogwild;
  if (const std::string csv = absl::GetFlag(FLAGS_staleness_csv); !csv.empty()) {
    HOGWILD_RETURN_IF_ERROR(CheckReplacedFilePath("--staleness_csv", csv));
    const RunFile files[] = {{.option = "--log", .value = log_path, .output = true},
                             {.option = "--staleness_csv", .value = csv, .output = true}};
    HOGWILD_RETURN_IF_ERROR(CheckDistinctFiles(files));
    std::error_code ec;
    const auto size = std::filesystem::file_size(csv, ec);
    if (!ec && size > 0 && !absl::GetFlag(FLAGS_overwrite_staleness_csv)) {
      return absl::FailedPreconditionError(
          absl::StrFormat("--staleness_csv=%s exists (%d bytes, a previous run's histogram?); pass "
                          "--overwrite_staleness_csv to replace it, or choose another path",
                          csv, static_cast<int64_t>(size)));
    }
  } else if (absl::flags_internal::WasPresentOnCommandLine("overwrite_staleness_csv")) {
    return absl::InvalidArgumentError(
        "--overwrite_staleness_csv has no effect without --staleness_csv");
  }
  return absl::OkStatus();
}

// --calibrate_from's time model for `num_workers` simulated workers (sim/calibration.h), printed
// as the flags it stands for. Errors: the file's, the reader's and the fit's, naming the log; a
// time flag given beside it.
absl::StatusOr<hogwild::ComputeTimeOptions> Calibrate(const std::string& path, int num_workers) {
  using namespace hogwild;
  for (const char* flag : {"step_time_ms", "jitter", "stragglers"}) {
    if (absl::flags_internal::WasPresentOnCommandLine(flag)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s and --calibrate_from both set the step times: give one of them", flag));
    }
  }
  if (std::filesystem::is_directory(path)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--calibrate_from=%s is a directory; give a real run's CSV convergence log", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--calibrate_from=%s: cannot open it: %s", path, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  HOGWILD_ASSIGN_OR_RETURN(const std::vector<std::vector<double>> times,
                           StepTimesFromLog(text.str(), path));
  absl::StatusOr<ComputeTimeOptions> fit = FitComputeTimes(times);
  if (!fit.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--calibrate_from=", path, ": ", fit.status().message()));
  }
  const int logged = static_cast<int>(times.size());
  if (logged != num_workers) {
    // Other workers than the log's: no worker's own factor carries over; each takes the mean.
    double sum = logged;
    for (const auto& [w, factor] : fit->stragglers) sum += factor - 1.0;
    fit->step_time_s *= sum / logged;
    fit->stragglers.clear();
  }
  std::string stragglers;
  for (const auto& [w, factor] : fit->stragglers) {
    absl::StrAppendFormat(&stragglers, "%s%d:%.3f", stragglers.empty() ? "" : ",", w, factor);
  }
  int64_t steps = 0;
  for (const std::vector<double>& worker : times) steps += static_cast<int64_t>(worker.size());
  absl::PrintF("simulate: calibrated from %s (%d worker%s, %d step times): --step_time_ms=%.4g "
               "--jitter=%.3f%s%s%s\n",
               path, logged, logged == 1 ? "" : "s", steps, fit->step_time_s * 1000, fit->jitter,
               stragglers.empty() ? "" : " --stragglers=", stragglers,
               logged == num_workers
                   ? ""
                   : absl::StrFormat(" (the logged workers' mean step time, without their "
                                     "stragglers, for each of %d simulated workers)",
                                     num_workers));
  return *fit;
}

// The simulated times (--step_time_ms, --jitter, --stragglers, --allreduce_ms, --bandwidth_gbps,
// --latency_ms) into `options`.
absl::Status ParseTimeFlags(hogwild::SimOptions& options) {
  using namespace hogwild;
  if (const std::string log = absl::GetFlag(FLAGS_calibrate_from); !log.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(options.compute, Calibrate(log, options.trainer.num_workers));
  } else {
    HOGWILD_ASSIGN_OR_RETURN(
        options.compute.step_time_s,
        Milliseconds("step_time_ms", absl::GetFlag(FLAGS_step_time_ms), false));
    options.compute.jitter = absl::GetFlag(FLAGS_jitter);
    if (const std::string slow = absl::GetFlag(FLAGS_stragglers); !slow.empty()) {
      HOGWILD_ASSIGN_OR_RETURN(options.compute.stragglers, ParseSlowdown("stragglers", slow));
    }
  }
  HOGWILD_ASSIGN_OR_RETURN(options.allreduce_time_s,
                           Milliseconds("allreduce_ms", absl::GetFlag(FLAGS_allreduce_ms), true));
  HOGWILD_ASSIGN_OR_RETURN(options.latency_s,
                           Milliseconds("latency_ms", absl::GetFlag(FLAGS_latency_ms), true));
  if (const double gbps = absl::GetFlag(FLAGS_bandwidth_gbps); !(gbps >= 0 && gbps <= 8e6)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--bandwidth_gbps=%s is out of range [0, 8e6] Gbit/s", FlagText("bandwidth_gbps")));
  }
  options.bandwidth_bytes_per_s = absl::GetFlag(FLAGS_bandwidth_gbps) * 1e9 / 8;
  if (options.allreduce_time_s != 0 && !Exchanges(options.trainer.mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--allreduce_ms=%s applies to --mode=sync, backup, local_sgd or async_local_sgd only (%s "
        "has no all-reduce)",
        FlagText("allreduce_ms"), ModeName(options.trainer.mode)));
  }
  return absl::OkStatus();
}

// Sets options.max_state_bytes; returns the memory left when that, rather than the flag, is the
// cap, so a refusal names the real limit.
std::optional<int64_t> CapStateBytes(hogwild::SimOptions& options) {
  options.max_state_bytes = absl::GetFlag(FLAGS_max_state_bytes);
  std::optional<int64_t> memory_cap;
  if (!absl::flags_internal::WasPresentOnCommandLine("max_state_bytes")) {
    // Past the memory the machine has (or ulimit -v allows), the kernel would kill the run part
    // way, or an allocation would fail.
    if (const std::optional<int64_t> available = hogwild::AvailableMemoryBytes();
        available && *available < options.max_state_bytes) {
      memory_cap = std::max<int64_t>(0, *available);
      options.max_state_bytes = std::max<int64_t>(1, *memory_cap);
    }
  }
  return memory_cap;
}

// The checks that need no data: a bad flag, a model or state that cannot fit, or a log that
// would be replaced fails before the (slower) dataset load.
absl::Status CheckBeforeLoad(const hogwild::SimOptions& options,
                             std::optional<int64_t> memory_cap) {
  using namespace hogwild;
  const TrainerOptions& t = options.trainer;
  HOGWILD_RETURN_IF_ERROR(ValidateSimOptions(options));
  // The model (with MNIST's shape), the state it needs, and the log too: refused before the
  // (slower) dataset load.
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Model> mnist_model, Model::Create(t.model));
  if (const absl::Status fits = CheckSimStateFits(options, mnist_model->num_params()); !fits.ok()) {
    if (!memory_cap) return fits;
    const std::string state(fits.message().substr(0, fits.message().find(" exceeds ")));
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s exceeds the memory this process may still use (%d bytes: the machine's available "
        "memory or ulimit -v); use fewer workers or a smaller model, or allow more memory",
        state, *memory_cap));
  }
  if (!t.log_path.empty() && !t.overwrite_log) {
    HOGWILD_RETURN_IF_ERROR(ConvergenceLog::CheckWouldNotReplace(t.log_path, "--overwrite_log"));
  }
  return absl::OkStatus();
}

absl::StatusOr<hogwild::SimResult> Run() {
  using namespace hogwild;
  HOGWILD_ASSIGN_OR_RETURN(DatasetInfo info, LookupDataset(absl::GetFlag(FLAGS_dataset)));
  std::string dir = absl::GetFlag(FLAGS_data_dir);
  if (dir.empty()) dir = info.default_dir;

  SimOptions options;
  TrainerOptions& t = options.trainer;
  HOGWILD_RETURN_IF_ERROR(ParseModeFlags(t));
  HOGWILD_RETURN_IF_ERROR(ParseTrainingFlags(t));
  HOGWILD_RETURN_IF_ERROR(CheckStalenessCsv(t.log_path));
  HOGWILD_RETURN_IF_ERROR(ParseTimeFlags(options));
  const std::optional<int64_t> memory_cap = CapStateBytes(options);
  const int64_t train_examples = absl::GetFlag(FLAGS_train_examples);
  if (train_examples < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--train_examples=%d is out of range; it must be >= 0 (0: all)", train_examples));
  }
  // A bad flag fails before the (slower) dataset load.
  HOGWILD_RETURN_IF_ERROR(CheckBeforeLoad(options, memory_cap));

  HOGWILD_ASSIGN_OR_RETURN(TrainTestSplits splits,
                           LoadTrainTest(info, dir, train_examples, "--train_examples"));
  const Dataset& train = splits.train;
  const Dataset& test = splits.test;
  std::string exchange;
  if (options.bandwidth_bytes_per_s != 0) {
    exchange = absl::StrFormat(", exchanges at %g Gbit/s with %g ms latency",
                               options.bandwidth_bytes_per_s * 8 / 1e9, options.latency_s * 1000);
  } else if (options.allreduce_time_s != 0) {
    exchange = absl::StrFormat(", %g ms per exchange", options.allreduce_time_s * 1000);
  }
  absl::PrintF(
      "simulate: %s mode, %d simulated workers, optimizer %s%s%s, %s (%d train / %d test "
      "examples)\n",
      ModeName(t.mode), t.num_workers, OptimizerName(t.sgd.optimizer), UpdateRulesText(t), exchange,
      info.name, train.size(), test.size());
  std::fflush(stdout);
  HOGWILD_ASSIGN_OR_RETURN(SimResult result, Simulate(options, train, test));
  const std::string csv = absl::GetFlag(FLAGS_staleness_csv);
  if (!csv.empty()) HOGWILD_RETURN_IF_ERROR(WriteHistogram(csv, result.staleness_histogram));
  return result;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Simulates data-parallel SGD with W logical workers on one thread (simulated time).\n"
      "  bazel run //sim:simulate -- --workers=256 --batch_size=16");
  if (const std::optional<int> exit_code = hogwild::ParseCommandLineFlags(
          argc, argv, "simulate",
          {"sim/simulate_main.cc", "trainer/cli/mode_flags.cc", "trainer/cli/async_flags.cc"})) {
    return *exit_code;
  }
  // A stop signal during the histogram's write removes its temporary file.
  hogwild::InstallTempFileCleanupOnSignals();
  // Relative paths mean the directory `bazel run` was typed in, not the runfiles tree.
  if (const absl::Status cwd = hogwild::EnterBuildWorkingDirectory(); !cwd.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(cwd.message()).c_str());
    return 1;
  }
  const absl::StatusOr<hogwild::SimResult> result = Run();
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(hogwild::WithPresetNote(WithSimFlagNames(result.status()),
                                                     absl::GetFlag(FLAGS_mode))
                                 .message())
                     .c_str());
    return hogwild::CheckedExitCode(1);
  }
  std::printf("%s\n", hogwild::FormatSimSummary(*result).c_str());
  return hogwild::CheckedExitCode(0);
}

}  // namespace

int main(int argc, char** argv) { return hogwild::EndCommand(Main(argc, argv)); }
