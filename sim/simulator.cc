#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/capabilities.h"
#include "core/status_macros.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/optimizer.h"
#include "kernels/optimizer_name.h"
#include "sim/sim_context.h"
#include "sim/sim_metrics.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/optimizer_options.h"
#include "trainer/weight_ema.h"
#include "trainer/workloads/dense_workload.h"

namespace hogwild {
namespace {

// Global steps per epoch (as the trainer counts them for eval_every_epochs).
int64_t GlobalStepsPerEpoch(const BatchPlan& plan, Mode mode, int num_workers) {
  if (SplitsGlobalBatch(mode)) return plan.StepsPerEpoch(0);
  int64_t steps = 0;
  for (int w = 0; w < num_workers; ++w) steps += plan.StepsPerEpoch(w);
  return steps;
}

}  // namespace

absl::Status CheckExchangeTimeModel(const SimOptions& options) {
  if (!(options.allreduce_time_s >= 0 && options.allreduce_time_s <= kMaxSimAllreduceTimeS)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SimOptions::allreduce_time_s=%g is out of range [0, %g] seconds",
                        options.allreduce_time_s, kMaxSimAllreduceTimeS));
  }
  if (!(options.latency_s >= 0 && options.latency_s <= kMaxSimAllreduceTimeS)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SimOptions::latency_s=%g is out of range [0, %g] seconds",
                        options.latency_s, kMaxSimAllreduceTimeS));
  }
  if (!(options.bandwidth_bytes_per_s >= 0 && options.bandwidth_bytes_per_s <= kMaxSimBandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SimOptions::bandwidth_bytes_per_s=%g is out of range [0, %g] bytes/s",
                        options.bandwidth_bytes_per_s, kMaxSimBandwidth));
  }
  if (options.latency_s != 0 && options.bandwidth_bytes_per_s == 0) {
    return absl::InvalidArgumentError(
        "SimOptions::latency_s is part of the bandwidth model and needs "
        "SimOptions::bandwidth_bytes_per_s; for a fixed time per exchange give "
        "SimOptions::allreduce_time_s instead");
  }
  if (options.bandwidth_bytes_per_s != 0 && options.allreduce_time_s != 0) {
    return absl::InvalidArgumentError(
        "SimOptions::allreduce_time_s and SimOptions::bandwidth_bytes_per_s are two models of an "
        "exchange's time; give one of them");
  }
  return absl::OkStatus();
}

absl::Status ValidateSimOptions(const SimOptions& options, WorkloadKind workload) {
  const TrainerOptions& t = options.trainer;
  // Before ValidateOptions, which checks the threads cell: the simulated one is the cell here.
  HOGWILD_RETURN_IF_ERROR(
      CheckSupported(workload, t.mode, Substrate::kSimulated, "TrainerOptions::mode"));
  HOGWILD_RETURN_IF_ERROR(ValidateOptions(t));
  const auto refuse = [](const char* field) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::%s has no meaning in a simulation (sim/simulator.h); leave it unset",
        field));
  };
  if (t.devices.size() != 1 || t.devices[0].kind != DeviceSpec::Kind::kCpu) {
    return refuse("devices");
  }
  if (t.workers_per_device != 1) return refuse("workers_per_device");
  if (!t.checkpoint_dir.empty()) return refuse("checkpoint_dir");
  if (t.resume) return refuse("resume");
  if (t.step_hook) return refuse("step_hook");
  if (t.progress) return refuse("progress");
  if (t.log_row_sink) return refuse("log_row_sink");
  if (t.stop_requested != nullptr) return refuse("stop_requested");
  if (t.cluster != nullptr) return refuse("cluster");
  if (t.stragglers.enabled()) {
    return absl::InvalidArgumentError(
        "TrainerOptions::stragglers slows real threads; a simulation takes its stragglers in "
        "SimOptions::compute.stragglers (sim/compute_time.h)");
  }
  if (t.lr.scaling != LrSchedule::Scaling::kNone) {
    return absl::InvalidArgumentError(
        "TrainerOptions::lr.scaling is not simulated yet; scale --lr yourself");
  }
  HOGWILD_RETURN_IF_ERROR(ValidateComputeTimeOptions(options.compute, t.num_workers));
  HOGWILD_RETURN_IF_ERROR(CheckExchangeTimeModel(options));
  if (options.bandwidth_bytes_per_s != 0 && !Exchanges(t.mode)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SimOptions::bandwidth_bytes_per_s applies to sync, backup, local_sgd and "
                        "async_local_sgd only (%s has no exchange)",
                        ModeName(t.mode)));
  }
  if (options.allreduce_time_s != 0 && !Exchanges(t.mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SimOptions::allreduce_time_s=%g applies to sync, backup, local_sgd and async_local_sgd "
        "only (%s has no all-reduce)",
        options.allreduce_time_s, ModeName(t.mode)));
  }
  if (options.max_state_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SimOptions::max_state_bytes=%d is out of range [1, 2^63)", options.max_state_bytes));
  }
  return absl::OkStatus();
}

absl::Status CheckSimStateFits(const SimOptions& options, int64_t num_params) {
  const TrainerOptions& t = options.trainer;
  // Per worker: async, ssp and round_robin hold the policy's parameter snapshot and the gradient
  // in flight; they and locked keep, unless shared, the worker's optimizer state; local_sgd each
  // replica's optimizer state; sync and backup nothing per worker (one state, sliced).
  const bool in_flight =
      t.mode == Mode::kAsync || t.mode == Mode::kSsp || t.mode == Mode::kRoundRobin;
  // async_local_sgd: the replica, the pulled parameters and the gradient in flight.
  const bool replicas = t.mode == Mode::kAsyncLocalSgd;
  const bool per_worker_state =
      ((in_flight || t.mode == Mode::kLocked) && !t.sgd.shared_optimizer_state) ||
      HasLocalRounds(t.mode);
  const int state_slots = per_worker_state ? NumStateSlots(t.sgd.optimizer_params()) : 0;
  // local_sgd with Streaming DiLoCo's options keeps every replica (sim/streaming_rounds.cc).
  const bool streaming = t.mode == Mode::kLocalSgd && !t.streaming.is_default();
  const int per_worker_arrays =
      (in_flight ? 2 : 0) + (replicas ? 3 : 0) + (streaming ? 1 : 0) + state_slots;
  const double state_bytes = static_cast<double>(t.num_workers) * static_cast<double>(num_params) *
                             sizeof(float) * per_worker_arrays;
  if (state_bytes > static_cast<double>(options.max_state_bytes)) {
    std::string what = in_flight   ? "the parameter snapshot, the gradient in flight"
                       : replicas  ? "the replica, the pulled parameters, the gradient in flight"
                       : streaming ? "the replica"
                                   : "";
    if (state_slots > 0) {
      // The SGD family keeps one buffer, momentum; the others name their optimizer.
      absl::StrAppend(
          &what, in_flight || replicas || streaming ? " and " : "",
          t.sgd.is_sgd_momentum()
              ? std::string("momentum")
              : absl::StrFormat("%s's %d optimizer-state buffer%s", OptimizerName(t.sgd.optimizer),
                                state_slots, state_slots == 1 ? "" : "s"));
    }
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the simulation's per-worker state (%d workers x %d parameters x 4 bytes x %d = %.0f "
        "bytes: %s) exceeds SimOptions::max_state_bytes=%d; use fewer workers or a smaller model",
        t.num_workers, num_params, per_worker_arrays, state_bytes, what, options.max_state_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<SimResult> Simulate(const SimOptions& options, const Dataset& train,
                                   const Dataset& test) {
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<DenseWorkload> workload,
                           DenseWorkload::Create(options.trainer.model, &train, &test));
  return SimulateWorkload(options, *workload);
}

absl::StatusOr<SimResult> SimulateWorkload(const SimOptions& options, const Workload& workload) {
  const absl::Time real_start = absl::Now();
  HOGWILD_RETURN_IF_ERROR(ValidateSimOptions(options, workload.kind()));
  const TrainerOptions& t = options.trainer;
  const int64_t train_examples = workload.num_train_examples();
  HOGWILD_RETURN_IF_ERROR(ValidateOptionsForDataset(t, train_examples));
  if (!t.log_path.empty() && !t.overwrite_log) {
    HOGWILD_RETURN_IF_ERROR(
        ConvergenceLog::CheckWouldNotReplace(t.log_path, "TrainerOptions::overwrite_log"));
  }
  SimContext ctx;
  ctx.options = &options;
  ctx.workload = &workload;
  ctx.sgd =
      ModelSgdOptions(t.sgd, t.weight_decay_biases, workload.BiasRanges(), workload.StatRanges());
  const int64_t num_params = workload.num_params();
  HOGWILD_RETURN_IF_ERROR(CheckSimStateFits(options, num_params));
  HOGWILD_ASSIGN_OR_RETURN(ctx.gradient, workload.CreateWorker(t.batch_size));
  if (!t.log_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(ctx.log, ConvergenceLog::Open(t.log_path));
  }
  ctx.metrics =
      std::make_unique<SimMetrics>(ctx.log.get(), train_examples, t.log_every_steps, t.num_workers);
  ctx.plan =
      std::make_unique<BatchPlan>(train_examples, PipelineOptions{.mode = t.mode,
                                                                  .num_workers = t.num_workers,
                                                                  .batch_size = t.batch_size,
                                                                  .epochs = t.epochs,
                                                                  .seed = t.seed,
                                                                  .drop_last = t.drop_last});
  // The compute times draw from their own stream, independent of the data order's.
  ctx.sampler = std::make_unique<ComputeTimeSampler>(options.compute, t.num_workers,
                                                     t.seed ^ 0x53494d54494d45ull /* "SIMTIME" */);
  ctx.params.resize(static_cast<size_t>(num_params));
  workload.InitParams(t.seed, absl::MakeSpan(ctx.params));
  if (t.ema_decay != 0.0f) {
    ctx.ema = std::make_unique<WeightEma>(ctx.params, t.ema_decay, t.ema_num_updates);
  }
  ctx.eval_every_steps =
      t.eval_every_epochs > 0
          ? std::max<int64_t>(1,
                              std::llround(t.eval_every_epochs *
                                           GlobalStepsPerEpoch(*ctx.plan, t.mode, t.num_workers)))
          : t.eval_every_steps;
  ctx.next_eval = ctx.eval_every_steps;
  ctx.worker_steps.assign(static_cast<size_t>(t.num_workers), 0);
  ctx.dropped.assign(static_cast<size_t>(t.num_workers), 0);

  absl::StatusOr<double> end = absl::InternalError("unknown mode");
  switch (t.mode) {
    case Mode::kAsync:
    case Mode::kSsp:
      end = RunAsyncOrSsp(ctx);
      break;
    case Mode::kSync:
      end = RunSync(ctx);
      break;
    case Mode::kBackup:
      end = RunBackup(ctx);
      break;
    case Mode::kLocalSgd:
      end = RunLocalSgd(ctx);
      break;
    case Mode::kLocked:
      end = RunLocked(ctx);
      break;
    case Mode::kRoundRobin:
      end = RunRoundRobin(ctx);
      break;
    case Mode::kAsyncLocalSgd:
      end = RunAsyncOrSsp(ctx);
      break;
    case Mode::kCyclades:
    case Mode::kBuckwild:
      break;  // refused by the capabilities table: "unknown mode" is never reached
  }
  HOGWILD_RETURN_IF_ERROR(end.status());
  const double end_s = *end;
  HOGWILD_RETURN_IF_ERROR(ctx.metrics->Flush(ctx.LrNow(), end_s));

  SimResult result;
  result.mode = t.mode;
  result.num_workers = t.num_workers;
  result.simulated_time_s = end_s;
  result.examples = ctx.metrics->examples();
  result.steps = ctx.metrics->steps();
  result.examples_per_simulated_s = end_s > 0 ? result.examples / end_s : 0.0;
  result.staleness_mean = ctx.metrics->staleness_mean();
  result.staleness_max = ctx.metrics->staleness_max();
  result.staleness_histogram = ctx.metrics->histogram();
  const CommunicationStats communication = ctx.metrics->communication();
  result.exchanges = communication.exchanges;
  result.bytes_per_worker = communication.bytes_per_worker;
  if (ctx.ema != nullptr) {
    result.ema_params.resize(static_cast<size_t>(num_params));
    ctx.ema->Read(absl::MakeSpan(result.ema_params));
  }
  if (workload.has_test_set()) {
    HOGWILD_ASSIGN_OR_RETURN(EvalResult eval,
                             workload.Evaluate(ctx.params, Workload::Split::kTest));
    std::optional<EvalResult> ema_eval;
    if (ctx.ema != nullptr) {
      HOGWILD_ASSIGN_OR_RETURN(ema_eval,
                               workload.Evaluate(result.ema_params, Workload::Split::kTest));
      result.final_ema_test_loss = ema_eval->loss;
      result.final_ema_test_accuracy = ema_eval->accuracy;
    }
    // As the trainer: unless a periodic evaluation logged these very parameters.
    if (ctx.metrics->last_eval_step() != result.steps || UpdatesAfterLastStep(t.mode)) {
      HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordEval(eval, ctx.LrNow(), end_s, ema_eval));
    }
    result.final_test_loss = eval.loss;
    result.final_test_accuracy = eval.accuracy;
  }
  if (ctx.log != nullptr) HOGWILD_RETURN_IF_ERROR(ctx.log->Close());
  result.staleness_per_update = ctx.metrics->TakeStalenessPerUpdate();
  result.worker_steps = std::move(ctx.worker_steps);
  result.dropped = std::move(ctx.dropped);
  result.max_clock_gap = ctx.max_clock_gap;
  result.params = std::move(ctx.params);
  result.real_time_s = absl::ToDoubleSeconds(absl::Now() - real_start);
  return result;
}

std::string FormatSimSummary(const SimResult& r) {
  std::string extra;
  if (r.mode == Mode::kSsp) extra = absl::StrFormat(" | largest clock gap %d", r.max_clock_gap);
  int64_t dropped = 0;
  for (int64_t d : r.dropped) dropped += d;
  if (r.mode == Mode::kBackup) extra = absl::StrFormat(" | %d late parts dropped", dropped);
  if (dropped > 0 && r.mode == Mode::kAsync) {
    extra = absl::StrFormat(" | %d gradients dropped (too stale)", dropped);
  }
  absl::StrAppend(&extra, FormatExchanges(r.exchanges, r.bytes_per_worker));
  return absl::StrFormat(
      "simulated %s | workers %d | simulated time %.2f s | real time %.2f s | %d examples, %d "
      "steps | %.0f examples per simulated s\n"
      "final test accuracy %.2f%% | test loss %.4f | staleness mean %.2f, max %d%s",
      ModeName(r.mode), r.num_workers, r.simulated_time_s, r.real_time_s, r.examples, r.steps,
      r.examples_per_simulated_s, 100.0 * r.final_test_accuracy, r.final_test_loss,
      r.staleness_mean, r.staleness_max, extra);
}

}  // namespace hogwild
