// The `predict` command (TensorFlow Estimator's PREDICT mode): runs the model of a training
// checkpoint on a dataset split and writes one CSV row per example (index, predicted class,
// class probabilities), then prints the accuracy. See prediction_run.h for what it checks.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/atomic_file.h"
#include "core/output_path.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cli/argv_flags.h"
#include "trainer/predict/prediction_csv.h"
#include "trainer/predict/prediction_run.h"

ABSL_FLAG(std::string, checkpoint_dir, "", "the --checkpoint_dir of a training run (required)");
ABSL_FLAG(std::string, data_dir, "",
          "directory with the dataset's files (the training split too: it gives the "
          "standardization); default: where tools/setup.sh installs the checkpoint's dataset");
ABSL_FLAG(std::string, dataset, "",
          "fashion_mnist, mnist or cifar10; default: the dataset the checkpoint was trained on");
ABSL_FLAG(bool, allow_other_dataset, false,
          "predict on a dataset other than the checkpoint's training set (refused otherwise: "
          "the accuracy would not be the model's)");
ABSL_FLAG(std::string, weights, "raw",
          "raw (the trained weights) | ema (their moving average; runs with --ema_decay)");
ABSL_FLAG(std::string, split, "test",
          "test | train (the training examples the run used, its --train_examples)");
ABSL_FLAG(std::string, output, "",
          "CSV file for the predictions (written atomically); default: standard output, with "
          "the summary on standard error");
ABSL_FLAG(bool, overwrite, false, "replace the file at --output if it exists");

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Predicts with a training checkpoint: one CSV row per example (index, predicted class, "
      "class probabilities) and the accuracy.\n  bazel run //trainer:predict -- "
      "--checkpoint_dir=/tmp/run --output=/tmp/predictions.csv");
  if (const std::optional<int> exit_code =
          hogwild::ParseCommandLineFlags(argc, argv, "predict", "trainer/predict/main.cc")) {
    return *exit_code;
  }
  // A stop signal during the CSV's write removes its temporary file.
  hogwild::InstallTempFileCleanupOnSignals();
  // Relative paths mean the directory `bazel run` was typed in, not the runfiles tree.
  if (const absl::Status cwd = hogwild::EnterBuildWorkingDirectory(); !cwd.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(cwd.message()).c_str());
    return 1;
  }
  hogwild::PredictOptions options;
  options.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.dataset = absl::GetFlag(FLAGS_dataset);
  options.split = absl::GetFlag(FLAGS_split);
  options.allow_other_dataset = absl::GetFlag(FLAGS_allow_other_dataset);
  const std::string weights = absl::GetFlag(FLAGS_weights);
  if (weights != "raw" && weights != "ema") {
    return Fail(absl::InvalidArgumentError(
        absl::StrFormat("--weights=%s is unknown; use raw or ema", weights)));
  }
  options.ema = weights == "ema";
  if (options.checkpoint_dir.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--checkpoint_dir is required: the directory of a training run's checkpoint"));
  }
  const std::string output = absl::GetFlag(FLAGS_output);
  const bool overwrite = absl::GetFlag(FLAGS_overwrite);
  if (output.empty() && overwrite) {
    return Fail(absl::InvalidArgumentError("--overwrite has no effect without --output"));
  }
  // Where the CSV goes is checked before the (slower) work, so a refusal costs nothing.
  if (!output.empty()) {
    if (const absl::Status ok = hogwild::CheckPredictionOutput("--output", output, overwrite);
        !ok.ok()) {
      return Fail(ok);
    }
    const hogwild::RunFile files[] = {{.option = "--output", .value = output, .output = true},
                                      {.option = "--checkpoint_dir",
                                       .value = options.checkpoint_dir,
                                       .file = hogwild::CheckpointPath(options.checkpoint_dir)}};
    if (const absl::Status distinct = hogwild::CheckDistinctFiles(files); !distinct.ok()) {
      return Fail(distinct);
    }
  }
  absl::StatusOr<hogwild::PredictRun> run = hogwild::RunPrediction(options);
  if (!run.ok()) return Fail(run.status());
  const absl::Status written =
      output.empty() ? hogwild::WritePredictionsCsv(run->predictions, stdout)
                     : hogwild::WritePredictionsFile(run->predictions, output, overwrite);
  if (!written.ok()) return Fail(written);
  // The summary goes where the CSV does not.
  std::FILE* summary = output.empty() ? stderr : stdout;
  if (!run->warning.empty()) std::fprintf(stderr, "warning: %s\n", run->warning.c_str());
  const hogwild::Predictions& p = run->predictions;
  std::fprintf(summary,
               "predict: %s at global step %ld, %s weights, on %s %s (%ld examples)%s: "
               "accuracy %.2f%% (%ld/%ld)\n",
               run->model.c_str(), static_cast<long>(run->global_step), options.ema ? "EMA" : "raw",
               run->dataset.c_str(), options.split.c_str(), static_cast<long>(p.size()),
               output.empty() ? "" : absl::StrFormat(" -> %s", output).c_str(),
               100.0 * p.accuracy(), static_cast<long>(p.correct), static_cast<long>(p.size()));
  return hogwild::CheckedExitCode(0);
}

}  // namespace

int main(int argc, char** argv) { return hogwild::EndCommand(Main(argc, argv)); }
