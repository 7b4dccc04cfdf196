#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"
#include "sim/sim_metrics.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/finite_check.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

// "nan", "inf", "-inf" or the number (as the real worker's divergence message).
std::string FormatValue(double v) { return std::isnan(v) ? "nan" : absl::StrCat(v); }

using EpochBatches = std::vector<std::pair<std::vector<int64_t>, int64_t>>;

// What both modes share: the model on one CPU backend, one tower, the evaluator, the log and
// the metrics, the parameters, and the batch gather buffers.
struct Context {
  const SimOptions* options = nullptr;
  const Dataset* train = nullptr;
  std::unique_ptr<Model> model;
  std::unique_ptr<CpuBackend> backend;
  std::unique_ptr<Tower> tower;
  std::unique_ptr<Evaluator> evaluator;  // null without a test set
  std::unique_ptr<ConvergenceLog> log;   // null without a log path
  std::unique_ptr<SimMetrics> metrics;
  std::unique_ptr<BatchPlan> plan;
  std::unique_ptr<ComputeTimeSampler> sampler;
  std::vector<float> params;    // [P]
  std::vector<float> features;  // [B, D]
  std::vector<int32_t> labels;  // [B]
  int64_t eval_every_steps = 0;
  int64_t next_eval = 0;
  std::vector<int64_t> worker_steps;  // [W] updates per worker

  const LrSchedule& lr() const { return options->trainer.lr; }
  float LrNow() const { return lr().At(metrics->steps()); }

  // Forward and backward on the dataset rows `rows` at `params`, into `grad` ([P]); returns the
  // loss sum. A non-finite loss or gradient is the real worker's divergence error.
  absl::StatusOr<double> Gradient(const std::vector<int64_t>& rows, int64_t global_size,
                                  absl::Span<float> grad) {
    const int64_t d = train->feature_dim();
    for (size_t i = 0; i < rows.size(); ++i) {
      std::copy_n(train->features.data() + rows[i] * d, d, features.data() + i * d);
      labels[i] = train->labels[rows[i]];
    }
    const float grad_scale = global_size > 0 ? 1.0f / global_size : 0.0f;
    HOGWILD_ASSIGN_OR_RETURN(
        double loss_sum,
        tower->ForwardBackward(params.data(), static_cast<int64_t>(rows.size()), features.data(),
                               labels.data(), grad_scale, grad.data()));
    const int64_t global_step = metrics->steps();
    const float lr_now = LrNow();
    if (!std::isfinite(loss_sum)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("training diverged: the loss is %s at global step %d (learning rate %g); "
                          "lower --lr (or --weight_decay or --momentum)",
                          FormatValue(loss_sum), global_step, lr_now));
    }
    if (const int64_t bad = FirstNonFinite(grad); bad >= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "training diverged: gradient element %d is %s at global step %d (learning rate %g); "
          "lower --lr (or --weight_decay or --momentum)",
          bad, FormatValue(grad[bad]), global_step, lr_now));
    }
    return loss_sum;
  }

  // Evaluates when the global step reached the next evaluation.
  absl::Status MaybeEvaluate(double time_s) {
    if (evaluator == nullptr || eval_every_steps <= 0 || metrics->steps() < next_eval) {
      return absl::OkStatus();
    }
    while (next_eval <= metrics->steps()) next_eval += eval_every_steps;
    HOGWILD_ASSIGN_OR_RETURN(EvalResult eval, evaluator->Evaluate(params));
    return metrics->RecordEval(eval, LrNow(), time_s);
  }
};

// One async worker's state between its read and its update.
struct AsyncWorker {
  int64_t epoch = -1;  // the epoch of `batches`
  size_t next = 0;     // index in `batches` of the next step's batch
  EpochBatches batches;
  std::vector<float> grad;      // [P] the gradient of the step in flight
  std::vector<float> velocity;  // [P] with momentum, else empty
  uint64_t read_version = 0;
  double loss_sum = 0.0;
  int64_t examples = 0;
};

// Async event loop: see the header.
absl::StatusOr<double> RunAsync(Context& ctx) {
  const TrainerOptions& t = ctx.options->trainer;
  const int num_workers = t.num_workers;
  const int64_t num_params = ctx.model->num_params();
  std::vector<AsyncWorker> workers(static_cast<size_t>(num_workers));
  for (AsyncWorker& w : workers) {
    w.grad.resize(static_cast<size_t>(num_params));
    if (t.sgd.momentum != 0.0f) w.velocity.assign(static_cast<size_t>(num_params), 0.0f);
  }
  // Each epoch's permutation, computed once, dropped when every worker has taken its shard.
  std::map<int64_t, std::pair<std::vector<int64_t>, int>> permutations;
  auto next_batch = [&](int w) -> const std::pair<std::vector<int64_t>, int64_t>* {
    AsyncWorker& worker = workers[w];
    while (worker.next >= worker.batches.size()) {
      if (++worker.epoch >= t.epochs) return nullptr;
      auto it = permutations.find(worker.epoch);
      if (it == permutations.end()) {
        it = permutations
                 .emplace(worker.epoch, std::make_pair(ctx.plan->EpochPermutation(worker.epoch), 0))
                 .first;
      }
      worker.batches = ctx.plan->EpochBatches(w, it->second.first);
      worker.next = 0;
      if (++it->second.second == num_workers) permutations.erase(it);
    }
    return &worker.batches[worker.next++];
  };

  // Events: (finish time in simulated seconds, worker); the earliest first, ties by worker id.
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  // Starts worker w's next step at time `now`: reads the parameters, computes its gradient and
  // schedules the update.
  auto start_step = [&](int w, double now) -> absl::Status {
    const auto* batch = next_batch(w);
    if (batch == nullptr) return absl::OkStatus();
    AsyncWorker& worker = workers[w];
    worker.read_version = static_cast<uint64_t>(ctx.metrics->steps());
    HOGWILD_ASSIGN_OR_RETURN(
        worker.loss_sum, ctx.Gradient(batch->first, batch->second, absl::MakeSpan(worker.grad)));
    worker.examples = static_cast<int64_t>(batch->first.size());
    events.emplace(now + ctx.sampler->Next(w), w);
    return absl::OkStatus();
  };

  for (int w = 0; w < num_workers; ++w) HOGWILD_RETURN_IF_ERROR(start_step(w, 0.0));
  double now = 0.0;
  while (!events.empty()) {
    const auto [time_s, w] = events.top();
    events.pop();
    now = time_s;
    AsyncWorker& worker = workers[w];
    const StepStats stats =
        AsyncStepStats(static_cast<uint64_t>(ctx.metrics->steps()), worker.read_version,
                       ctx.LrNow(), t.sgd.staleness_aware_lr);
    const SgdMomentumFn sgd{stats.applied_lr, t.sgd.momentum, t.sgd.weight_decay};
    cpu::SgdUpdate(sgd, worker.grad, absl::MakeSpan(worker.velocity), absl::MakeSpan(ctx.params));
    ++ctx.worker_steps[w];
    HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(worker.examples, worker.loss_sum,
                                                      stats.staleness, stats.applied_lr, now));
    HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(now));
    HOGWILD_RETURN_IF_ERROR(start_step(w, now));
  }
  return now;
}

// Sync steps: see the header.
absl::StatusOr<double> RunSync(Context& ctx) {
  const TrainerOptions& t = ctx.options->trainer;
  const int num_workers = t.num_workers;
  const size_t num_params = static_cast<size_t>(ctx.model->num_params());
  std::vector<float> sum(num_params), grad(num_params), velocity;
  if (t.sgd.momentum != 0.0f) velocity.assign(num_params, 0.0f);
  std::vector<EpochBatches> shards(static_cast<size_t>(num_workers));
  const int64_t steps_per_epoch = ctx.plan->StepsPerEpoch(0);
  double now = 0.0;
  for (int64_t epoch = 0; epoch < t.epochs; ++epoch) {
    const std::vector<int64_t> permutation = ctx.plan->EpochPermutation(epoch);
    for (int w = 0; w < num_workers; ++w) shards[w] = ctx.plan->EpochBatches(w, permutation);
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      double loss_sum = 0.0;
      double slowest_s = 0.0;
      for (int w = 0; w < num_workers; ++w) {
        const auto& [rows, global_size] = shards[w][s];
        // Summed in worker order, element by element, as TowerAverage::AddTowers.
        HOGWILD_ASSIGN_OR_RETURN(
            double loss, ctx.Gradient(rows, global_size, absl::MakeSpan(w == 0 ? sum : grad)));
        if (w > 0) {
          for (size_t i = 0; i < num_params; ++i) sum[i] += grad[i];
        }
        loss_sum += loss;
        slowest_s = std::max(slowest_s, ctx.sampler->Next(w));
      }
      now += slowest_s + ctx.options->allreduce_time_s;
      const float lr = ctx.LrNow();
      cpu::SgdUpdate(SgdMomentumFn{lr, t.sgd.momentum, t.sgd.weight_decay}, sum,
                     absl::MakeSpan(velocity), absl::MakeSpan(ctx.params));
      HOGWILD_RETURN_IF_ERROR(
          ctx.metrics->RecordUpdate(shards[0][s].second, loss_sum, /*staleness=*/0, lr, now));
      for (int64_t& steps : ctx.worker_steps) ++steps;
      HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(now));
    }
  }
  return now;
}

// Global steps per epoch (as the trainer counts them for eval_every_epochs).
int64_t GlobalStepsPerEpoch(const BatchPlan& plan, Mode mode, int num_workers) {
  if (mode == Mode::kSync) return plan.StepsPerEpoch(0);
  int64_t steps = 0;
  for (int w = 0; w < num_workers; ++w) steps += plan.StepsPerEpoch(w);
  return steps;
}

}  // namespace

absl::Status ValidateSimOptions(const SimOptions& options) {
  const TrainerOptions& t = options.trainer;
  HOGWILD_RETURN_IF_ERROR(ValidateOptions(t));
  if (t.mode != Mode::kAsync && t.mode != Mode::kSync) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::mode=%s is not simulated yet; the simulation has async and sync",
        ModeName(t.mode)));
  }
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
  // The simulated updates are SgdMomentumFn's: the other optimizers are not simulated yet.
  if (!t.sgd.is_sgd_momentum()) {
    return absl::InvalidArgumentError(
        "TrainerOptions::sgd.optimizer is not simulated yet; the simulation has sgd and "
        "momentum");
  }
  if (t.sgd.shared_optimizer_state) return refuse("sgd.shared_optimizer_state");
  if (t.sgd.clip_global_norm != 0.0f) return refuse("sgd.clip_global_norm");
  if (!t.weight_decay_biases) return refuse("weight_decay_biases");
  if (t.ema_decay != 0.0f) return refuse("ema_decay");
  if (t.lr.scaling != LrSchedule::Scaling::kNone) {
    return absl::InvalidArgumentError(
        "TrainerOptions::lr.scaling is not simulated yet; scale --lr yourself");
  }
  HOGWILD_RETURN_IF_ERROR(ValidateComputeTimeOptions(options.compute, t.num_workers));
  if (!(options.allreduce_time_s >= 0 && options.allreduce_time_s <= kMaxSimAllreduceTimeS)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SimOptions::allreduce_time_s=%g is out of range [0, %g] seconds",
                        options.allreduce_time_s, kMaxSimAllreduceTimeS));
  }
  if (options.allreduce_time_s != 0 && t.mode != Mode::kSync) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SimOptions::allreduce_time_s=%g applies to sync mode only (async has no all-reduce)",
        options.allreduce_time_s));
  }
  if (options.max_state_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SimOptions::max_state_bytes=%d is out of range [1, 2^63)", options.max_state_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<SimResult> Simulate(const SimOptions& options, const Dataset& train,
                                   const Dataset& test) {
  const absl::Time real_start = absl::Now();
  HOGWILD_RETURN_IF_ERROR(ValidateSimOptions(options));
  const TrainerOptions& t = options.trainer;
  HOGWILD_RETURN_IF_ERROR(ValidateOptionsForDataset(t, train.size()));
  if (!t.log_path.empty() && !t.overwrite_log) {
    HOGWILD_RETURN_IF_ERROR(
        ConvergenceLog::CheckWouldNotReplace(t.log_path, "TrainerOptions::overwrite_log"));
  }
  Context ctx;
  ctx.options = &options;
  ctx.train = &train;
  ModelSpec spec = t.model;
  spec.input_shape = train.example_shape;
  spec.num_classes = train.num_classes;
  HOGWILD_ASSIGN_OR_RETURN(ctx.model, Model::Create(spec));
  const int64_t num_params = ctx.model->num_params();
  if (t.mode == Mode::kAsync) {
    // Per worker: the gradient in flight, and the momentum buffer.
    const double state_bytes = static_cast<double>(t.num_workers) *
                               static_cast<double>(num_params) * sizeof(float) *
                               (t.sgd.momentum != 0.0f ? 2 : 1);
    if (state_bytes > static_cast<double>(options.max_state_bytes)) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the simulation's per-worker state (%d workers x %d parameters x 4 bytes%s = %.0f "
          "bytes) exceeds SimOptions::max_state_bytes=%d; use fewer workers or a smaller model",
          t.num_workers, num_params, t.sgd.momentum != 0.0f ? " x 2 with momentum" : "",
          state_bytes, options.max_state_bytes));
    }
  }
  ctx.backend = std::make_unique<CpuBackend>();
  HOGWILD_ASSIGN_OR_RETURN(ctx.tower,
                           Tower::Create(ctx.model.get(), ctx.backend.get(), t.batch_size));
  if (test.size() > 0) {
    HOGWILD_ASSIGN_OR_RETURN(ctx.evaluator,
                             Evaluator::Create(ctx.model.get(), &test, ctx.backend.get()));
  }
  if (!t.log_path.empty()) {
    HOGWILD_ASSIGN_OR_RETURN(ctx.log, ConvergenceLog::Open(t.log_path));
  }
  ctx.metrics = std::make_unique<SimMetrics>(ctx.log.get(), train.size(), t.log_every_steps);
  ctx.plan = std::make_unique<BatchPlan>(train.size(), PipelineOptions{.mode = t.mode,
                                                                       .num_workers = t.num_workers,
                                                                       .batch_size = t.batch_size,
                                                                       .epochs = t.epochs,
                                                                       .seed = t.seed});
  // The compute times draw from their own stream, independent of the data order's.
  ctx.sampler = std::make_unique<ComputeTimeSampler>(options.compute, t.num_workers,
                                                     t.seed ^ 0x53494d54494d45ull /* "SIMTIME" */);
  ctx.params.resize(static_cast<size_t>(num_params));
  ctx.model->InitParams(t.seed, absl::MakeSpan(ctx.params));
  ctx.features.resize(static_cast<size_t>(t.batch_size * train.feature_dim()));
  ctx.labels.resize(static_cast<size_t>(t.batch_size));
  ctx.eval_every_steps =
      t.eval_every_epochs > 0
          ? std::max<int64_t>(1,
                              std::llround(t.eval_every_epochs *
                                           GlobalStepsPerEpoch(*ctx.plan, t.mode, t.num_workers)))
          : t.eval_every_steps;
  ctx.next_eval = ctx.eval_every_steps;
  ctx.worker_steps.assign(static_cast<size_t>(t.num_workers), 0);

  HOGWILD_ASSIGN_OR_RETURN(const double end_s,
                           t.mode == Mode::kAsync ? RunAsync(ctx) : RunSync(ctx));
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
  result.staleness_per_update = std::move(ctx.metrics->staleness_per_update());
  if (ctx.evaluator != nullptr) {
    HOGWILD_ASSIGN_OR_RETURN(EvalResult eval, ctx.evaluator->Evaluate(ctx.params));
    if (ctx.metrics->last_eval_step() != result.steps) {
      HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordEval(eval, ctx.LrNow(), end_s));
    }
    result.final_test_loss = eval.loss;
    result.final_test_accuracy = eval.accuracy;
  }
  if (ctx.log != nullptr) HOGWILD_RETURN_IF_ERROR(ctx.log->Close());
  result.worker_steps = std::move(ctx.worker_steps);
  result.params = std::move(ctx.params);
  result.real_time_s = absl::ToDoubleSeconds(absl::Now() - real_start);
  return result;
}

std::string FormatSimSummary(const SimResult& r) {
  return absl::StrFormat(
      "simulated %s | workers %d | simulated time %.2f s | real time %.2f s | %d examples, %d "
      "steps | %.0f examples per simulated s\n"
      "final test accuracy %.2f%% | test loss %.4f | staleness mean %.2f, max %d",
      ModeName(r.mode), r.num_workers, r.simulated_time_s, r.real_time_s, r.examples, r.steps,
      r.examples_per_simulated_s, 100.0 * r.final_test_accuracy, r.final_test_loss,
      r.staleness_mean, r.staleness_max);
}

}  // namespace hogwild
