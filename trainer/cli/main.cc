// The `train` command: trains a model on an MNIST-format or CIFAR-10 dataset with one worker thread
// per core or per GPU (--devices, --workers_per_device), in the mode chosen at build time
// (--//sync:mode=async|sync|ssp|backup|local_sgd, alias --config=sync). The same file is `train`
// (CPU trainer only) and `train_gpu` (linked with //trainer:gpu); `train` execs `train_gpu` for GPU
// runs (trainer/cli/gpu_handoff.h).
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
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
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "kernels/optimizer_name.h"
#include "mpi/mpi_cluster.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cli/argv_flags.h"
#include "trainer/cli/async_flags.h"
#include "trainer/cli/flags_parse.h"
#include "trainer/cli/gpu_handoff.h"
#include "trainer/cli/mode_flags.h"
#include "trainer/cli/option_flags.h"
#include "trainer/cli/progress_line.h"
#include "trainer/cli/quiet_stderr.h"
#include "trainer/cli/stop_signal.h"
#include "trainer/data/mnist.h"
#include "trainer/device.h"
#include "trainer/memory_estimate.h"
#include "trainer/straggler.h"
#include "trainer/trainer.h"

#if defined(HOGWILD_DEFAULT_MODE_SYNC)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kSync;
#elif defined(HOGWILD_DEFAULT_MODE_SSP)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kSsp;
#elif defined(HOGWILD_DEFAULT_MODE_BACKUP)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kBackup;
#elif defined(HOGWILD_DEFAULT_MODE_LOCAL_SGD)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kLocalSgd;
#elif defined(HOGWILD_DEFAULT_MODE_LOCKED)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kLocked;
#elif defined(HOGWILD_DEFAULT_MODE_ROUND_ROBIN)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kRoundRobin;
#elif defined(HOGWILD_DEFAULT_MODE_ASYNC_LOCAL_SGD)
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kAsyncLocalSgd;
#else
constexpr hogwild::Mode kBuildMode = hogwild::Mode::kAsync;
#endif

// The default is the build's --//sync:mode (--config=sync).
ABSL_FLAG(std::string, mode, hogwild::ModeName(kBuildMode), hogwild::kModeFlagHelp);

namespace {
int DefaultWorkers() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}
}  // namespace

ABSL_FLAG(std::string, dataset, "fashion_mnist",
          "fashion_mnist, mnist or cifar10 (the binary version's data_batch_*.bin and "
          "test_batch.bin; 3x32x32 images, for --model=cnn)");
ABSL_FLAG(std::string, data_dir, "",
          "directory with the dataset's files (IDX, or CIFAR-10's .bin); default: where "
          "tools/setup.sh installs the dataset");
ABSL_FLAG(std::string, model, "mlp",
          "logreg, mlp, cnn (LeNet-style conv net for images) or cnn_bn (cnn with batch norm)");
ABSL_FLAG(std::string, hidden, "256,256", "mlp hidden layer sizes, comma-separated (mlp only)");
ABSL_FLAG(int32_t, workers, DefaultWorkers(),
          "CPU worker threads (one per core); default: the number of hardware threads. "
          "Not used on GPUs (see --workers_per_device)");
ABSL_FLAG(std::string, devices, "",
          "cpu | gpu (every GPU) | gpu:0,1 (those GPUs); empty: every GPU if there is one, "
          "else cpu");
ABSL_FLAG(int32_t, workers_per_device, 1,
          "GPU workers per GPU (one stream each), in [1, 64]; GPUs only");
ABSL_FLAG(int64_t, batch_size, 64,
          "examples per step: PER WORKER in async, ssp, locked, round_robin and async_local_sgd "
          "modes, the GLOBAL "
          "batch (split across workers) in sync, backup and local_sgd modes");
ABSL_FLAG(int64_t, epochs, 8, "passes over the training set");
ABSL_FLAG(bool, drop_last, false,
          "leave out each epoch's short last batch (per worker where the batch is), so every "
          "step, the last included, has --batch_size examples (PyTorch's drop_last)");
ABSL_FLAG(double, lr, 0.05, "base learning rate, > 0");
ABSL_FLAG(std::string, lr_schedule, "constant",
          "constant | exponential (lr * rate^(step/decay_steps)) | step "
          "(lr * rate^floor(step/decay_steps))");
ABSL_FLAG(double, lr_decay_rate, 1.0,
          "decay rate in (0, 1) for the exponential and step schedules (only those)");
ABSL_FLAG(
    int64_t, lr_decay_steps, 1000,
    "decay period in global steps, >= 1, for the exponential and step schedules (only those)");
ABSL_FLAG(int64_t, lr_warmup_steps, 0,
          "linear warm-up (Goyal et al. 2017) over this many global steps, in [0, 2^40], "
          "composed with every schedule: lr(step) = schedule(step) * min(1, (step + 1) / N); "
          "0: none");
ABSL_FLAG(std::string, lr_scaling, "none",
          "none | linear | sqrt: scale --lr by (global batch / --lr_reference_batch), or its "
          "square root, once before training (the linear scaling rule when changing the worker "
          "count); the global batch is --batch_size in sync, backup and local_sgd modes and "
          "--batch_size x workers in async, ssp, locked, round_robin and async_local_sgd modes");
ABSL_FLAG(int64_t, lr_reference_batch, 256,
          "the global batch --lr is meant for, >= 1 (--lr_scaling linear or sqrt only)");
ABSL_FLAG(bool, weight_decay_biases, true,
          "apply --weight_decay to biases too (PyTorch's default); --noweight_decay_biases "
          "exempts them, as most recipes do (needs --weight_decay > 0)");
ABSL_FLAG(double, ema_decay, 0.0,
          "keep an exponential moving average of the weights with this decay in [0, 1), e.g. "
          "0.9999 (0: none), updated after each applied update (async: by the worker that "
          "applied it, lock-free; sync: once per step); every evaluation (the log's "
          "ema_test_accuracy) and the final summary report the raw and the EMA weights' test "
          "accuracy; checkpoints hold it; async and sync on CPU workers");
ABSL_FLAG(bool, ema_num_updates, true,
          "with --ema_decay: TensorFlow's num_updates warm-up, decay min(ema_decay, "
          "(1 + step) / (10 + step))");
ABSL_FLAG(double, bn_momentum, 0.1,
          "batch norm (--model=cnn_bn): the moving statistics' momentum in (0, 1], PyTorch's "
          "convention (moving = (1 - m) * moving + m * batch; TF's decay is 1 - m); training "
          "normalizes with each tower's batch statistics, evaluation with the moving ones, which "
          "sync mode updates once per step with the towers' average and async mode by each "
          "worker, lock-free like the parameters");
ABSL_FLAG(double, clip_global_norm, 0.0,
          "clip the gradient to this global L2 norm, >= 0 (0: off; PyTorch's clip_grad_norm_): "
          "in sync and backup modes the AVERAGED gradient (after the tower average, not each "
          "tower's share), in async, ssp, local_sgd and async_local_sgd modes each worker's own "
          "gradient; CPU "
          "workers only");
ABSL_FLAG(std::string, optimizer, "sgd",
          "sgd | momentum | nesterov | adam | adamw | rmsprop | adagrad: torch.optim's rules and "
          "defaults (kernels/optimizer.h; adamw's decay is --weight_decay, default 0 here, 0.01 "
          "in PyTorch); GPU workers too (the others than sgd and momentum not yet run on a GPU)");
ABSL_FLAG(std::string, optimizer_state, "per_worker",
          "async, ssp, locked, round_robin: per_worker (each worker its own momentum/moments/step "
          "count, as "
          "PyTorch's Hogwild example) | shared (one state updated lock-free like the parameters, "
          "A3C's shared Adam: concurrent updates of a state element may be lost; Adam's step "
          "count is exact, one per applied update; CPU workers only)");
ABSL_FLAG(double, momentum, 0.0,
          "momentum in [0, 1) for sgd and rmsprop, in (0, 1) for momentum and nesterov "
          "(PyTorch convention, dampening 0)");
ABSL_FLAG(double, adam_beta1, 0.9, "adam, adamw: first-moment decay, in [0, 1)");
ABSL_FLAG(double, adam_beta2, 0.999, "adam, adamw: second-moment decay, in [0, 1)");
ABSL_FLAG(double, rmsprop_alpha, 0.99, "rmsprop: smoothing constant, in [0, 1)");
ABSL_FLAG(double, eps, 0.0,
          "adam, adamw, rmsprop, adagrad: the denominator's epsilon, >= 0; 0: PyTorch's default "
          "(1e-8, adagrad 1e-10)");
ABSL_FLAG(double, weight_decay, 0.0, "L2 weight decay, >= 0");
// A string, parsed by ParseSeed: Abseil's own uint64 parsing refuses "-1" with a bare "Illegal
// value" that names no range.
ABSL_FLAG(std::string, seed, "1", "seed of initialization and data order, in [0, 2^64 - 1]");
ABSL_FLAG(std::string, eval_every, "1epoch",
          "test-set evaluation period: N (global steps), Nepoch(s), or 0 for only at the end");
ABSL_FLAG(bool, eval_in_background, true,
          "periodic evaluations on an evaluator thread (the worker that reaches an evaluation "
          "point only copies the parameters; every point keeps its row); "
          "--noeval_in_background: inline on that worker, which stalls for each");
ABSL_FLAG(std::string, log, "",
          "convergence log path: CSV, or JSON Lines when it ends in .jsonl (schema: "
          "docs/convergence_log.md)");
ABSL_FLAG(std::string, stragglers, "",
          "slowed workers, WORKER:FACTOR[,...]: e.g. 1:3 makes worker 1's steps take 3 times "
          "their compute time (it waits twice its step time after each step)");
ABSL_FLAG(std::string, straggler_delay, "",
          "random straggler delays, MEAN@PROBABILITY: e.g. 50ms@0.1 adds an exponential delay "
          "of mean 50 ms after one step in ten of every worker (seeded by --seed)");
ABSL_FLAG(bool, overwrite_log, false,
          "replace the file at --log although it holds rows (without it, such a file stops the "
          "run before it starts)");
ABSL_FLAG(int64_t, log_every, 100, "convergence-log row per worker every N of its steps");
ABSL_FLAG(int64_t, train_examples, 0, "use only the first N training examples (0: all)");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "directory for checkpoints (written atomically; a crash leaves the last complete one); "
          "empty: no checkpoints");
ABSL_FLAG(std::string, checkpoint_every, "",
          "checkpoint period with --checkpoint_dir: N global steps (500), a time (30s, 10m), or 0 "
          "for only on SIGINT/SIGTERM and at the end; empty: 600s");
ABSL_FLAG(bool, resume, false,
          "continue from the checkpoint in --checkpoint_dir if there is one (else start afresh)");
ABSL_FLAG(int64_t, exchange_every, 8,
          "async across processes (mpirun -np N, N > 1) only: a process pushes its accumulated "
          "updates to the parameters sharded over the processes, and pulls them, every this many "
          "of its local updates, >= 1");
ABSL_FLAG(bool, overwrite_checkpoint, false,
          "start afresh although --checkpoint_dir holds a checkpoint, replacing it at the first "
          "save (without it or --resume, an existing checkpoint stops the run before it starts)");

namespace {

// A flag that only some settings read: where it is read, and what to say where it is not.
struct FlagUse {
  const char* flag;
  bool used;
  std::string where;
};

// The flag's value as typed (Abseil's round-trip text), for messages.
std::string FlagText(const char* name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag == nullptr ? "" : flag->CurrentValue();
}

// --optimizer, --optimizer_state and the optimizers' constants into `sgd` (ValidateOptions checks
// their ranges and refuses the ones the optimizer does not read).
absl::Status ParseOptimizerFlags(hogwild::SgdOptions& sgd) {
  using namespace hogwild;
  absl::StatusOr<OptimizerKind> kind = ParseOptimizer(absl::GetFlag(FLAGS_optimizer));
  if (!kind.ok())
    return absl::InvalidArgumentError(absl::StrCat("--optimizer: ", kind.status().message()));
  sgd.optimizer = *kind;
  const std::string state = absl::GetFlag(FLAGS_optimizer_state);
  if (state != "per_worker" && state != "shared") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--optimizer_state=%s is not an optimizer state; it must be per_worker or shared", state));
  }
  sgd.shared_optimizer_state = state == "shared";
  HOGWILD_ASSIGN_OR_RETURN(sgd.beta1, ToFloat32("adam_beta1", FlagText("adam_beta1")));
  HOGWILD_ASSIGN_OR_RETURN(sgd.beta2, ToFloat32("adam_beta2", FlagText("adam_beta2")));
  HOGWILD_ASSIGN_OR_RETURN(sgd.alpha, ToFloat32("rmsprop_alpha", FlagText("rmsprop_alpha")));
  HOGWILD_ASSIGN_OR_RETURN(sgd.eps, ToFloat32("eps", FlagText("eps")));
  HOGWILD_ASSIGN_OR_RETURN(sgd.clip_global_norm,
                           ToFloat32("clip_global_norm", FlagText("clip_global_norm")));
  return absl::OkStatus();
}

// The settings only some configurations read, typed where these options do not read them, the
// default value included (trainer/trainer_options.h UnreadSettings): e.g. --adam_beta1=0.9 with
// sgd, or --optimizer_state with one worker.
absl::Status CheckTypedFlagsHaveEffect(const hogwild::TrainerOptions& options) {
  for (const hogwild::UnreadSetting& s : hogwild::UnreadSettings(options, /*as_flags=*/true)) {
    if (absl::flags_internal::WasPresentOnCommandLine(s.name)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s=%s has no effect %s", s.name, FlagText(s.name.c_str()), s.where));
    }
  }
  return absl::OkStatus();
}

// What the flags ask for, checked before the data is loaded.
struct RunSetup {
  hogwild::TrainerOptions options;
  hogwild::DatasetInfo info;
  std::string dir;  // the dataset's folder
  int64_t train_examples = 0;
};

// A flag that only some settings read, typed where it is not read, would be silently dropped:
// refuse it by name. (The library refuses such fields only when they differ from their
// defaults, since it cannot see what was typed; these flags' defaults differ from its own.)
absl::Status RefuseUnreadFlags(const hogwild::TrainerOptions& options, bool gpus, bool decays,
                               int num_ranks) {
  using namespace hogwild;
  for (const auto& [flag, used, where] : std::initializer_list<FlagUse>{
           {"workers", !gpus, "with GPU devices; use --workers_per_device"},
           {"workers_per_device", gpus, "with --devices=cpu; use --workers"},
           {"hidden", options.model.name == "mlp",
            absl::StrFormat("with --model=%s (only mlp has hidden layers)", options.model.name)},
           {"log_every", !absl::GetFlag(FLAGS_log).empty(), "without --log"},
           {"bn_momentum", HasBatchNorm(options.model),
            absl::StrFormat("with --model=%s (only cnn_bn has batch norm)", options.model.name)},
           {"exchange_every", options.mode == Mode::kAsync && num_ranks > 1,
            options.mode == Mode::kAsync
                ? std::string("in one process; it is for async runs of several (mpirun -np N)")
                : absl::StrFormat("in %s mode; it is for async runs of several processes",
                                  ModeName(options.mode))},
           {"lr_decay_rate", decays, "with --lr_schedule=constant"},
           {"lr_decay_steps", decays, "with --lr_schedule=constant"}}) {
    if (!used && absl::flags_internal::WasPresentOnCommandLine(flag)) {
      return absl::InvalidArgumentError(absl::StrFormat("--%s has no effect %s", flag, where));
    }
  }
  return absl::OkStatus();
}

// The training recipe's flags into `options` (workers, batch, model sizes, learning rate,
// optimizer, EMA, the mode's option, stragglers).
absl::Status ParseRecipeFlags(hogwild::TrainerOptions& options, bool gpus, bool decays) {
  using namespace hogwild;
  if (!gpus) options.num_workers = absl::GetFlag(FLAGS_workers);
  if (gpus) options.workers_per_device = absl::GetFlag(FLAGS_workers_per_device);
  options.batch_size = absl::GetFlag(FLAGS_batch_size);
  options.epochs = absl::GetFlag(FLAGS_epochs);
  options.drop_last = absl::GetFlag(FLAGS_drop_last);
  HOGWILD_ASSIGN_OR_RETURN(options.seed, ParseSeed(absl::GetFlag(FLAGS_seed)));
  options.model.hidden.clear();
  if (options.model.name == "mlp") {
    HOGWILD_ASSIGN_OR_RETURN(options.model.hidden, ParseHiddenSizes(absl::GetFlag(FLAGS_hidden)));
  }
  HOGWILD_ASSIGN_OR_RETURN(options.lr.base_lr, ToFloat32("lr", FlagText("lr")));
  if (decays) {
    HOGWILD_ASSIGN_OR_RETURN(options.lr.decay_rate,
                             ToFloat32("lr_decay_rate", FlagText("lr_decay_rate")));
    options.lr.decay_steps = absl::GetFlag(FLAGS_lr_decay_steps);
  }
  options.lr.warmup_steps = absl::GetFlag(FLAGS_lr_warmup_steps);
  HOGWILD_ASSIGN_OR_RETURN(options.lr.scaling, ParseLrScaling(absl::GetFlag(FLAGS_lr_scaling)));
  options.lr.reference_batch = absl::GetFlag(FLAGS_lr_reference_batch);
  HOGWILD_RETURN_IF_ERROR(ParseOptimizerFlags(options.sgd));
  HOGWILD_ASSIGN_OR_RETURN(options.sgd.momentum, ToFloat32("momentum", FlagText("momentum")));
  HOGWILD_ASSIGN_OR_RETURN(options.sgd.weight_decay,
                           ToFloat32("weight_decay", FlagText("weight_decay")));
  ApplyAsyncFlags(options.sgd);
  options.weight_decay_biases = absl::GetFlag(FLAGS_weight_decay_biases);
  HOGWILD_ASSIGN_OR_RETURN(options.ema_decay, ToFloat32("ema_decay", FlagText("ema_decay")));
  options.ema_num_updates = absl::GetFlag(FLAGS_ema_num_updates);
  if (HasBatchNorm(options.model)) {
    HOGWILD_ASSIGN_OR_RETURN(options.sgd.moving_stats_momentum,
                             ToFloat32("bn_momentum", FlagText("bn_momentum")));
  }
  // A preset (--mode=diloco) gives its own defaults to the mode's flags.
  HOGWILD_ASSIGN_OR_RETURN(const ModeChoice choice, ParseModeFlag(absl::GetFlag(FLAGS_mode)));
  SetModeOptions(ModeOptionsFromFlags(choice.defaults), options);
  if (const std::string slow = absl::GetFlag(FLAGS_stragglers); !slow.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(options.stragglers.slowdown, ParseSlowdown("stragglers", slow));
  }
  if (const std::string delay = absl::GetFlag(FLAGS_straggler_delay); !delay.empty()) {
    HOGWILD_RETURN_IF_ERROR(ParseRandomDelay("straggler_delay", delay, options.stragglers));
  }
  return absl::OkStatus();
}

// The progress line's reporter (TrainerOptions::progress) of the rank that speaks for the job.
// `may_rewrite`: the line may be rewritten in place on a terminal.
std::function<void(const hogwild::ProgressReport&)> ProgressReporter(
    const std::atomic<bool>* stop_requested, bool may_rewrite) {
  using namespace hogwild;
  // The resume is said once Train() has accepted the checkpoint, before the first step, so a
  // refused resume never claims it resumed and the progress line's epochs read from there.
  return [line = MakeProgressLine(stdout, may_rewrite), dir = absl::GetFlag(FLAGS_checkpoint_dir),
          stop_requested](const ProgressReport& report) {
    if (report.resumed_from_step >= 0) {
      absl::PrintF("hogwild: resumed from the checkpoint at global step %d (epoch %.2f) in %s\n",
                   report.resumed_from_step, report.start_epoch, dir);
      std::fflush(stdout);
      return;
    }
    // Stopped before the first step of a fresh run: the final evaluation measured the initial
    // weights, not a result; main() says plainly that nothing was trained.
    if (report.final && report.metrics.updates == 0 && report.start_epoch == 0.0 &&
        stop_requested->load(std::memory_order_acquire)) {
      return;
    }
    line(report);
  };
}

// --checkpoint_dir, --checkpoint_every, --resume and --overwrite_checkpoint into `options`.
absl::Status ParseCheckpointFlags(hogwild::TrainerOptions& options) {
  using namespace hogwild;
  options.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  options.resume = absl::GetFlag(FLAGS_resume);
  options.overwrite_checkpoint = absl::GetFlag(FLAGS_overwrite_checkpoint);
  const bool every_given = !absl::GetFlag(FLAGS_checkpoint_every).empty();
  HOGWILD_ASSIGN_OR_RETURN(
      CheckpointEvery checkpoint_every,
      ParseCheckpointEvery(every_given ? absl::GetFlag(FLAGS_checkpoint_every) : "600s"));
  if (options.checkpoint_dir.empty() && (every_given || options.resume)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s needs --checkpoint_dir (the directory where checkpoints live)",
                        every_given ? "--checkpoint_every" : "--resume"));
  }
  if (!options.checkpoint_dir.empty()) {
    options.checkpoint_every_steps = checkpoint_every.steps;
    options.checkpoint_every_seconds = checkpoint_every.seconds;
  }
  return absl::OkStatus();
}

// The flags of what the run reports and keeps into `options`: evaluations, log, exchanges,
// progress, stop requests, checkpoints.
absl::Status ParseOutputFlags(hogwild::TrainerOptions& options,
                              const std::atomic<bool>* stop_requested, hogwild::Cluster* cluster,
                              bool speaks) {
  using namespace hogwild;
  HOGWILD_ASSIGN_OR_RETURN(EvalEvery eval_every, ParseEvalEvery(absl::GetFlag(FLAGS_eval_every)));
  options.eval_every_steps = eval_every.steps;
  options.eval_every_epochs = eval_every.epochs;
  options.eval_in_background = absl::GetFlag(FLAGS_eval_in_background);
  options.log_path = absl::GetFlag(FLAGS_log);
  options.overwrite_log = absl::GetFlag(FLAGS_overwrite_log);
  options.log_every_steps = absl::GetFlag(FLAGS_log_every);
  options.cluster = cluster;
  options.exchange_every = absl::GetFlag(FLAGS_exchange_every);
  if (options.exchange_every < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--exchange_every=%d is out of range; it must be >= 1", options.exchange_every));
  }
  // Rank 0 speaks for the job: the other ranks print no progress, banner or summary. Under
  // mpirun a rank's stdout may be a pseudo-terminal even when mpirun's own output goes to a
  // file, so a job prints whole lines, never the terminal's in-place rewrite.
  const bool may_rewrite = cluster == nullptr;
  if (speaks) options.progress = ProgressReporter(stop_requested, may_rewrite);
  options.progress_period = ProgressLinePeriod(stdout, may_rewrite);
  options.stop_requested = stop_requested;
  return ParseCheckpointFlags(options);
}

// The checks of the options that need no data, so a bad flag fails at once, before the (slower)
// dataset load: the library's, the typed flags', the model's and the memory's, the job's, the
// outputs'.
absl::Status CheckBeforeLoad(const hogwild::TrainerOptions& options, int64_t train_examples,
                             int num_ranks, bool gpus, bool speaks) {
  using namespace hogwild;
  HOGWILD_RETURN_IF_ERROR(ValidateOptions(options));
  HOGWILD_RETURN_IF_ERROR(CheckTypedFlagsHaveEffect(options));
  // The library accepts a 1-worker ssp run (the policy's reference); a typed bound is a mistake.
  HOGWILD_RETURN_IF_ERROR(RefuseUnreadModeFlags(options.mode, WorkerCount(options)));
  // The model name and sizes too (with MNIST's shape), so --model=nope does not wait for the
  // data, and the memory the run will need (Train() checks again with the real sizes).
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Model> mnist_model, Model::Create(options.model));
  if (!gpus) {
    HOGWILD_RETURN_IF_ERROR(
        CheckMemoryFits(EstimateTrainingMemory(options, *mnist_model, train_examples),
                        AvailableMemoryBytes(WorkerCount(options) + 1)));
  }
  // What a job of several processes cannot do, before CheckOutputs creates the directory.
  HOGWILD_RETURN_IF_ERROR(CheckClusterOptions(options, num_ranks));
  // A bad or occupied --checkpoint_dir, and a --log that would replace a previous run's log,
  // too (Train() checks them again).
  HOGWILD_RETURN_IF_ERROR(CheckOutputs(options));
  std::error_code ec;
  if (speaks && options.resume &&
      !std::filesystem::exists(CheckpointPath(options.checkpoint_dir), ec)) {
    // --resume falls back to a fresh start (so a job script can always pass it); say so, in
    // case the directory was mistyped.
    absl::PrintF("hogwild: --resume: no checkpoint in %s yet; training from the start\n",
                 options.checkpoint_dir);
  }
  return absl::OkStatus();
}

absl::StatusOr<RunSetup> PrepareRun(const std::atomic<bool>* stop_requested,
                                    hogwild::Cluster* cluster) {
  using namespace hogwild;
  const int num_ranks = cluster != nullptr ? cluster->num_ranks() : 1;
  const bool speaks = cluster == nullptr || cluster->rank() == 0;
  HOGWILD_ASSIGN_OR_RETURN(DatasetInfo info, LookupDataset(absl::GetFlag(FLAGS_dataset)));
  std::string dir = absl::GetFlag(FLAGS_data_dir);
  if (dir.empty()) dir = info.default_dir;

  TrainerOptions options;
  HOGWILD_ASSIGN_OR_RETURN(const ModeChoice choice, ParseModeFlag(absl::GetFlag(FLAGS_mode)));
  options.mode = choice.mode;
  HOGWILD_ASSIGN_OR_RETURN(options.devices, ResolveDevices(absl::GetFlag(FLAGS_devices)));
  const bool gpus = options.devices[0].is_gpu();
  options.model.name = absl::GetFlag(FLAGS_model);
  HOGWILD_ASSIGN_OR_RETURN(options.lr.kind, ParseLrScheduleKind(absl::GetFlag(FLAGS_lr_schedule)));
  const bool decays = options.lr.kind != LrSchedule::Kind::kConstant;
  HOGWILD_RETURN_IF_ERROR(RefuseUnreadFlags(options, gpus, decays, num_ranks));
  HOGWILD_RETURN_IF_ERROR(ParseRecipeFlags(options, gpus, decays));
  HOGWILD_RETURN_IF_ERROR(ParseOutputFlags(options, stop_requested, cluster, speaks));
  const int64_t train_examples = absl::GetFlag(FLAGS_train_examples);
  if (train_examples < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--train_examples=%d is out of range; it must be >= 0 (0: all)", train_examples));
  }
  HOGWILD_RETURN_IF_ERROR(CheckBeforeLoad(options, train_examples, num_ranks, gpus, speaks));
  return RunSetup{.options = std::move(options),
                  .info = std::move(info),
                  .dir = std::move(dir),
                  .train_examples = train_examples};
}

absl::StatusOr<hogwild::TrainResult> Run(const std::atomic<bool>* stop_requested,
                                         hogwild::Cluster* cluster) {
  using namespace hogwild;
  const int num_ranks = cluster != nullptr ? cluster->num_ranks() : 1;
  const bool speaks = cluster == nullptr || cluster->rank() == 0;
  absl::StatusOr<RunSetup> setup = PrepareRun(stop_requested, cluster);
  // A job's ranks refuse the flags together, before any of them loads the data (the checks read
  // each host's file system, so they may differ between hosts).
  if (num_ranks > 1) HOGWILD_RETURN_IF_ERROR(cluster->AgreeOnStatus(setup.status()));
  HOGWILD_RETURN_IF_ERROR(setup.status());
  const TrainerOptions& options = setup->options;
  const DatasetInfo& info = setup->info;
  HOGWILD_ASSIGN_OR_RETURN(
      TrainTestSplits splits,
      LoadTrainTest(info, setup->dir, setup->train_examples, "--train_examples"));
  const Dataset& train = splits.train;
  const Dataset& test = splits.test;

  ModelSpec spec = options.model;
  spec.input_shape = train.example_shape;
  spec.num_classes = train.num_classes;
  HOGWILD_ASSIGN_OR_RETURN(auto model, Model::Create(spec));
  if (speaks) {
    // The optimizer, its state's kind where it is not the default (per worker), and the rules
    // that change what an update does: async's delay rules, local_sgd's outer optimizer and
    // Streaming DiLoCo's fragments.
    const std::string optimizer = absl::StrCat(
        OptimizerName(options.sgd.optimizer),
        options.sgd.shared_optimizer_state ? " (shared state)" : "", UpdateRulesText(options));
    absl::PrintF(
        "hogwild: %s mode, %s%d worker%s on %s, optimizer %s, %s (%d train / %d test "
        "examples)\n%s\n",
        ModeName(options.mode), num_ranks > 1 ? absl::StrFormat("%d processes x ", num_ranks) : "",
        WorkerCount(options), WorkerCount(options) == 1 ? "" : "s",
        DevicesToString(options.devices), optimizer, info.name, train.size(), test.size(),
        model->Describe());
  }
  std::fflush(stdout);
  return Train(options, train, test);
}

// GPU runs happen in train_gpu: hands over to it (an exec that returns only on failure) and
// returns the exit code of a failed hand-over; nothing when this process is to train (a no-op in
// train_gpu).
std::optional<int> HandOverGpuRun(const std::vector<char*>& original_argv,
                                  hogwild::QuietStderr& quiet_before_mpi) {
  const absl::StatusOr<std::string> gpu_binary =
      hogwild::GpuBinaryFor(absl::GetFlag(FLAGS_devices), hogwild::ThisProcessGpuFacts());
  if (gpu_binary.ok() && gpu_binary->empty()) return std::nullopt;
  // train_gpu parses the flags again, quiet on the same ranks: hand it the real stderr.
  if (gpu_binary.ok()) quiet_before_mpi.Restore();
  const absl::Status status = gpu_binary.ok()
                                  ? hogwild::ExecGpuBinary(*gpu_binary, original_argv.data())
                                  : gpu_binary.status();
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

// SIGINT/SIGTERM: finish the current step, write a checkpoint, exit with 128 + signal. Installed
// before MPI starts: a signal during MPI_Init (seconds on a busy machine) is then a stop request
// like any other, where the default action would kill the rank and lose its orderly exit.
// mpirun forwards a signal to every rank: rank 0 (known before MPI starts from the launcher's
// environment) says it for the job. mpirun also sends SIGTERM when it ends a job after another
// rank failed: the line says both.
absl::StatusOr<std::unique_ptr<hogwild::StopOnSignals>> InstallStopSignals() {
  const bool launched = hogwild::MpiCluster::LaunchedByMpi();
  const bool speaks = hogwild::MpiCluster::SpeaksBeforeInit();
  return hogwild::StopOnSignals::Install(/*exit_on_second=*/true, [launched, speaks](int signo) {
    if (!speaks) return;
    std::fprintf(
        stderr,
        "\nhogwild: %s %s%s; finishing the current step%s (send it again to "
        "exit at once)\n",
        launched ? "rank 0 received" : "received", signo == SIGINT ? "SIGINT" : "SIGTERM",
        launched ? " (a signal to the job, or mpirun ending it after another rank failed)" : "",
        absl::GetFlag(FLAGS_checkpoint_dir).empty()
            ? ""
            : " and writing a checkpoint, if a step was taken");
  });
}

// The exit code of a run that failed with `error`, said by the rank that has it, or by rank 0
// for a refusal the ranks agreed on. `several`: a job of several processes.
int ReportFailure(const absl::Status& error, hogwild::MpiCluster* cluster, bool several) {
  const absl::Status status =
      hogwild::WithPresetNote(hogwild::WithFlagNames(error), absl::GetFlag(FLAGS_mode));
  if (several && hogwild::IsJobWide(error)) {
    // Every rank refused together (Cluster::AgreeOnStatus): rank 0 says it once, and every
    // rank ends normally with status 1 (no MPI_Abort, whose report would bury the message).
    if (cluster->rank() == 0) {
      std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    }
    return 1;
  }
  if (several) {
    // The other ranks may wait in a collective or a window epoch for this one: end the job.
    std::fprintf(stderr, "error: rank %d of %d: %s; ending the job\n", cluster->rank(),
                 cluster->num_ranks(), std::string(status.message()).c_str());
    std::fflush(stderr);
    cluster->Abort(1);
  }
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

// The signal that stopped the run (0: none); in a job, the one any rank received, so every rank
// ends alike. Every rank joins this collective, stopped or not: a sync job's ranks stop together,
// but in an async job a signal that reached one rank stops that rank only, and the others
// train on to their end before they get here.
int JobSignal(int signo, hogwild::MpiCluster* cluster, bool several) {
  if (!several) return signo;
  const absl::StatusOr<int> job_signal = cluster->MaxOverRanks(signo);
  if (!job_signal.ok()) {
    std::fprintf(stderr, "error: rank %d of %d: %s; ending the job\n", cluster->rank(),
                 cluster->num_ranks(), std::string(job_signal.status().message()).c_str());
    cluster->Abort(1);
  }
  return *job_signal;
}

// Prints the run's summary (on the rank that speaks) and returns the exit code: 0, or
// 128 + `signo` for a run stopped by a signal.
int ReportResult(const hogwild::TrainResult& result, int signo) {
  const std::string dir = absl::GetFlag(FLAGS_checkpoint_dir);
  if (result.stopped_early && result.steps == 0 && result.resumed_from_step < 0) {
    // No summary: its "final test accuracy" would be the untrained weights'.
    std::printf("stopped by %s before the first step: nothing was trained%s\n",
                signo == SIGINT ? "SIGINT" : "SIGTERM",
                dir.empty() ? "" : absl::StrFormat(", nothing saved in %s", dir).c_str());
    return hogwild::CheckedExitCode(128 + signo);
  }
  std::printf("%s\n", hogwild::FormatSummary(result).c_str());
  if (result.last_checkpoint_step >= 0) {
    std::printf("checkpoint: global step %ld in %s\n",
                static_cast<long>(result.last_checkpoint_step), dir.c_str());
  }
  if (result.stopped_early) {
    // 128 + signal number, the shell's convention for "ended by this signal": a supervisor
    // sees the run did not complete, and the checkpoint lets it continue with --resume.
    std::printf("stopped early by %s at global step %ld%s\n",
                signo == SIGINT ? "SIGINT" : "SIGTERM", static_cast<long>(result.steps),
                dir.empty() ? " (no --checkpoint_dir: nothing saved)" : "; continue with --resume");
    return hogwild::CheckedExitCode(128 + signo);
  }
  // A job one of whose other ranks was stopped by a signal did not complete either.
  if (signo != 0) {
    std::printf("another rank of the job was stopped early by %s\n",
                signo == SIGINT ? "SIGINT" : "SIGTERM");
    return hogwild::CheckedExitCode(128 + signo);
  }
  return hogwild::CheckedExitCode(0);
}

int Main(int argc, char** argv) {
  // Under mpirun every rank parses the same command line before MPI starts and would print the
  // same error (Abseil's unknown flag or bad value, which exit(1) at once, and the checks
  // below): rank 0 says it, the other ranks end with the same status silently.
  hogwild::QuietStderr quiet_before_mpi(!hogwild::MpiCluster::SpeaksBeforeInit());
  absl::SetProgramUsageMessage(
      "Trains a classifier with data-parallel SGD under any update policy (--mode=async, the "
      "default, or sync, ssp, backup, local_sgd, locked, round_robin, async_local_sgd, or the "
      "presets diloco and streaming_diloco; --config=sync makes sync the default).\n  bazel run //trainer:train -- --epochs=5");
  // argv as given, for the hand-over to train_gpu.
  std::vector<char*> original_argv(argv, argv + argc);
  original_argv.push_back(nullptr);
  if (const std::optional<int> exit_code = hogwild::ParseCommandLineFlags(
          argc, argv, "train",
          {"trainer/cli/main.cc", "trainer/cli/mode_flags.cc", "trainer/cli/async_flags.cc"})) {
    return *exit_code;
  }
  // Relative paths mean the directory `bazel run` was typed in, not the runfiles tree.
  if (const absl::Status cwd = hogwild::EnterBuildWorkingDirectory(); !cwd.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(cwd.message()).c_str());
    return 1;
  }
  if (const std::optional<int> exit_code = HandOverGpuRun(original_argv, quiet_before_mpi)) {
    return *exit_code;
  }
  absl::StatusOr<std::unique_ptr<hogwild::StopOnSignals>> stop = InstallStopSignals();
  if (!stop.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(stop.status().message()).c_str());
    return 1;
  }
  // Started by mpirun: join the job (a plain start makes no MPI call at all), and check that
  // every rank was given the same flags before anything else. From here each error is said by
  // the rank that has it, or by rank 0 for a refusal the ranks agreed on.
  quiet_before_mpi.Restore();
  absl::StatusOr<std::unique_ptr<hogwild::MpiCluster>> mpi =
      hogwild::MpiCluster::InitIfLaunched(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(mpi.status().message()).c_str());
    return 1;
  }
  hogwild::MpiCluster* const cluster = mpi->get();
  const bool several = cluster != nullptr && cluster->num_ranks() > 1;
  if (several) {
    const absl::Status same = cluster->CheckSameArguments(
        std::vector<std::string>(original_argv.begin() + 1, original_argv.end() - 1));
    if (!same.ok()) {
      // Every rank knows: rank 0 says it, and all end normally.
      if (cluster->rank() == 0) {
        std::fprintf(stderr, "error: %s\n", std::string(same.message()).c_str());
      }
      return 1;
    }
  }
  absl::StatusOr<hogwild::TrainResult> result = Run(&(*stop)->stop_requested(), cluster);
  if (!result.ok()) return ReportFailure(result.status(), cluster, several);
  const int signo = JobSignal((*stop)->signal(), cluster, several);
  if (several && cluster->rank() != 0) {
    // A stopped job ends with the signal's status on every rank, as one process does.
    return hogwild::CheckedExitCode(signo != 0 ? 128 + signo : 0);
  }
  return ReportResult(*result, signo);
}

}  // namespace

int main(int argc, char** argv) { return hogwild::EndCommand(Main(argc, argv)); }
