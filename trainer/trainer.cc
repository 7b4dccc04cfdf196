#include "trainer/trainer.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "kernels/cpu/cpu_backend.h"
#include "sync/device_hogwild.h"
#include "sync/hogwild.h"
#include "sync/nccl_tower_average.h"
#include "sync/parameter_store.h"
#include "sync/tower_average.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_state.h"
#include "trainer/checkpoint/step_boundary.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/metrics/training_metrics.h"
#include "trainer/worker.h"

namespace hogwild {
namespace {

// Collects the first real error of any worker and stops the others.
class ErrorCollector {
 public:
  ErrorCollector(UpdatePolicy* policy, InputPipeline* pipeline, StepBoundary* boundary)
      : policy_(policy), pipeline_(pipeline), boundary_(boundary) {}

  void Report(absl::Status status) {
    if (status.ok()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A kCancelled from a worker released by someone else's failure is not the cause.
      if (first_.ok() && status.code() != absl::StatusCode::kCancelled) first_ = status;
      if (first_.ok() && fallback_.ok()) fallback_ = status;
    }
    policy_->Cancel();
    pipeline_->Cancel();
    boundary_->Cancel();
  }

  absl::Status first() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_.ok() ? fallback_ : first_;
  }

 private:
  UpdatePolicy* policy_;
  InputPipeline* pipeline_;
  StepBoundary* boundary_;
  std::mutex mu_;
  absl::Status first_;     // guarded by mu_
  absl::Status fallback_;  // guarded by mu_
};

void PrintProgress(const TrainingMetrics::Snapshot& s, int64_t epochs, bool tty, bool final) {
  std::string acc = s.last_eval ? absl::StrFormat("%.2f%%", 100.0 * s.last_eval->accuracy) : "-";
  const std::string line = absl::StrFormat(
      "epoch %.2f/%d | %.0f examples/s | train loss %.4f | test acc %s | staleness %.2f",
      s.epoch, epochs, s.wall_time_s > 0 ? s.examples_seen / s.wall_time_s : 0.0,
      s.recent_train_loss, acc, s.staleness_mean);
  if (tty) {
    std::printf("\r\033[K%s%s", line.c_str(), final ? "\n" : "");
  } else {
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

absl::Status ValidateCheckpointOptions(const TrainerOptions& o) {
  if (o.checkpoint_every_steps < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--checkpoint_every=%d is out of range; a number of steps must be >= 1 (0: only on stop "
        "and at the end)",
        o.checkpoint_every_steps));
  }
  if (!(o.checkpoint_every_seconds >= 0.0) || !std::isfinite(o.checkpoint_every_seconds)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--checkpoint_every=%gs is out of range; a period must be a finite number of seconds "
        "> 0",
        o.checkpoint_every_seconds));
  }
  if (o.checkpoint_dir.empty() &&
      (o.resume || o.checkpoint_every_steps > 0 || o.checkpoint_every_seconds > 0)) {
    return absl::InvalidArgumentError(
        "--resume and --checkpoint_every need --checkpoint_dir (where checkpoints live)");
  }
  return absl::OkStatus();
}

}  // namespace

int WorkerCount(const TrainerOptions& options) {
  if (options.devices.empty() || !options.devices[0].is_gpu()) return options.num_workers;
  return static_cast<int>(options.devices.size()) * options.workers_per_device;
}

// The device checks of ValidateOptions.
absl::Status ValidateDevices(const TrainerOptions& o) {
  if (o.devices.empty()) return absl::InvalidArgumentError("--devices: no device given");
  const bool gpu = o.devices[0].is_gpu();
  for (size_t i = 0; i < o.devices.size(); ++i) {
    const DeviceSpec& d = o.devices[i];
    if (d.is_gpu() != gpu || (!gpu && o.devices.size() > 1) || d.index < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--devices: %s cannot be combined like this; give cpu alone or a list of distinct GPUs",
          d.ToString()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.devices[j] == d) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--devices: %s is listed twice; use --workers_per_device for several workers per GPU",
            d.ToString()));
      }
    }
  }
  if (o.workers_per_device < 1 || o.workers_per_device > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--workers_per_device=%d is out of range; it must be in [1, 64]", o.workers_per_device));
  }
  return absl::OkStatus();
}

absl::Status ValidateOptions(const TrainerOptions& o) {
  HOGWILD_RETURN_IF_ERROR(ValidateDevices(o));
  if (o.num_workers < 1 || o.num_workers > 4096) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--workers=%d is out of range; it must be in [1, 4096]", o.num_workers));
  }
  if (o.batch_size < 1 || o.batch_size > (int64_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch_size=%d is out of range; it must be in [1, 16777216]", o.batch_size));
  }
  if (o.epochs < 1 || o.epochs > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--epochs=%d is out of range; it must be in [1, 1000000]", o.epochs));
  }
  HOGWILD_RETURN_IF_ERROR(ValidateLrSchedule(o.lr));
  if (!(o.sgd.momentum >= 0.0f && o.sgd.momentum < 1.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--momentum=%g is out of range; it must be in [0, 1)", o.sgd.momentum));
  }
  if (!(o.sgd.weight_decay >= 0.0f) || !std::isfinite(o.sgd.weight_decay)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--weight_decay=%g is out of range; it must be >= 0", o.sgd.weight_decay));
  }
  if (o.eval_every_steps < 0 || !(o.eval_every_epochs >= 0.0) ||
      !std::isfinite(o.eval_every_epochs)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--eval_every=%d steps / %g epochs is out of range; it must be >= 0",
        o.eval_every_steps, o.eval_every_epochs));
  }
  if (o.prefetch < 1 || o.prefetch > 1024) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "prefetch=%d is out of range; it must be in [1, 1024]", o.prefetch));
  }
  HOGWILD_RETURN_IF_ERROR(ValidateCheckpointOptions(o));
  if (o.log_every_steps < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--log_every=%d is out of range; it must be >= 1", o.log_every_steps));
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainResult> Train(const TrainerOptions& requested, const Dataset& train,
                                  const Dataset& test) {
  HOGWILD_RETURN_IF_ERROR(ValidateOptions(requested));
  TrainerOptions options = requested;
  options.num_workers = WorkerCount(requested);
  // Worker w runs on worker_devices[w] (GPUs only; consecutive workers share a GPU).
  std::vector<DeviceSpec> worker_devices;
  std::vector<int> worker_gpus;
  if (options.devices[0].is_gpu()) {
    for (const DeviceSpec& d : options.devices) {
      for (int k = 0; k < options.workers_per_device; ++k) {
        worker_devices.push_back(d);
        worker_gpus.push_back(d.index);
      }
    }
  }
  if (!worker_gpus.empty() && !options.checkpoint_dir.empty()) {
    // The GPU policies keep the master parameters and momentum on the devices; capturing and
    // restoring them is not implemented yet, and a checkpoint missing them would be wrong.
    return absl::UnimplementedError(
        "--checkpoint_dir is not supported with GPU workers yet; run with --devices=cpu to "
        "checkpoint");
  }
  if (train.size() == 0) return absl::InvalidArgumentError("the training set is empty");
  ModelSpec spec = options.model;
  spec.input_shape = train.example_shape;
  spec.num_classes = train.num_classes;
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Create(spec));

  ParameterStore store(model->num_params());
  model->InitParams(options.seed, store.unsafe_values());
  const CheckpointSignature signature =
      MakeSignature(*model, options.mode, options.num_workers, options.batch_size, options.seed,
                    train.size());

  std::unique_ptr<UpdatePolicy> policy;
  if (!worker_gpus.empty()) {
    if (options.mode == Mode::kSync) {
      HOGWILD_ASSIGN_OR_RETURN(policy, NcclTowerAverage::Create(&store, worker_gpus, options.sgd));
    } else {
      HOGWILD_ASSIGN_OR_RETURN(policy, DeviceHogwild::Create(&store, worker_gpus, options.sgd,
                                                             options.force_host_master));
    }
  } else if (options.mode == Mode::kSync) {
    policy = std::make_unique<TowerAverage>(&store, options.num_workers, options.sgd);
  } else {
    policy = std::make_unique<Hogwild>(&store, options.num_workers, options.sgd);
  }
  std::optional<Checkpoint> resumed;
  if (options.resume) {
    HOGWILD_ASSIGN_OR_RETURN(resumed, ReadLatestCheckpoint(options.checkpoint_dir));
  }
  if (resumed) {
    HOGWILD_RETURN_IF_ERROR(
        CheckSignature(signature, resumed->signature, CheckpointPath(options.checkpoint_dir)));
    HOGWILD_RETURN_IF_ERROR(RestoreState(*resumed, store, *policy));
  }

  std::unique_ptr<ConvergenceLog> log;
  if (!options.log_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(log, ConvergenceLog::Open(options.log_path));
  }
  TrainingMetrics metrics(options.num_workers, train.size(), log.get(), options.log_every_steps);

  PipelineOptions pipeline_options{.mode = options.mode,
                                   .num_workers = options.num_workers,
                                   .batch_size = options.batch_size,
                                   .epochs = options.epochs,
                                   .seed = options.seed,
                                   .prefetch = options.prefetch};
  if (resumed) pipeline_options.start_step = resumed->next_step;
  InputPipeline pipeline(&train, pipeline_options);

  // Global steps per epoch, to turn --eval_every in epochs into steps.
  int64_t steps_per_epoch = pipeline.plan().StepsPerEpoch(0);
  if (options.mode == Mode::kAsync) {
    steps_per_epoch = 0;
    for (int w = 0; w < options.num_workers; ++w) steps_per_epoch += pipeline.plan().StepsPerEpoch(w);
  }
  CpuBackend eval_backend;
  std::unique_ptr<Evaluator> evaluator;
  if (test.size() > 0) {
    HOGWILD_ASSIGN_OR_RETURN(evaluator, Evaluator::Create(model.get(), &test, &eval_backend));
  }

  WorkerContext context;
  context.model = model.get();
  context.store = &store;
  context.policy = policy.get();
  context.pipeline = &pipeline;
  context.metrics = &metrics;
  context.lr = options.lr;
  context.max_batch = options.batch_size;
  context.evaluator = evaluator.get();
  context.eval_every_steps =
      options.eval_every_epochs > 0
          ? std::max<int64_t>(1, std::llround(options.eval_every_epochs * steps_per_epoch))
          : options.eval_every_steps;
  context.step_hook = options.step_hook;
  context.worker_devices = worker_devices;

  StepBoundary::Options boundary_options{
      .mode = options.mode,
      .num_workers = options.num_workers,
      .checkpoint_dir = options.checkpoint_dir,
      .every_steps = options.checkpoint_every_steps,
      .every_seconds = options.checkpoint_every_seconds,
      .stop_requested = options.stop_requested,
      .start_global_step = static_cast<int64_t>(store.version()),
      .start_next_step = resumed ? resumed->next_step
                                 : std::vector<int64_t>(options.num_workers, 0)};
  StepBoundary boundary(
      boundary_options,
      [&](const std::vector<int64_t>& next_step) {
        return CaptureState(signature, store, *policy, pipeline.plan(), next_step);
      },
      [&] {
        policy->Cancel();
        pipeline.Cancel();
      });
  context.boundary = &boundary;

  ErrorCollector errors(policy.get(), &pipeline, &boundary);
  std::mutex done_mu;
  std::condition_variable done_cv;
  int running = options.num_workers;  // guarded by done_mu
  std::vector<std::thread> threads;
  for (int w = 0; w < options.num_workers; ++w) {
    threads.emplace_back([&, w] {
      errors.Report(RunWorker(w, context));
      {
        std::lock_guard<std::mutex> lock(done_mu);
        --running;
      }
      done_cv.notify_all();
    });
  }
  const bool tty = options.progress && isatty(fileno(stdout));
  {
    std::unique_lock<std::mutex> lock(done_mu);
    const auto period = std::chrono::milliseconds(tty ? 250 : 2000);
    while (!done_cv.wait_for(lock, period, [&running] { return running == 0; })) {
      if (options.progress) PrintProgress(metrics.Get(), options.epochs, tty, false);
    }
  }
  for (std::thread& t : threads) t.join();
  absl::Status status = errors.first();
  // An orderly stop releases the sync peers by cancellation: their kCancelled is not an error.
  if (boundary.stopped() && status.code() == absl::StatusCode::kCancelled) {
    status = absl::OkStatus();
  }
  if (status.ok()) status = boundary.WriteFinal();
  if (!status.ok()) {
    if (options.checkpoint_dir.empty()) return status;
    const int64_t last = boundary.last_checkpoint_step() >= 0
                             ? boundary.last_checkpoint_step()
                             : (resumed ? resumed->global_step : -1);
    return absl::Status(
        status.code(),
        last >= 0 ? absl::StrFormat("%s; the last good checkpoint (global step %d) is kept in "
                                    "%s: resume from it with --resume",
                                    status.message(), last, options.checkpoint_dir)
                  : absl::StrFormat("%s; no checkpoint was written", status.message()));
  }

  TrainResult result;
  const TrainingMetrics::Snapshot snapshot = metrics.Get();
  result.mode = ModeName(options.mode);
  result.num_workers = options.num_workers;
  result.wall_time_s = snapshot.wall_time_s;
  result.examples = snapshot.examples_seen;
  result.steps = static_cast<int64_t>(store.version());
  result.examples_per_s = snapshot.wall_time_s > 0 ? snapshot.examples_seen / snapshot.wall_time_s : 0;
  result.staleness_mean = snapshot.staleness_mean;
  result.staleness_max = snapshot.staleness_max;
  result.staleness_histogram = metrics.StalenessHistogram();
  result.params.resize(store.size());
  HOGWILD_RETURN_IF_ERROR(policy->ReadParams(absl::MakeSpan(result.params)));
  result.stopped_early = boundary.stopped();
  result.resumed_from_step = resumed ? resumed->global_step : -1;
  result.last_checkpoint_step = boundary.last_checkpoint_step();
  metrics.FlushWindows(options.lr.At(result.steps));
  if (evaluator != nullptr) {
    HOGWILD_ASSIGN_OR_RETURN(EvalResult eval, evaluator->Evaluate(result.params));
    // A periodic evaluation may already have logged exactly these parameters.
    if (metrics.last_eval_step() != result.steps) {
      metrics.RecordEval(eval, result.steps, options.lr.At(result.steps));
    }
    result.final_test_loss = eval.loss;
    result.final_test_accuracy = eval.accuracy;
  }
  if (options.progress) {
    // The training-time snapshot, so the last line agrees with the summary's examples/s.
    TrainingMetrics::Snapshot last = snapshot;
    last.last_eval = EvalResult{.loss = result.final_test_loss,
                                .accuracy = result.final_test_accuracy};
    PrintProgress(last, options.epochs, tty, true);
  }
  return result;
}

std::string FormatSummary(const TrainResult& r) {
  return absl::StrFormat(
      "mode %s | workers %d | wall time %.2f s | %d examples, %d steps | %.0f examples/s\n"
      "final test accuracy %.2f%% | test loss %.4f | staleness mean %.2f, max %d",
      r.mode, r.num_workers, r.wall_time_s, r.examples, r.steps, r.examples_per_s,
      100.0 * r.final_test_accuracy, r.final_test_loss, r.staleness_mean, r.staleness_max);
}

}  // namespace hogwild
