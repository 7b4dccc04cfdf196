// The `//sparse:train` command: sparse logistic regression or linear SVM on a LIBSVM file or the
// RCV1-like synthetic set, or matrix factorization of ratings (--model=mf), under any mode of
// core/mode.h (Hogwild! async, tower averaging sync, ssp, backup, local_sgd and the paper's
// locked and round_robin baselines), chosen at run time:
//   bazel run //sparse:train -- --workers=2                       (synthetic, logreg, 5 epochs)
//   bazel run //sparse:train -- --dataset=/data/rcv1_train.binary.gz
//     --test=/data/rcv1_test.binary.gz --model=svm --lr=0.1 --lr_decay=0.9 --epochs=20 (one line)
// One progress line per epoch on stdout, a summary at the end; --log writes the convergence log
// (trainer/metrics/convergence_log.h's schema: a train row per epoch with the whole training
// set's loss, worker -1; with --test, an eval row too). --checkpoint_dir writes a checkpoint
// after every epoch (sparse/sparse_checkpoint.h), --resume continues from it. SIGINT/SIGTERM:
// the epoch under way finishes, its checkpoint is written, exit status 128 + signal. Bad input:
// one line naming the flag (or the file and line), exit status 1.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "sparse/buckwild.h"
#include "sparse/epoch_log.h"
#include "sparse/libsvm_reader.h"
#include "sparse/matrix_factorization.h"
#include "sparse/ratings.h"
#include "sparse/sparse_checkpoint.h"
#include "sparse/mail_corpus.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "sparse/synthetic_flags.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cli/argv_flags.h"
#include "trainer/cli/flags_parse.h"
#include "trainer/cli/mode_flags.h"
#include "trainer/cli/stop_signal.h"
#include "trainer/metrics/convergence_log.h"

ABSL_FLAG(std::string, dataset, "synthetic",
          "'synthetic' (the RCV1-like set, sparse/synthetic.h), 'spam' (the SpamAssassin corpus, "
          "tools/setup.sh --spam) or a directory of mails laid out like it (sparse/mail_corpus.h), "
          "or a LIBSVM file (plain or .gz); "
          "with --model=mf: 'movielens' (tools/setup.sh --movielens) or a user,item,rating CSV");
ABSL_FLAG(std::string, test, "", "a LIBSVM test file (plain or .gz); empty: none");
ABSL_FLAG(int64_t, num_features, 0,
          "feature count D of LIBSVM files; 0: the largest index of the training and test files");
ABSL_FLAG(std::string, model, "logreg",
          "logreg (logistic regression), svm (hinge loss) or mf (matrix factorization)");
ABSL_FLAG(int32_t, rank, 16, "mf only: factor rank k, in [1, 1024]");
ABSL_FLAG(std::string, mode, "async", hogwild::kModeFlagHelp);
ABSL_FLAG(int32_t, workers, static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency())),
          "worker threads, in [1, 256]; default: one per hardware thread");
ABSL_FLAG(int32_t, batch_size, 1,
          "examples (mf: ratings) per update: per worker (async, locked, round_robin, ssp, "
          "async_local_sgd) or global (sync, backup, local_sgd); 1 is the paper's (buckwild: "
          "only 1); cyclades: the updates of a round, at least --workers (e.g. 1000)");
ABSL_FLAG(int32_t, epochs, 5, "passes over the training set (mf: 20 unless given)");
ABSL_FLAG(double, lr, 0.5, "step size of the first epoch, > 0 (mf: 0.02 unless given)");
ABSL_FLAG(double, lr_decay, 1.0,
          "in (0, 1]: the step size is multiplied by it after each epoch (Niu et al.'s schedule)");
ABSL_FLAG(double, weight_decay, 0.0,
          "L2 weight decay, >= 0, on the coordinates an update touches (mf: 0.05 unless given)");
ABSL_FLAG(std::string, seed, "1",
          "seed of the data order and of the synthetic set, in [0, 2^64 - 1]");
ABSL_FLAG(std::string, log, "", "convergence log path (CSV, or JSON Lines for .jsonl)");
ABSL_FLAG(bool, overwrite_log, false, "replace the file at --log although it holds rows");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "write a checkpoint after every epoch into this directory (atomically); empty: none");
ABSL_FLAG(bool, resume, false, "continue from the checkpoint in --checkpoint_dir if there is one");
ABSL_FLAG(bool, overwrite_checkpoint, false,
          "start afresh although --checkpoint_dir holds a checkpoint, replacing it");

namespace {

using namespace hogwild;
using namespace hogwild::sparse;

std::string FlagText(const char* name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag == nullptr ? "" : flag->CurrentValue();
}

struct Data {
  SparseDataset train;
  std::optional<SparseDataset> test;
  std::string name;
};

absl::StatusOr<Data> Load(uint64_t seed) {
  Data out;
  const std::string dataset = absl::GetFlag(FLAGS_dataset);
  const std::string test_path = absl::GetFlag(FLAGS_test);
  const LibsvmOptions options{.num_features = absl::GetFlag(FLAGS_num_features)};
  if (dataset == "synthetic") {
    if (!test_path.empty() || options.num_features != 0) {
      return absl::InvalidArgumentError(
          "--test and --num_features apply to LIBSVM files, not --dataset=synthetic");
    }
    HOGWILD_ASSIGN_OR_RETURN(SyntheticSplit split, SyntheticSplitFromFlags(seed));
    out.train = std::move(split.train);
    out.test = std::move(split.test);
    out.name = "synthetic";
    return out;
  }
  for (const char* flag : kSyntheticFlagNames) {
    if (absl::flags_internal::WasPresentOnCommandLine(flag)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s applies to --dataset=synthetic only", flag));
    }
  }
  if (dataset == "spam" || std::filesystem::is_directory(dataset)) {
    if (!test_path.empty() || options.num_features != 0) {
      return absl::InvalidArgumentError(
          "--test and --num_features apply to LIBSVM files; a mail corpus has its own test split "
          "and 2^18 hashed features");
    }
    const std::string dir = dataset == "spam" ? kSpamAssassinDir : dataset;
    HOGWILD_ASSIGN_OR_RETURN(MailSplit split, ReadMailCorpus(dir));
    out.train = std::move(split.train);
    out.test = std::move(split.test);
    out.name = dataset == "spam" ? "spam" : dir;
    return out;
  }
  if (dataset == "movielens") {
    return absl::InvalidArgumentError(
        "--dataset=movielens is a set of ratings: train it with --model=mf");
  }
  if (!std::filesystem::exists(dataset)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--dataset=%s: no such file or directory; give 'synthetic', 'spam', a directory of spam "
        "and ham mail folders or a LIBSVM file",
        dataset));
  }
  HOGWILD_ASSIGN_OR_RETURN(out.train, ReadLibsvmFile(dataset, options));
  out.name = dataset;
  if (!test_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(SparseDataset test, ReadLibsvmFile(test_path, options));
    // D inferred: the larger of the two files' (a test feature unseen in training keeps a 0
    // weight).
    const int64_t d = std::max(out.train.num_features, test.num_features);
    out.train.num_features = test.num_features = d;
    out.test = std::move(test);
  }
  return out;
}

bool Given(const char* flag) { return absl::flags_internal::WasPresentOnCommandLine(flag); }

// The checkpoint flags, with what can be checked before any data is read: the combination and a
// writable directory (the checkpoint itself is checked against the run by the trainer).
absl::StatusOr<SparseCheckpointOptions> CheckpointFlags() {
  SparseCheckpointOptions options{.dir = absl::GetFlag(FLAGS_checkpoint_dir),
                                  .resume = absl::GetFlag(FLAGS_resume),
                                  .overwrite = absl::GetFlag(FLAGS_overwrite_checkpoint)};
  if (options.dir.empty() && Given("checkpoint_dir")) {
    return absl::InvalidArgumentError("--checkpoint_dir is empty");
  }
  if (options.dir.empty() && (options.resume || options.overwrite)) {
    return absl::InvalidArgumentError("--resume and --overwrite_checkpoint need --checkpoint_dir");
  }
  if (options.resume && options.overwrite) {
    return absl::InvalidArgumentError(
        "--resume and --overwrite_checkpoint contradict each other: choose one");
  }
  if (!options.dir.empty()) HOGWILD_RETURN_IF_ERROR(CheckCheckpointDirWritable(options.dir));
  if (options.resume && !std::filesystem::exists(CheckpointPath(options.dir))) {
    absl::PrintF("sparse: no checkpoint in %s yet: training from the start\n", options.dir);
  }
  return options;
}

// SIGINT/SIGTERM: the epoch under way finishes (and its checkpoint is written), then the run
// stops with this status, which main() turns into exit status 128 + signal.
constexpr char kStoppedBySignal[] = "stopped by a signal";

absl::Status StopIfAsked(const StopOnSignals& stop, const SparseEpochReport& r) {
  if (!stop.stop_requested().load()) return absl::OkStatus();
  const std::string dir = absl::GetFlag(FLAGS_checkpoint_dir);
  absl::PrintF("stopped early by %s after epoch %d%s\n",
               stop.signal() == SIGINT ? "SIGINT" : "SIGTERM", r.epoch,
               dir.empty()
                   ? " (no --checkpoint_dir: nothing saved)"
                   : absl::StrFormat("; the checkpoint in %s continues with --resume", dir));
  std::fflush(stdout);
  return absl::CancelledError(kStoppedBySignal);
}

// The summary's opening: what this run did, "done: 3 epochs, " or, resumed, "done: epochs 7 to 8
// of 8, resumed after epoch 6 from DIR: ". The counts and times that follow are this run's.
// cyclades' plans, for the summary (what bounds its rate: a round is as long as its busiest
// worker's share); "" in the other modes.
std::string FormatCyclades(const CycladesStats& s, int num_workers) {
  if (s.rounds == 0) return "";
  const double examples = static_cast<double>(s.examples);
  return absl::StrFormat(
      "; cyclades rounds: %.1f components each, the largest %.0f%% of the round, the busiest "
      "worker %.0f%% (%.0f%% balanced)",
      static_cast<double>(s.components) / s.rounds, 100.0 * s.largest_component / examples,
      100.0 * s.busiest_worker / examples, 100.0 / num_workers);
}

std::string DoneHead(int epochs, int resumed_epochs, const std::string& dir) {
  if (resumed_epochs == 0) {
    return absl::StrFormat("done: %d epoch%s, ", epochs, epochs == 1 ? "" : "s");
  }
  const std::string ran =
      resumed_epochs + 1 == epochs
          ? absl::StrFormat("epoch %d of %d", epochs, epochs)
          : absl::StrFormat("epochs %d to %d of %d", resumed_epochs + 1, epochs, epochs);
  return absl::StrFormat("done: %s, resumed after epoch %d from %s: ", ran, resumed_epochs, dir);
}

// --log's path checked before any data is read (empty: no log).
absl::Status CheckLogPath() {
  const std::string path = absl::GetFlag(FLAGS_log);
  if (path.empty()) return absl::OkStatus();
  HOGWILD_RETURN_IF_ERROR(CheckOutputFilePath("--log", path));
  if (absl::GetFlag(FLAGS_overwrite_log)) return absl::OkStatus();
  return ConvergenceLog::CheckWouldNotReplace(path, "--overwrite_log");
}

// No output of the run may be the same file as an input or another output: the log written over
// the checkpoint (or the data it trains on), or a checkpoint saved over the log.
absl::Status CheckRunFiles() {
  const std::string dir = absl::GetFlag(FLAGS_checkpoint_dir);
  const RunFile files[] = {{.option = "--log", .value = absl::GetFlag(FLAGS_log), .output = true},
                           {.option = "--checkpoint_dir",
                            .value = dir,
                            .file = dir.empty() ? "" : CheckpointPath(dir),
                            .output = true},
                           {.option = "--dataset", .value = absl::GetFlag(FLAGS_dataset)},
                           {.option = "--test", .value = absl::GetFlag(FLAGS_test)}};
  return CheckDistinctFiles(files);
}

// --model=mf: matrix factorization of a ratings CSV, 90/10 split (SplitRatings with --seed).
absl::Status RunMatrixFactorization(const StopOnSignals& stop) {
  MfOptions options;
  options.rank = absl::GetFlag(FLAGS_rank);
  HOGWILD_ASSIGN_OR_RETURN(const ModeChoice choice, ParseModeFlag(absl::GetFlag(FLAGS_mode)));
  options.mode = choice.mode;
  options.num_workers = absl::GetFlag(FLAGS_workers);
  HOGWILD_RETURN_IF_ERROR(RefuseUnreadModeFlags(options.mode, options.num_workers));
  if (Given("epochs")) options.epochs = absl::GetFlag(FLAGS_epochs);
  if (Given("lr")) {
    HOGWILD_ASSIGN_OR_RETURN(options.lr, ToFloat32("lr", FlagText("lr")));
  }
  HOGWILD_ASSIGN_OR_RETURN(options.lr_decay, ToFloat32("lr_decay", FlagText("lr_decay")));
  if (Given("weight_decay")) {
    HOGWILD_ASSIGN_OR_RETURN(options.weight_decay,
                             ToFloat32("weight_decay", FlagText("weight_decay")));
  }
  HOGWILD_ASSIGN_OR_RETURN(options.seed, ParseSeed(absl::GetFlag(FLAGS_seed)));
  options.batch_size = absl::GetFlag(FLAGS_batch_size);
  options.mode_options = ModeOptionsFromFlags(choice.defaults);
  for (const char* flag : {"test", "num_features", "synthetic_examples", "synthetic_test_examples",
                           "synthetic_features", "synthetic_nnz", "synthetic_noise"}) {
    if (Given(flag)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s has no effect with --model=mf", flag));
    }
  }
  HOGWILD_RETURN_IF_ERROR(ValidateMfOptions(options));
  HOGWILD_RETURN_IF_ERROR(CheckLogPath());
  HOGWILD_RETURN_IF_ERROR(CheckRunFiles());
  HOGWILD_ASSIGN_OR_RETURN(options.checkpoint, CheckpointFlags());
  std::string path = absl::GetFlag(FLAGS_dataset);
  if (!Given("dataset") || path == "movielens") path = kMovieLensPath;
  if (path == "synthetic" || path == "spam") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--dataset=%s is a set for --model=logreg or svm; --model=mf reads 'movielens' or a "
        "user,item,rating CSV file",
        path));
  }
  HOGWILD_ASSIGN_OR_RETURN(Ratings all, ReadRatingsFile(path));
  const RatingsSplit split = SplitRatings(all, options.seed);
  // The batch needs the ratings: checked before anything is printed or written.
  HOGWILD_RETURN_IF_ERROR(ValidateMfRun(options, split.train, &split.test));
  absl::PrintF(
      "sparse: mf rank %d, %s mode, %d worker%s, batch %d, %s (%d users x %d items, %d train / "
      "%d test ratings)\n",
      options.rank, ModeName(options.mode), options.num_workers,
      options.num_workers == 1 ? "" : "s", options.batch_size, path, all.num_users, all.num_items,
      split.train.size(), split.test.size());
  std::fflush(stdout);
  std::unique_ptr<ConvergenceLog> log;
  if (const std::string log_path = absl::GetFlag(FLAGS_log); !log_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(log, ConvergenceLog::Open(log_path));
  }
  const auto start = std::chrono::steady_clock::now();
  options.on_epoch = [&](const SparseEpochReport& r) -> absl::Status {
    absl::PrintF("epoch %d/%d | lr %g | %.0f updates/s | train RMSE %.4f | test RMSE %.4f\n",
                 r.epoch, options.epochs, r.lr, r.run_updates / r.train_time_s, r.train_loss,
                 *r.test_loss);
    std::fflush(stdout);
    HOGWILD_RETURN_IF_ERROR(WriteEpochRows(
        log.get(), r,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
    return StopIfAsked(stop, r);
  };
  HOGWILD_ASSIGN_OR_RETURN(MfResult result,
                           TrainMatrixFactorization(options, split.train, &split.test));
  if (log != nullptr) HOGWILD_RETURN_IF_ERROR(log->Close());
  absl::PrintF(
      "%s%d updates in %.3f s of SGD (%.0f updates/s); test RMSE %.4f against %.4f for the "
      "global mean %.3f%s%s\n",
      DoneHead(options.epochs, result.resumed_epochs, options.checkpoint.dir),
      result.epochs.back().run_updates, result.train_time_s,
      result.epochs.back().run_updates / result.train_time_s, *result.epochs.back().test_loss,
      GlobalMeanRmse(result.mean, split.test), result.mean,
      FormatExchanges(result.epochs.back().communication.exchanges,
                      result.epochs.back().communication.bytes_per_worker),
      FormatCyclades(result.epochs.back().cyclades, options.num_workers));
  return absl::OkStatus();
}

absl::Status Run(const StopOnSignals& stop) {
  if (const std::string model = absl::GetFlag(FLAGS_model);
      model != "logreg" && model != "svm" && model != "mf") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--model=%s is not a sparse model: logreg, svm or mf", model));
  }
  if (absl::GetFlag(FLAGS_model) == "mf") return RunMatrixFactorization(stop);
  if (absl::flags_internal::WasPresentOnCommandLine("rank")) {
    return absl::InvalidArgumentError("--rank applies to --model=mf only");
  }
  SparseTrainOptions options;
  HOGWILD_ASSIGN_OR_RETURN(options.model, ParseLinearModel(absl::GetFlag(FLAGS_model)));
  HOGWILD_ASSIGN_OR_RETURN(const ModeChoice choice, ParseModeFlag(absl::GetFlag(FLAGS_mode)));
  options.mode = choice.mode;
  options.num_workers = absl::GetFlag(FLAGS_workers);
  HOGWILD_RETURN_IF_ERROR(RefuseUnreadModeFlags(options.mode, options.num_workers));
  options.batch_size = absl::GetFlag(FLAGS_batch_size);
  options.mode_options = ModeOptionsFromFlags(choice.defaults);
  options.epochs = absl::GetFlag(FLAGS_epochs);
  HOGWILD_ASSIGN_OR_RETURN(options.lr, ToFloat32("lr", FlagText("lr")));
  HOGWILD_ASSIGN_OR_RETURN(options.lr_decay, ToFloat32("lr_decay", FlagText("lr_decay")));
  HOGWILD_ASSIGN_OR_RETURN(options.weight_decay,
                           ToFloat32("weight_decay", FlagText("weight_decay")));
  HOGWILD_ASSIGN_OR_RETURN(options.seed, ParseSeed(absl::GetFlag(FLAGS_seed)));
  // The option ranges first, before anything is created or read, on a stand-in of one empty
  // example per worker (a batch every mode accepts: one example per worker, the whole set in the
  // global-batch modes), so that a typo fails at once (the batch size, whose range is the data's,
  // is checked against the real data below).
  {
    const int examples = std::clamp(options.num_workers, 1, 256);
    SparseDataset stand_in;
    stand_in.num_features = 1;
    stand_in.row_offsets.assign(examples + 1, 0);
    stand_in.labels.assign(examples, 1.0f);
    SparseTrainOptions ranges = options;
    ranges.batch_size =
        SplitsGlobalBatch(options.mode) || options.mode == Mode::kCyclades ? examples : 1;
    HOGWILD_RETURN_IF_ERROR(ValidateSparseOptions(ranges, stand_in, nullptr));
  }
  HOGWILD_RETURN_IF_ERROR(CheckLogPath());
  HOGWILD_RETURN_IF_ERROR(CheckRunFiles());
  HOGWILD_ASSIGN_OR_RETURN(options.checkpoint, CheckpointFlags());
  const std::string log_path = absl::GetFlag(FLAGS_log);
  HOGWILD_ASSIGN_OR_RETURN(Data data, Load(options.seed));
  const SparseDataset* test = data.test ? &*data.test : nullptr;
  HOGWILD_RETURN_IF_ERROR(ValidateSparseOptions(options, data.train, test));
  absl::PrintF(
      "sparse: %s, %s mode%s, %d worker%s, batch %d, %s (%d examples x %d features, %.1f "
      "non-zeros per example%s)\n",
      LinearModelName(options.model), ModeName(options.mode),
      options.mode == Mode::kBuckwild
          ? absl::StrFormat(" (%d-bit fixed point, range %g, step %g)",
                            options.mode_options.fixed_point_bits,
                            options.mode_options.fixed_point_range,
                            FixedPointFormat{.bits = options.mode_options.fixed_point_bits,
                                             .range = options.mode_options.fixed_point_range}
                                .step())
          : "",
      options.num_workers, options.num_workers == 1 ? "" : "s", options.batch_size, data.name,
      data.train.num_examples(),
      data.train.num_features, static_cast<double>(data.train.nnz()) / data.train.num_examples(),
      test ? absl::StrFormat("; test: %d examples", test->num_examples()) : "");
  std::fflush(stdout);

  std::unique_ptr<ConvergenceLog> log;
  if (!log_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(log, ConvergenceLog::Open(log_path));
  }
  const auto start = std::chrono::steady_clock::now();
  const char* loss_name = options.model == LinearModel::kHinge ? "hinge loss" : "log-loss";
  options.on_epoch = [&](const SparseEpochReport& r) -> absl::Status {
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    absl::PrintF("epoch %d/%d | lr %g | %.0f updates/s | train %s %.6f, acc %.4f%s\n", r.epoch,
                 options.epochs, r.lr, r.run_updates / r.train_time_s, loss_name, r.train_loss,
                 r.train_accuracy,
                 r.test_loss ? absl::StrFormat(" | test %s %.6f, acc %.4f", loss_name, *r.test_loss,
                                               *r.test_accuracy)
                             : "");
    std::fflush(stdout);
    HOGWILD_RETURN_IF_ERROR(WriteEpochRows(log.get(), r, wall_s));
    return StopIfAsked(stop, r);
  };
  HOGWILD_ASSIGN_OR_RETURN(SparseTrainResult result, TrainSparse(options, data.train, test));
  if (log != nullptr) HOGWILD_RETURN_IF_ERROR(log->Close());
  const SparseEpochReport& last = result.epochs.back();
  absl::PrintF(
      "%s%d updates in %.3f s of SGD (%.0f updates/s, %.0f examples/s); final train %s %.6f, "
      "accuracy %.4f%s%s%s%s\n",
      DoneHead(options.epochs, result.resumed_epochs, options.checkpoint.dir), last.run_updates,
      result.train_time_s, last.run_updates / result.train_time_s,
      static_cast<double>(result.examples -
                          int64_t{result.resumed_epochs} * data.train.num_examples()) /
          result.train_time_s,
      loss_name, last.train_loss, last.train_accuracy,
      last.test_loss ? absl::StrFormat("; test %s %.6f, accuracy %.4f", loss_name, *last.test_loss,
                                       *last.test_accuracy)
                     : "",
      FormatExchanges(last.communication.exchanges, last.communication.bytes_per_worker),
      FormatCyclades(last.cyclades, options.num_workers),
      options.mode != Mode::kBuckwild
          ? ""
          : absl::StrFormat("; buckwild: %d of %d coordinate updates saturated at the range "
                            "(%.3g%%)",
                            last.saturated_updates,
                            static_cast<int64_t>(result.epochs.size()) * data.train.nnz(),
                            100.0 * static_cast<double>(last.saturated_updates) /
                                (static_cast<double>(result.epochs.size()) *
                                 static_cast<double>(data.train.nnz()))));
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Trains a sparse linear model (logistic regression, linear SVM) or a matrix factorization "
      "with Hogwild! SGD or any other mode (--mode).\n"
      "  bazel run //sparse:train -- --workers=2 [--dataset=FILE.svm[.gz] --test=FILE]");
  if (const std::optional<int> exit_code = hogwild::ParseCommandLineFlags(
          argc, argv, "sparse/train", {"sparse/", "trainer/cli/mode_flags.cc"})) {
    return *exit_code;
  }
  // Relative paths mean the directory `bazel run` was typed in, not the runfiles tree.
  if (const absl::Status cwd = hogwild::EnterBuildWorkingDirectory(); !cwd.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(cwd.message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<StopOnSignals>> stop =
      StopOnSignals::Install(/*exit_on_second=*/true, [](int signo) {
        std::fprintf(
            stderr,
            "\nsparse: received %s; finishing the current epoch%s (send it again to "
            "exit at once)\n",
            signo == SIGINT ? "SIGINT" : "SIGTERM",
            absl::GetFlag(FLAGS_checkpoint_dir).empty() ? "" : " and writing a checkpoint");
      });
  if (!stop.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(stop.status().message()).c_str());
    return 1;
  }
  if (const absl::Status status = Run(**stop); !status.ok()) {
    if (absl::IsCancelled(status) && status.message() == kStoppedBySignal) {
      // 128 + signal number: the shell's "ended by this signal", as //trainer:train.
      return hogwild::CheckedExitCode(128 + (*stop)->signal());
    }
    std::fprintf(
        stderr, "error: %s\n",
        std::string(hogwild::WithPresetNote(status, absl::GetFlag(FLAGS_mode)).message()).c_str());
    return hogwild::CheckedExitCode(1);
  }
  return hogwild::CheckedExitCode(0);
}

}  // namespace

int main(int argc, char** argv) { return hogwild::EndCommand(Main(argc, argv)); }
