#include "trainer/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/optimizer.h"
#include "kernels/optimizer_name.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "sync/process_group.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_state.h"
#include "trainer/checkpoint/step_boundary.h"
#include "trainer/eval_schedule.h"
#include "trainer/finite_check.h"
#include "trainer/gpu_runtime.h"
#include "trainer/memory_estimate.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/eval_runner.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/metrics/training_metrics.h"
#include "trainer/optimizer_options.h"
#include "trainer/rank_gpus.h"
#include "trainer/weight_ema.h"
#include "trainer/worker.h"
#include "trainer/worker_group.h"

namespace hogwild {
namespace {

// The evaluator's queue of parameter snapshots (trainer/metrics/eval_runner.h): up to this many
// bytes (an MLP's snapshot is ~1 MB: 16 of them; a ResNet-sized model's a few), and at most
// kMaxQueuedEvals, which already absorbs a long run of slow evaluations.
constexpr int64_t kEvalQueueBytes = int64_t{256} << 20;
constexpr int64_t kMaxQueuedEvals = 16;

// Worker w runs on result[w]: consecutive workers share a GPU. Empty for CPU workers.
std::vector<DeviceSpec> WorkerDevices(const TrainerOptions& options) {
  std::vector<DeviceSpec> devices;
  if (!options.devices[0].is_gpu()) return devices;
  for (const DeviceSpec& d : options.devices) {
    for (int k = 0; k < options.workers_per_device; ++k) devices.push_back(d);
  }
  return devices;
}

// Global steps per epoch: one global batch per step where the modes split a global batch (sync),
// every worker's batches where each has its own shard (async, ssp). Turns an evaluation period in
// epochs into steps.
int64_t StepsPerEpoch(const InputPipeline& pipeline, Mode mode, int num_workers) {
  if (SplitsGlobalBatch(mode)) return pipeline.plan().StepsPerEpoch(0);
  int64_t steps = 0;
  for (int w = 0; w < num_workers; ++w) {
    steps += pipeline.plan().StepsPerEpoch(pipeline.plan_worker(w));
  }
  return steps;
}

// A rank of a job of several processes: its workers' GPUs become its own block of the host's
// (trainer/rank_gpus.h); `devices` [W] is rewritten in place.
absl::Status MapRankGpus(const Cluster& cluster, const GpuRuntime& gpu,
                         std::vector<DeviceSpec>& devices) {
  HOGWILD_ASSIGN_OR_RETURN(const int visible, gpu.DeviceCount());
  std::vector<int> listed;
  for (const DeviceSpec& d : devices) {
    if (std::find(listed.begin(), listed.end(), d.index) == listed.end()) listed.push_back(d.index);
  }
  const RankHost host{.local_rank = cluster.local_rank(),
                      .local_ranks = cluster.num_local_ranks(),
                      .visible_gpus = visible,
                      .visible_gpus_restricted = std::getenv("CUDA_VISIBLE_DEVICES") != nullptr};
  HOGWILD_ASSIGN_OR_RETURN(const std::vector<int> mapped, RankGpus(listed, host));
  for (DeviceSpec& d : devices) {
    d.index = mapped[std::find(listed.begin(), listed.end(), d.index) - listed.begin()];
  }
  return absl::OkStatus();
}

// The part of CheckClusterOptions that needs the training set's size.
absl::Status CheckMultiProcessData(const TrainerOptions& options, int64_t train_examples,
                                   int num_ranks) {
  const int64_t total_workers = static_cast<int64_t>(num_ranks) * WorkerCount(options);
  const int64_t largest_shard = (train_examples + total_workers - 1) / total_workers;
  if (options.mode == Mode::kAsync && options.batch_size > largest_shard) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::batch_size=%d is larger than a worker's shard (%d of %d examples over "
        "%d ranks x %d worker%s)",
        options.batch_size, largest_shard, train_examples, num_ranks, WorkerCount(options),
        WorkerCount(options) == 1 ? "" : "s"));
  }
  return absl::OkStatus();
}

// CheckClusterOptions' checks (the public function is outside the anonymous namespace).
absl::Status ClusterOptionsStatus(const TrainerOptions& options, int num_ranks) {
  HOGWILD_RETURN_IF_ERROR(CheckSupported(WorkloadKind::kDense, options.mode, Substrate::kProcesses,
                                         "TrainerOptions::mode"));
  // Sync on GPUs runs across processes (NcclTowerAverage over a ProcessGroup); async does not.
  if (options.devices[0].is_gpu() && options.mode != Mode::kSync) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::devices=%s: async GPU workers do not run across processes yet (%d "
        "ranks); use sync mode, cpu devices, or one process",
        DevicesToString(options.devices), num_ranks));
  }
  // Sync across processes (mpi/mpi_tower_average.h) applies the one-process update
  // (sync/sliced_update.h): the whole recipe. Async across processes (mpi/sharded_hogwild.h)
  // pushes SGD/momentum updates only; what it would ignore or get wrong is refused by name (the
  // header says why).
  const auto not_across = [num_ranks](const std::string& field) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::%s is not supported across processes in async mode yet (%d ranks); "
        "leave it out, use mode sync, or use one process",
        field, num_ranks));
  };
  if (options.mode == Mode::kAsync) {
    if (!options.sgd.is_sgd_momentum()) {
      return not_across(absl::StrCat("sgd.optimizer=", OptimizerName(options.sgd.optimizer)));
    }
    if (options.sgd.shared_optimizer_state) return not_across("sgd.shared_optimizer_state");
    if (options.sgd.clip_global_norm != 0.0f) return not_across("sgd.clip_global_norm");
    if (options.ema_decay != 0.0f) return not_across("ema_decay");
    if (HasBatchNorm(options.model)) return not_across("model.name=" + options.model.name);
    if (!options.weight_decay_biases) return not_across("weight_decay_biases=false");
    if (options.lr.scaling != LrSchedule::Scaling::kNone) return not_across("lr.scaling");
    if (options.sgd.delay_adaptive_lr) return not_across("sgd.delay_adaptive_lr");
    if (options.sgd.max_delay != 0) return not_across("sgd.max_delay");
  }
  if (options.exchange_every < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("TrainerOptions::exchange_every=%d is out of range; it must be >= 1",
                        options.exchange_every));
  }
  if (options.mode == Mode::kSync && options.batch_size < num_ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::batch_size=%d is smaller than the %d ranks: in sync mode the global "
        "batch is split over the ranks, and a rank without examples would only wait; use a "
        "global batch of at least %d or fewer ranks",
        options.batch_size, num_ranks, num_ranks));
  }
  return absl::OkStatus();
}

// Appends where the last good checkpoint is to a failed run's error.
absl::Status WithLastCheckpoint(const absl::Status& status, const TrainerOptions& options,
                                int64_t last_step) {
  if (options.checkpoint_dir.empty()) return status;
  return absl::Status(
      status.code(),
      last_step >= 0
          ? absl::StrFormat("%s; the last good checkpoint (global step %d) is kept in %s: resume "
                            "from it with --resume",
                            status.message(), last_step, options.checkpoint_dir)
          : absl::StrFormat("%s; no checkpoint was written", status.message()));
}

// The state a run ends with: its parameters ([P]), their moving average ([P] or empty) and the
// evaluations of both on the test set (none without one).
struct FinalState {
  std::vector<float> params;
  std::vector<float> ema_params;
  std::optional<EvalResult> eval;
  std::optional<EvalResult> ema_eval;
};

// Reads and evaluates the final state; the divergence error (trainer/finite_check.h) when a
// parameter, an EMA value or a test loss is not finite.
absl::StatusOr<FinalState> CheckFinalState(UpdatePolicy& policy, const WeightEma* ema,
                                           Evaluator* evaluator, const LrSchedule& lr) {
  const int64_t step = static_cast<int64_t>(policy.global_step());
  const double rate = lr.At(step);
  FinalState state;
  state.params.resize(static_cast<size_t>(policy.num_params()));
  HOGWILD_RETURN_IF_ERROR(policy.ReadParams(absl::MakeSpan(state.params)));
  HOGWILD_RETURN_IF_ERROR(CheckFinite(state.params, "parameter", step, rate));
  if (ema != nullptr) {
    state.ema_params.resize(state.params.size());
    ema->Read(absl::MakeSpan(state.ema_params));
    HOGWILD_RETURN_IF_ERROR(CheckFinite(state.ema_params, "EMA parameter", step, rate));
  }
  if (evaluator == nullptr) return state;
  auto evaluate = [&](const std::vector<float>& params,
                      const char* name) -> absl::StatusOr<EvalResult> {
    HOGWILD_ASSIGN_OR_RETURN(EvalResult eval, evaluator->Evaluate(params));
    // Finite parameters can still be large enough that the outputs overflow.
    if (!std::isfinite(eval.loss)) {
      return DivergedError(absl::StrFormat("the %s is %s", name, FormatNonFinite(eval.loss)), step,
                           rate);
    }
    return eval;
  };
  HOGWILD_ASSIGN_OR_RETURN(state.eval, evaluate(state.params, "final test loss"));
  if (ema != nullptr) {
    HOGWILD_ASSIGN_OR_RETURN(state.ema_eval, evaluate(state.ema_params, "final EMA test loss"));
  }
  return state;
}

// The checkpoint directory's part of CheckOutputs().
absl::Status CheckCheckpointDir(const TrainerOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string& dir = options.checkpoint_dir;
  if (dir.empty()) return absl::OkStatus();
  if (const absl::Status writable = CheckCheckpointDirWritable(dir); !writable.ok()) {
    return absl::Status(writable.code(),
                        absl::StrCat("TrainerOptions::checkpoint_dir=", writable.message()));
  }
  const std::string path = CheckpointPath(dir);
  // Saving renames a new file over this path: a directory (or other non-file) there would fail
  // the first save, after the training it was meant to keep.
  if (fs::exists(fs::symlink_status(path, ec)) && !fs::is_regular_file(fs::status(path, ec))) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "TrainerOptions::checkpoint_dir=%s: %s is not a regular file, so no checkpoint could "
        "be saved; remove it or use another TrainerOptions::checkpoint_dir",
        dir, path));
  }
  if (options.resume || options.overwrite_checkpoint) return absl::OkStatus();
  if (!fs::exists(fs::symlink_status(path, ec))) return absl::OkStatus();
  const absl::StatusOr<Checkpoint> existing = ReadCheckpointFile(path);
  if (existing.ok()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "TrainerOptions::checkpoint_dir=%s already holds a checkpoint at global step %d (epoch "
        "%d); use TrainerOptions::resume to continue from it, or "
        "TrainerOptions::overwrite_checkpoint to start over and replace it",
        dir, existing->global_step, existing->epoch));
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "TrainerOptions::checkpoint_dir=%s already holds a damaged checkpoint (%s); use "
      "TrainerOptions::overwrite_checkpoint to start over and replace it, or another "
      "TrainerOptions::checkpoint_dir",
      dir, existing.status().message()));
}

// The log's part of CheckOutputs(), after the checkpoint directory exists.
absl::Status CheckLogPath(const TrainerOptions& options) {
  if (options.log_path.empty()) return absl::OkStatus();
  // The log is opened after the data is loaded: a path that cannot be a file fails here.
  HOGWILD_RETURN_IF_ERROR(CheckOutputFilePath("TrainerOptions::log_path", options.log_path));
  if (options.overwrite_log) return absl::OkStatus();
  if (const absl::Status free =
          ConvergenceLog::CheckWouldNotReplace(options.log_path, "TrainerOptions::overwrite_log");
      !free.ok()) {
    return absl::Status(free.code(), absl::StrCat("TrainerOptions::log_path=", free.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckClusterOptions(const TrainerOptions& options, int num_ranks) {
  if (num_ranks <= 1) return absl::OkStatus();
  return ClusterOptionsStatus(options, num_ranks);
}

absl::Status CheckOutputs(const TrainerOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The checkpoint would be renamed over the log, or the log written over the checkpoint.
  const RunFile files[] = {
      {.option = "TrainerOptions::log_path", .value = options.log_path, .output = true},
      {.option = "TrainerOptions::checkpoint_dir",
       .value = options.checkpoint_dir,
       .file = options.checkpoint_dir.empty() ? "" : CheckpointPath(options.checkpoint_dir),
       .output = true}};
  HOGWILD_RETURN_IF_ERROR(CheckDistinctFiles(files));
  // The folders CheckCheckpointDir creates (checkpoint_dir and its missing parents, deepest
  // first): removed again when a check refuses the run, so a refused run leaves nothing behind.
  std::vector<fs::path> created;
  if (!options.checkpoint_dir.empty()) {
    // (symlink_status reports a missing path as not_found and sets its error code: ENOENT.)
    std::error_code missing;
    for (fs::path p = fs::absolute(options.checkpoint_dir, ec).lexically_normal();
         !ec && !p.empty() && !fs::exists(fs::symlink_status(p, missing)); p = p.parent_path()) {
      if (p.filename().empty()) p = p.parent_path();  // "dir/" names dir
      created.push_back(p);
    }
  }
  absl::Status status = CheckCheckpointDir(options);
  if (status.ok()) status = CheckLogPath(options);
  if (!status.ok()) {
    // remove() deletes only an empty folder: never anything another process put there since.
    for (const fs::path& p : created) fs::remove(p, ec);
  }
  return status;
}

namespace {

// Where this process's workers sit in the job: alone (no cluster: rank 0 of 1), or rank `rank`
// of a job of several processes, whose workers are the job's [rank·W, (rank+1)·W).
struct RankInJob {
  Cluster* cluster = nullptr;  // null: one process
  int num_ranks = 1;
  int rank = 0;
};

RankInJob RankOf(const TrainerOptions& options) {
  Cluster* const cluster =
      options.cluster != nullptr && options.cluster->num_ranks() > 1 ? options.cluster : nullptr;
  if (cluster == nullptr) return RankInJob{};
  return RankInJob{.cluster = cluster, .num_ranks = cluster->num_ranks(), .rank = cluster->rank()};
}

// Async across processes: the ranks checkpoint one cut of the job (Cluster::CheckpointCut).
bool TakesJobCut(const TrainerOptions& options, const RankInJob& job) {
  return job.cluster != nullptr && options.mode == Mode::kAsync;
}

// What PrepareRun makes before the ranks first communicate.
struct PreparedRun {
  // The options in effect: the worker count resolved, the log on rank 0 only, the optimizer's
  // no-decay and moving-statistics ranges taken from the model.
  TrainerOptions options;
  // worker_devices[w]: the GPU of worker w, through `gpu`. Empty (and gpu null): CPU workers.
  std::vector<DeviceSpec> worker_devices;
  const GpuRuntime* gpu = nullptr;
  std::unique_ptr<Model> model;
  std::unique_ptr<ParameterStore> store;  // holds the initial parameters
  CheckpointSignature signature;
  std::optional<Checkpoint> resumed;  // the checkpoint to resume from, its signature checked
};

// Sets run.worker_devices and run.gpu; a rank of a job takes its own block of the host's GPUs.
absl::Status PrepareGpus(const RankInJob& job, PreparedRun& run) {
  run.worker_devices = WorkerDevices(run.options);
  if (run.worker_devices.empty()) return absl::OkStatus();
  // GPU workers need the GPU runtime (trainer/gpu_runtime.h): say so before anything else.
  const absl::StatusOr<const GpuRuntime*> runtime = GpuRuntimeOrError();
  if (!runtime.ok()) {
    return absl::Status(runtime.status().code(), absl::StrCat("TrainerOptions::devices=",
                                                              DevicesToString(run.options.devices),
                                                              ": ", runtime.status().message()));
  }
  run.gpu = *runtime;
  if (job.cluster != nullptr) {
    HOGWILD_RETURN_IF_ERROR(MapRankGpus(*job.cluster, *run.gpu, run.worker_devices));
  }
  return absl::OkStatus();
}

// The signature this run's checkpoints carry and a resumed checkpoint must match.
CheckpointSignature RunSignature(const TrainerOptions& options, const Model& model, int num_ranks,
                                 const Dataset& train) {
  CheckpointSignature signature;
  // Only checkpoints need the signature, and its dataset fingerprint reads the whole train set.
  if (!options.checkpoint_dir.empty()) {
    signature = MakeSignature(model, options.mode, options.num_workers, options.batch_size,
                              options.seed, train);
  }
  signature.optimizer = OptimizerName(options.sgd.optimizer);
  signature.num_ranks = num_ranks;
  // The mode's own option, in its mode only (trainer/checkpoint/checkpoint.h).
  if (options.mode == Mode::kSsp) signature.staleness_bound = options.staleness_bound;
  if (options.mode == Mode::kBackup) signature.backup_workers = options.backup_workers;
  if (HasLocalRounds(options.mode)) {
    signature.average_every = options.average_every;
    signature.outer = options.outer;
  }
  if (options.mode == Mode::kLocalSgd) signature.streaming = options.streaming;
  if (options.mode == Mode::kAsyncLocalSgd) {
    signature.delayed_nesterov = options.delayed_nesterov;
    signature.dynamic_local_updates = options.dynamic_local_updates;
  }
  signature.constants = OptimizerConstants{
      .momentum = options.sgd.momentum,
      .beta1 = options.sgd.beta1,
      .beta2 = options.sgd.beta2,
      .alpha = options.sgd.alpha,
      // The value in effect (0 means the default).
      .eps = options.sgd.eps != 0.0f ? options.sgd.eps : DefaultEps(options.sgd.optimizer),
      .weight_decay = options.sgd.weight_decay,
      .ema_decay = options.ema_decay};
  return signature;
}

// Everything that can refuse the run before the ranks first communicate: the checks, the
// devices, the model with its initial parameters, the checkpoint to resume from. Fills `run`,
// whose options hold the requested ones with the worker count resolved.
absl::Status PrepareRun(const TrainerOptions& requested, const Dataset& train, const Dataset& test,
                        const RankInJob& job, PreparedRun& run) {
  TrainerOptions& options = run.options;
  HOGWILD_RETURN_IF_ERROR(ValidateOptionsForDataset(requested, train.size()));
  if (job.cluster != nullptr) {
    // Before CheckOutputs, which creates the checkpoint directory.
    HOGWILD_RETURN_IF_ERROR(CheckClusterOptions(options, job.num_ranks));
    HOGWILD_RETURN_IF_ERROR(CheckMultiProcessData(options, train.size(), job.num_ranks));
  }
  HOGWILD_RETURN_IF_ERROR(CheckOutputs(requested));
  HOGWILD_RETURN_IF_ERROR(PrepareGpus(job, run));
  ModelSpec spec = options.model;
  spec.input_shape = train.example_shape;
  spec.num_classes = train.num_classes;
  HOGWILD_ASSIGN_OR_RETURN(run.model, Model::Create(spec));
  // Refuse a run that cannot fit before allocating any of it (host memory; CPU workers).
  if (run.worker_devices.empty()) {
    HOGWILD_RETURN_IF_ERROR(
        CheckMemoryFits(EstimateTrainingMemory(options, *run.model, train.size(), test.size() > 0),
                        AvailableMemoryBytes(WorkerCount(options) + (test.size() > 0 ? 1 : 0))));
  }
  options.sgd = ModelSgdOptions(options.sgd, options.weight_decay_biases, run.model->BiasRanges(),
                                run.model->StatRanges());
  HOGWILD_ASSIGN_OR_RETURN(run.store, ParameterStore::Create(run.model->num_params()));
  run.model->InitParams(options.seed, run.store->unsafe_values());
  run.signature = RunSignature(options, *run.model, job.num_ranks, train);
  if (options.resume) {
    // Every rank reads the job's checkpoint (one file system, or the same copy on each host).
    HOGWILD_ASSIGN_OR_RETURN(run.resumed, ReadLatestCheckpoint(options.checkpoint_dir));
  }
  if (run.resumed) {
    HOGWILD_RETURN_IF_ERROR(CheckSignature(run.signature, run.resumed->signature,
                                           CheckpointPath(options.checkpoint_dir)));
  }
  return absl::OkStatus();
}

// The update policy of the run's mode over run.store, placed on its workers' devices (and, in a
// job of several processes, on the job's).
absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreatePolicy(const PreparedRun& run,
                                                           const RankInJob& job) {
  const TrainerOptions& options = run.options;
  Cluster* const cluster = job.cluster;
  PolicyPlacement placement{.num_cpu_workers = options.num_workers,
                            .force_host_master = options.force_host_master};
  for (const DeviceSpec& d : run.worker_devices) placement.worker_gpus.push_back(d.index);
  std::unique_ptr<UpdatePolicy> policy;
  if (cluster != nullptr) {
    HOGWILD_ASSIGN_OR_RETURN(
        policy, cluster->CreateUpdatePolicy(options.mode, run.store.get(), options.num_workers,
                                            options.sgd, options.exchange_every));
  } else if (run.worker_devices.empty()) {
    // The one streaming range ValidateOptions cannot check without the model: F <= P.
    HOGWILD_RETURN_IF_ERROR(CheckStreamingOptions(options.streaming, options.average_every,
                                                  run.store->size(), "TrainerOptions::streaming."));
    HOGWILD_ASSIGN_OR_RETURN(policy, CreateUpdatePolicy(options.mode, run.store.get(), placement,
                                                        options.sgd, ModeOptionsOf(options)));
  } else {
    // Across processes (sync; CheckClusterOptions): collective, NCCL over every rank's GPUs.
    ProcessGroup process_group{.rank = job.rank, .num_ranks = job.num_ranks};
    if (cluster != nullptr) {
      process_group.broadcast_from_rank0 = [cluster](absl::Span<char> bytes) {
        return cluster->BroadcastFromRankZero(bytes);
      };
      placement.job = &process_group;
    }
    HOGWILD_ASSIGN_OR_RETURN(
        policy, run.gpu->CreateUpdatePolicy(options.mode, run.store.get(), placement, options.sgd));
  }
  return policy;
}

// Restores run.resumed's parameters, global step and optimizer state into `policy` (this rank's
// share of them), before any worker starts.
absl::Status RestoreResumed(const PreparedRun& run, const RankInJob& job, const Dataset& train,
                            UpdatePolicy& policy) {
  const TrainerOptions& options = run.options;
  const Checkpoint& resumed = *run.resumed;
  if (!resumed.signature.dataset) {
    // The migration from format version 1 (trainer/checkpoint/checkpoint.h): no dataset to
    // compare; say so once, and the next save records it.
    absl::FPrintF(stderr,
                  "hogwild: warning: %s (format version %d) does not record its dataset; "
                  "resuming without checking that it was trained on %s\n",
                  CheckpointPath(options.checkpoint_dir), resumed.format_version,
                  train.name.empty() ? "this training set" : train.name);
  }
  absl::Status restored;
  if (TakesJobCut(options, job) &&
      resumed.optimizer_state.size() == static_cast<size_t>(job.num_ranks) * options.num_workers) {
    // An async job's checkpoint holds every worker's momentum, rank-major: this rank's slice.
    Checkpoint mine = resumed;
    const auto first =
        resumed.optimizer_state.begin() + static_cast<ptrdiff_t>(job.rank) * options.num_workers;
    mine.optimizer_state.assign(first, first + options.num_workers);
    restored = RestoreState(mine, policy);
  } else {
    restored = RestoreState(resumed, policy);
  }
  if (!restored.ok()) {
    // The policy's refusal does not know the file: name it, as the checks above do.
    return absl::Status(restored.code(), absl::StrCat(CheckpointPath(options.checkpoint_dir),
                                                      ": ", restored.message()));
  }
  if (resumed.ema.empty() != (options.ema_decay == 0.0f)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: cannot resume: the weight EMA differs: the checkpoint was written %s an EMA, this "
        "run %s; resume with the checkpoint's --ema_decay or use another --checkpoint_dir",
        CheckpointPath(options.checkpoint_dir), resumed.ema.empty() ? "without" : "with",
        options.ema_decay == 0.0f ? "has none" : "has one"));
  }
  return absl::OkStatus();
}

// This rank's workers' data positions ([W], the index of each one's next batch): its slice of
// the job's (rank-major) list in the resumed checkpoint; all 0 in a fresh run.
std::vector<int64_t> StartSteps(const TrainerOptions& options, const RankInJob& job,
                                const std::optional<Checkpoint>& resumed) {
  std::vector<int64_t> start_step(options.num_workers, 0);
  if (resumed) {
    const auto first =
        resumed->next_step.begin() + static_cast<ptrdiff_t>(job.rank) * options.num_workers;
    start_step.assign(first, first + options.num_workers);
  }
  return start_step;
}

PipelineOptions RunPipelineOptions(const TrainerOptions& options, const RankInJob& job,
                                   const std::optional<Checkpoint>& resumed,
                                   const std::vector<int64_t>& start_step) {
  PipelineOptions pipeline_options{.mode = options.mode,
                                   .num_workers = options.num_workers,
                                   .batch_size = options.batch_size,
                                   .epochs = options.epochs,
                                   .seed = options.seed,
                                   .drop_last = options.drop_last,
                                   .prefetch = options.prefetch,
                                   .first_worker = job.rank * options.num_workers,
                                   .total_workers = job.num_ranks * options.num_workers};
  if (resumed) pipeline_options.start_step = start_step;
  return pipeline_options;
}

// Epochs trained before this run (the progress line counts from there): the checkpoint's share
// of every worker's batches; 0 in a fresh run. Refuses a checkpoint with nothing left to train.
absl::StatusOr<double> StartEpoch(const TrainerOptions& options, const RankInJob& job,
                                  const std::optional<Checkpoint>& resumed,
                                  const std::vector<int64_t>& start_step,
                                  const InputPipeline& pipeline) {
  double start_epoch = 0.0;
  if (!resumed) return start_epoch;
  bool left = false;
  int64_t done = 0, per_epoch = 0;
  for (int w = 0; w < options.num_workers; ++w) {
    left |= start_step[w] < pipeline.plan().StepsPerEpoch(pipeline.plan_worker(w)) * options.epochs;
    done += start_step[w];
    per_epoch += pipeline.plan().StepsPerEpoch(pipeline.plan_worker(w));
  }
  if (per_epoch > 0) start_epoch = static_cast<double>(done) / static_cast<double>(per_epoch);
  if (TakesJobCut(options, job)) {
    // Async ranks stop at different positions: the job goes on while any worker of any rank
    // has data left (a rank without any joins the others' checkpoints), the same on every rank.
    left = false;
    for (size_t j = 0; j < resumed->next_step.size(); ++j) {
      left |= resumed->next_step[j] <
              pipeline.plan().StepsPerEpoch(static_cast<int>(j)) * options.epochs;
    }
  }
  if (!left) {
    // The checkpoint's position in epochs, as the progress line counts it (2.55: mid-epoch).
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is at epoch %.2f (global step %d), at or past the end of a run of "
        "TrainerOptions::epochs=%d: nothing is left to train; TrainerOptions::epochs must be "
        "larger (at least %d) to continue training it",
        CheckpointPath(options.checkpoint_dir), start_epoch, resumed->global_step, options.epochs,
        static_cast<int64_t>(std::floor(start_epoch)) + 1));
  }
  return start_epoch;
}

// The weights' moving average (null: none). It starts from the parameters training starts from
// (TensorFlow's shadow variables start as the variables' initial values).
absl::StatusOr<std::unique_ptr<WeightEma>> StartEma(const TrainerOptions& options,
                                                    const UpdatePolicy& policy,
                                                    const std::optional<Checkpoint>& resumed) {
  if (options.ema_decay == 0.0f) return nullptr;
  std::vector<float> start(static_cast<size_t>(policy.num_params()));
  HOGWILD_RETURN_IF_ERROR(policy.ReadParams(absl::MakeSpan(start)));
  if (resumed) start = resumed->ema;  // checked by RestoreResumed to be there
  return std::make_unique<WeightEma>(start, options.ema_decay, options.ema_num_updates);
}

// The periodic evaluations (WorkerContext::eval_runner, eval_schedule); both null: none.
struct PeriodicEvals {
  std::unique_ptr<EvalRunner> runner;
  std::unique_ptr<EvalSchedule> schedule;
};

// Periodic evaluations on rank 0 only (every rank's parameters are the same in sync mode).
PeriodicEvals StartPeriodicEvals(const TrainerOptions& options, const RankInJob& job,
                                 Evaluator* evaluator, TrainingMetrics& metrics,
                                 const InputPipeline& pipeline, const UpdatePolicy& policy,
                                 bool with_ema) {
  const int64_t eval_every_steps =
      options.eval_every_epochs > 0
          ? std::max<int64_t>(
                1, std::llround(options.eval_every_epochs *
                                StepsPerEpoch(pipeline, options.mode, options.num_workers)))
          : options.eval_every_steps;
  PeriodicEvals evals;
  if (job.rank != 0 || evaluator == nullptr || eval_every_steps <= 0) return evals;
  // Snapshots may queue up to kEvalQueueBytes (at least one), so an evaluation slower than
  // its period for a while holds no worker up (trainer/metrics/eval_runner.h).
  const int64_t snapshot_bytes = std::max<int64_t>(
      1, policy.num_params() * static_cast<int64_t>(sizeof(float)) * (with_ema ? 2 : 1));
  const int max_queued =
      static_cast<int>(std::clamp<int64_t>(kEvalQueueBytes / snapshot_bytes, 1, kMaxQueuedEvals));
  evals.runner =
      std::make_unique<EvalRunner>(evaluator, &metrics, options.eval_in_background, max_queued);
  // A resumed run evaluates at the same global steps as an uninterrupted one.
  evals.schedule =
      std::make_unique<EvalSchedule>(eval_every_steps, static_cast<int64_t>(policy.global_step()));
  return evals;
}

// When the run checkpoints and stops between steps, and how the ranks of a job agree on it.
StepBoundary::Options RunBoundaryOptions(const TrainerOptions& options, const RankInJob& job,
                                         const UpdatePolicy& policy,
                                         const std::vector<int64_t>& start_step) {
  Cluster* const cluster = job.cluster;
  StepBoundary::Options boundary_options{
      .mode = options.mode,
      .num_workers = options.num_workers,
      .checkpoint_dir = options.checkpoint_dir,
      .every_steps = options.checkpoint_every_steps,
      .every_seconds = options.checkpoint_every_seconds,
      .stop_requested = options.stop_requested,
      .start_global_step = static_cast<int64_t>(policy.global_step()),
      .start_next_step = start_step};
  // Where the cuts of ssp, backup and local_sgd fall (trainer/checkpoint/step_boundary.h).
  if (options.mode == Mode::kLocalSgd) boundary_options.cut_period = options.average_every;
  if (options.mode == Mode::kSsp) {
    boundary_options.blocked_in_policy = [&policy] { return policy.num_blocked_workers(); };
  }
  const bool async_cut = TakesJobCut(options, job);
  if (async_cut && !options.checkpoint_dir.empty()) {
    // Async across processes: the ranks decide in polled rounds, take one cut, rank 0 writes.
    boundary_options.test_agreement = [cluster] { return cluster->TestOrOverRanks(); };
    boundary_options.start_agreement = [cluster](uint32_t requests) {
      return cluster->StartOrOverRanks(requests);
    };
    boundary_options.finish_agreement = [cluster] { return cluster->FinishOrOverRanks(); };
    boundary_options.writes_checkpoints = job.rank == 0;
  } else if (cluster != nullptr && !async_cut) {
    // Sync across processes (CheckClusterOptions): the ranks decide together, rank 0 writes.
    boundary_options.start_agreement = [cluster](uint32_t requests) {
      return cluster->StartOrOverRanks(requests);
    };
    boundary_options.finish_agreement = [cluster] { return cluster->FinishOrOverRanks(); };
    boundary_options.writes_checkpoints = job.rank == 0;
  }
  return boundary_options;
}

// The run's checkpoint at a step boundary (StepBoundary's snapshot): `next_step` [W] is the
// index of each of this rank's workers' next batch.
absl::StatusOr<Checkpoint> CaptureCheckpoint(const TrainerOptions& options, const RankInJob& job,
                                             const CheckpointSignature& signature,
                                             UpdatePolicy& policy, const InputPipeline& pipeline,
                                             const WeightEma* ema,
                                             const std::vector<int64_t>& next_step) {
  if (TakesJobCut(options, job)) {
    // The job's cut: every rank now holds the global parameters; rank 0 has every
    // worker's position and momentum (the other ranks' Checkpoint is not written).
    HOGWILD_ASSIGN_OR_RETURN(Cluster::JobCut cut, job.cluster->CheckpointCut(policy, next_step));
    if (job.rank != 0) {
      cut.next_step.assign(static_cast<size_t>(job.num_ranks) * next_step.size(), 0);
    }
    absl::StatusOr<Checkpoint> c = CaptureState(signature, policy, pipeline.plan(), cut.next_step);
    if (c.ok()) {
      c->global_step = cut.global_step;
      c->optimizer_state = std::move(cut.momentum);
    }
    return c;
  }
  // The job's data positions, rank-major. Only sync jobs of several processes write
  // checkpoints, and there every worker of every rank is at the same step.
  std::vector<int64_t> job_next_step;
  for (int r = 0; r < job.num_ranks; ++r) {
    job_next_step.insert(job_next_step.end(), next_step.begin(), next_step.end());
  }
  absl::StatusOr<Checkpoint> c = CaptureState(signature, policy, pipeline.plan(), job_next_step);
  // Every worker is parked after its last update and its EMA update: a consistent cut.
  if (c.ok() && ema != nullptr) {
    c->ema.resize(static_cast<size_t>(policy.num_params()));
    ema->Read(absl::MakeSpan(c->ema));
  }
  return c;
}

// Runs the workers until their data ends, an orderly stop or an error, reporting progress
// meanwhile; returns the first worker's error, else the periodic evaluations' (an orderly stop is
// OK). The step boundary's start agreement has been made.
absl::Status RunWorkers(const TrainerOptions& options, const WorkerContext& context,
                        double start_epoch, const std::optional<Checkpoint>& resumed) {
  WorkerGroup workers([&] {
    context.policy->Cancel();
    context.pipeline->Cancel();
    context.boundary->Cancel();
    context.delay_gate->Cancel();
    // An orderly stop (the boundary's cancel releases the sync peers) lets the evaluation in
    // flight finish and log its row, as an inline one would have; an error cancels it.
    if (context.eval_runner != nullptr && !context.boundary->stopped()) {
      context.eval_runner->Cancel();
    }
  });
  if (options.progress && resumed) {
    options.progress({.metrics = context.metrics->Get(),
                      .epochs = options.epochs,
                      .start_epoch = start_epoch,
                      .resumed_from_step = resumed->global_step});
  }
  workers.Start(options.num_workers, [&](int w) { return RunWorker(w, context); });
  workers.Wait(options.progress ? options.progress_period : absl::Seconds(1), [&] {
    if (options.progress) {
      options.progress({.metrics = context.metrics->Get(),
                        .epochs = options.epochs,
                        .start_epoch = start_epoch});
    }
  });
  absl::Status status = workers.first_error();
  if (context.eval_runner != nullptr) {
    // The evaluation in flight ends (and writes its row) before the last rows and the final
    // evaluation, which uses the same Evaluator. Its error is the run's unless a worker's came
    // first (a cancelled evaluation is the consequence of that error, not a cause).
    const absl::Status evaluated = context.eval_runner->Finish();
    if (!evaluated.ok() && evaluated.code() != absl::StatusCode::kCancelled &&
        (status.ok() || status.code() == absl::StatusCode::kCancelled)) {
      status = evaluated;
    }
  }
  // An orderly stop releases the sync peers by cancellation: their kCancelled is not an error.
  if (context.boundary->stopped() && status.code() == absl::StatusCode::kCancelled) {
    status = absl::OkStatus();
  }
  return status;
}

// The end of a run whose workers returned `status`: the final state checked and checkpointed,
// every rank's parameters made the same, the last metrics windows flushed.
absl::StatusOr<FinalState> FinishRun(absl::Status status, const RankInJob& job,
                                     const WorkerContext& context, Evaluator* evaluator) {
  UpdatePolicy& policy = *context.policy;
  StepBoundary& boundary = *context.boundary;
  if (status.ok()) status = boundary.FinishAgreement();
  // The final state, checked before it is saved or reported: a divergence on the last step (the
  // guard in the worker checks a step's loss and gradient, not the parameters the update makes)
  // leaves parameters that are not finite, or so large that the model's outputs are not.
  FinalState final_state;
  auto check_final = [&] {
    absl::StatusOr<FinalState> checked =
        CheckFinalState(policy, context.ema, evaluator, context.lr);
    if (!checked.ok()) return checked.status();
    final_state = *std::move(checked);
    return absl::OkStatus();
  };
  // One process: before the final checkpoint, so that a diverged state never replaces the last
  // good one. A job of several processes ends with the same parameters on every rank only after
  // FinishTraining, and its ranks must agree to write, so it checks them after (the write itself
  // still refuses non-finite parameters).
  if (status.ok() && job.cluster == nullptr) status = check_final();
  if (status.ok()) status = boundary.WriteFinal();
  // Every rank ends with the same parameters (async: the last push and pull).
  if (status.ok() && job.cluster != nullptr) status = job.cluster->FinishTraining(policy);
  if (status.ok() && job.cluster != nullptr) status = check_final();
  if (status.ok()) {
    status =
        context.metrics->FlushWindows(context.lr.At(static_cast<int64_t>(policy.global_step())));
  }
  HOGWILD_RETURN_IF_ERROR(status);
  return final_state;
}

// The result of a finished run from its metrics (`snapshot`) and final parameters; without the
// final evaluation (RecordFinalEval).
absl::StatusOr<TrainResult> RunResult(const TrainerOptions& options, const RankInJob& job,
                                      const WorkerContext& context,
                                      const TrainingMetrics::Snapshot& snapshot,
                                      const std::optional<Checkpoint>& resumed,
                                      FinalState& final_state) {
  TrainResult result;
  result.mode = options.mode;
  result.num_workers = options.num_workers;
  result.wall_time_s = snapshot.wall_time_s;
  result.examples = snapshot.examples_seen;
  result.steps = static_cast<int64_t>(context.policy->global_step());
  result.examples_per_s =
      snapshot.wall_time_s > 0 ? snapshot.examples_seen / snapshot.wall_time_s : 0;
  result.staleness_mean = snapshot.staleness_mean;
  result.staleness_max = snapshot.staleness_max;
  result.dropped = context.policy->num_dropped();
  const CommunicationStats communication = context.policy->communication();
  result.exchanges = communication.exchanges;
  result.bytes_per_worker = communication.bytes_per_worker;
  result.staleness_histogram = context.metrics->StalenessHistogram();
  result.params = std::move(final_state.params);
  result.stopped_early = context.boundary->stopped();
  result.num_ranks = job.num_ranks;
  result.examples_all_ranks = result.examples;
  if (job.cluster != nullptr) {
    result.exchange = job.cluster->exchange_stats();
    HOGWILD_ASSIGN_OR_RETURN(result.examples_all_ranks, job.cluster->SumOverRanks(result.examples));
  }
  result.resumed_from_step = resumed ? resumed->global_step : -1;
  result.last_checkpoint_step = context.boundary->last_checkpoint_step();
  result.periodic_evals = snapshot.evals;
  result.evals_in_background = options.eval_in_background;
  result.eval_seconds = snapshot.eval_seconds;
  result.eval_wait_seconds =
      context.eval_runner != nullptr ? context.eval_runner->wait_seconds() : 0.0;
  result.ema_params = std::move(final_state.ema_params);
  return result;
}

// Puts the final evaluations (if any) into `result` and logs them.
absl::Status RecordFinalEval(const FinalState& final_state, const WorkerContext& context,
                             TrainResult& result) {
  if (!final_state.eval) return absl::OkStatus();
  const EvalResult& eval = *final_state.eval;
  const std::optional<EvalResult>& ema_eval = final_state.ema_eval;
  if (ema_eval) {
    result.final_ema_test_loss = ema_eval->loss;
    result.final_ema_test_accuracy = ema_eval->accuracy;
  }
  // A periodic evaluation may already have logged exactly these parameters (unless the last
  // pushes came after it: core/mode.h UpdatesAfterLastStep).
  if (context.metrics->last_eval_step() != result.steps || UpdatesAfterLastStep(result.mode)) {
    HOGWILD_RETURN_IF_ERROR(
        context.metrics->RecordEval(eval, result.steps, context.lr.At(result.steps), ema_eval));
  }
  result.final_test_loss = eval.loss;
  result.final_test_accuracy = eval.accuracy;
  return absl::OkStatus();
}

// The result of a run whose final state is checked: the final evaluation logged, the log
// closed, the last progress report made.
absl::StatusOr<TrainResult> CompleteRun(const TrainerOptions& options, const RankInJob& job,
                                        const WorkerContext& context, ConvergenceLog* log,
                                        double start_epoch,
                                        const std::optional<Checkpoint>& resumed,
                                        FinalState& final_state) {
  const TrainingMetrics::Snapshot snapshot = context.metrics->Get();
  HOGWILD_ASSIGN_OR_RETURN(TrainResult result,
                           RunResult(options, job, context, snapshot, resumed, final_state));
  if (const absl::Status logged = RecordFinalEval(final_state, context, result); !logged.ok()) {
    return WithLastCheckpoint(logged, options, result.last_checkpoint_step);
  }
  if (log != nullptr) {
    // The last rows are on disk only once the log is synced and closed: a run whose log cannot
    // be completed is not a success (trainer/metrics/convergence_log.h).
    const absl::Status closed = log->Close();
    if (!closed.ok()) return WithLastCheckpoint(closed, options, result.last_checkpoint_step);
  }
  if (options.progress) {
    // The training-time snapshot, so the last report agrees with the summary's examples/s.
    ProgressReport last{
        .metrics = snapshot, .epochs = options.epochs, .start_epoch = start_epoch, .final = true};
    last.metrics.last_eval =
        EvalResult{.loss = result.final_test_loss, .accuracy = result.final_test_accuracy};
    options.progress(last);
  }
  return result;
}

absl::StatusOr<TrainResult> TrainUnchecked(const TrainerOptions& requested, const Dataset& train,
                                           const Dataset& test) {
  const RankInJob job = RankOf(requested);
  PreparedRun run{.options = requested};
  run.options.num_workers = WorkerCount(requested);
  if (job.cluster != nullptr && job.rank != 0) run.options.log_path.clear();
  // Everything that can refuse the run before the ranks first communicate: in a job of several
  // processes they agree on the outcome (the lowest failing rank's error, on every rank), so a
  // refusal ends every rank in order instead of leaving peers in a collective.
  absl::Status prepared = PrepareRun(requested, train, test, job, run);
  if (job.cluster != nullptr) prepared = job.cluster->AgreeOnStatus(prepared);
  HOGWILD_RETURN_IF_ERROR(prepared);
  const TrainerOptions& options = run.options;
  const std::optional<Checkpoint>& resumed = run.resumed;
  // The schedule every worker, the log and the evaluations read: base_lr scaled for the global
  // batch once (LrSchedule::scaling), warm-up included in At().
  const LrSchedule lr = ScaleForBatch(options.lr, GlobalBatch(options));
  HOGWILD_ASSIGN_OR_RETURN(const std::unique_ptr<UpdatePolicy> policy, CreatePolicy(run, job));
  if (resumed) HOGWILD_RETURN_IF_ERROR(RestoreResumed(run, job, train, *policy));

  std::unique_ptr<ConvergenceLog> log;
  if (!options.log_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(log, ConvergenceLog::Open(options.log_path));
  }
  // A rank trains on its 1/R of each epoch: its epoch counter counts that share.
  TrainingMetrics metrics(options.num_workers, train.size() / job.num_ranks, log.get(),
                          options.log_every_steps, options.log_row_sink, [&policy] {
                            const CommunicationStats c = policy->communication();
                            return TrainingMetrics::PolicyCounters{
                                .exchanges = c.exchanges,
                                .bytes_per_worker = c.bytes_per_worker,
                                .outer_step_norm = c.last_outer_step_norm,
                                .dropped = policy->num_dropped()};
                          });
  const std::vector<int64_t> start_step = StartSteps(options, job, resumed);
  InputPipeline pipeline(&train, RunPipelineOptions(options, job, resumed, start_step));
  HOGWILD_ASSIGN_OR_RETURN(const double start_epoch,
                           StartEpoch(options, job, resumed, start_step, pipeline));
  CpuBackend eval_backend;
  std::unique_ptr<Evaluator> evaluator;
  if (test.size() > 0) {
    HOGWILD_ASSIGN_OR_RETURN(evaluator, Evaluator::Create(run.model.get(), &test, &eval_backend));
  }
  HOGWILD_ASSIGN_OR_RETURN(const std::unique_ptr<WeightEma> ema,
                           StartEma(options, *policy, resumed));
  const PeriodicEvals evals = StartPeriodicEvals(options, job, evaluator.get(), metrics, pipeline,
                                                 *policy, /*with_ema=*/ema != nullptr);
  const StragglerModel stragglers(options.stragglers, options.seed);
  DelayGate delay_gate(options.stop_requested);
  StepBoundary boundary(
      RunBoundaryOptions(options, job, *policy, start_step),
      [&](const std::vector<int64_t>& next_step) {
        return CaptureCheckpoint(options, job, run.signature, *policy, pipeline, ema.get(),
                                 next_step);
      },
      [&] {
        policy->Cancel();
        pipeline.Cancel();
      });
  const WorkerContext context{
      .model = run.model.get(),
      .policy = policy.get(),
      .pipeline = &pipeline,
      .metrics = &metrics,
      .lr = lr,
      .max_batch = options.batch_size,
      .eval_runner = evals.runner.get(),
      .eval_schedule = evals.schedule.get(),
      // Where the global step runs on without worker 0 (each worker walks its own shard: async,
      // ssp, locked, round_robin), whoever reaches a point takes it; GPU workers and several
      // processes keep to worker 0 (trainer/worker.h).
      .any_worker_evaluates =
          !SplitsGlobalBatch(options.mode) && run.worker_devices.empty() && job.cluster == nullptr,
      .step_hook = options.step_hook,
      .worker_devices = run.worker_devices,
      .boundary = &boundary,
      .stragglers = &stragglers,
      .delay_gate = &delay_gate,
      .ema = ema.get()};

  HOGWILD_RETURN_IF_ERROR(boundary.StartAgreement());
  absl::StatusOr<FinalState> final_state =
      FinishRun(RunWorkers(options, context, start_epoch, resumed), job, context, evaluator.get());
  if (!final_state.ok()) {
    // The last good checkpoint: this run's last, else the one it resumed from.
    int64_t last = boundary.last_checkpoint_step();
    if (last < 0) last = resumed ? resumed->global_step : -1;
    return WithLastCheckpoint(final_state.status(), options, last);
  }
  return CompleteRun(options, job, context, log.get(), start_epoch, resumed, *final_state);
}

}  // namespace

absl::StatusOr<TrainResult> Train(const TrainerOptions& options, const Dataset& train,
                                  const Dataset& test) {
  // An allocation that fails despite the estimate (another process took the memory) is an
  // error status, not std::terminate (workers convert their own exceptions in RunWorker).
  try {
    return TrainUnchecked(options, train, test);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        "out of memory while setting up or finishing the run; use a smaller model, batch or "
        "fewer workers");
  }
}

std::string FormatSummary(const TrainResult& r) {
  std::string summary = absl::StrFormat(
      "mode %s | workers %d | wall time %.2f s | %d examples, %d steps | %.0f examples/s\n"
      "final test accuracy %.2f%% | test loss %.4f | staleness mean %.2f, max %d",
      ModeName(r.mode), r.num_workers, r.wall_time_s, r.examples, r.steps, r.examples_per_s,
      100.0 * r.final_test_accuracy, r.final_test_loss, r.staleness_mean, r.staleness_max);
  if (r.dropped > 0) {
    absl::StrAppendFormat(&summary, " | %d gradients dropped (%s)", r.dropped,
                          r.mode == Mode::kBackup ? "late" : "too stale");
  }
  absl::StrAppend(&summary, FormatExchanges(r.exchanges, r.bytes_per_worker));
  if (r.num_ranks > 1) {
    absl::StrAppendFormat(
        &summary,
        "\nranks %d | %d examples on all ranks | this rank: %d exchanges, %.1f MB moved "
        "(%.0f bytes/exchange) | remote staleness mean %.2f, max %d",
        r.num_ranks, r.examples_all_ranks, r.exchange.exchanges, r.exchange.bytes_moved / 1e6,
        r.exchange.exchanges > 0
            ? static_cast<double>(r.exchange.bytes_moved) / r.exchange.exchanges
            : 0.0,
        r.exchange.remote_staleness_mean, r.exchange.remote_staleness_max);
  }
  if (!r.ema_params.empty()) {
    absl::StrAppendFormat(&summary, "\nEMA weights: test accuracy %.2f%% | test loss %.4f",
                          100.0 * r.final_ema_test_accuracy, r.final_ema_test_loss);
  }
  if (r.periodic_evals > 0 && r.evals_in_background) {
    // They overlapped the training: subtracting them would not give the time without them.
    absl::StrAppendFormat(&summary,
                          "\nperiodic evaluations %d: %.2f s on the evaluator thread, beside the "
                          "training",
                          r.periodic_evals, r.eval_seconds);
    if (r.eval_wait_seconds >= 0.01) {
      absl::StrAppendFormat(&summary,
                            " (workers waited %.2f s for room in its queue: evaluations slower "
                            "than --eval_every)",
                            r.eval_wait_seconds);
    }
  } else if (r.periodic_evals > 0) {
    absl::StrAppendFormat(
        &summary, "\nperiodic evaluations %d: %.2f s inline (wall time without them %.2f s)",
        r.periodic_evals, r.eval_seconds, r.wall_time_s - r.eval_seconds);
  }
  return summary;
}

}  // namespace hogwild
