#include "trainer/worker.h"

#include <cmath>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "kernels/buffer.h"
#include "trainer/data/batch_feed.h"
#include "trainer/device.h"
#include "trainer/finite_check.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

absl::Status Annotate(const absl::Status& status, int worker, int64_t step) {
  if (status.ok() || status.code() == absl::StatusCode::kCancelled) return status;
  return absl::Status(status.code(),
                      absl::StrFormat("worker %d, step %d: %s", worker, step, status.message()));
}

absl::Status RunSteps(int worker, const WorkerContext& ctx, int64_t& step) {
  const DeviceSpec device =
      ctx.worker_devices.empty() ? DeviceSpec::Cpu() : ctx.worker_devices[worker];
  // Created here, on the worker's thread: a GPU backend binds its device to this thread.
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(device));
  HOGWILD_RETURN_IF_ERROR(ctx.policy->AttachWorker(worker, backend.get()));
  HOGWILD_ASSIGN_OR_RETURN(auto tower, Tower::Create(ctx.model, backend.get(), ctx.max_batch));
  HOGWILD_ASSIGN_OR_RETURN(auto grad,
                           BackendBuffer<float>::Create(backend.get(), ctx.model->num_params()));
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<BatchFeed> feed,
                           CreateBatchFeed(device, backend.get(), ctx.pipeline, worker,
                                           ctx.max_batch, ctx.model->input_features()));
  int64_t next_step = ctx.pipeline->start_step(worker);
  step = next_step;
  const bool claims_evals = ctx.eval_runner != nullptr && ctx.eval_schedule != nullptr &&
                            (worker == 0 || ctx.any_worker_evaluates);
  // The gradient is checked for NaN/Inf on the host only; on a GPU the loss check (which a
  // non-finite gradient makes non-finite at the next step) is the guard.
  const bool host_gradient = device.kind == DeviceSpec::Kind::kCpu;
  std::vector<float> ema_params;  // [P] with an EMA: the parameters it averages in
  while (true) {
    if (ctx.boundary != nullptr) {
      HOGWILD_ASSIGN_OR_RETURN(
          bool stop, ctx.boundary->AtBoundary(worker, next_step,
                                              static_cast<int64_t>(ctx.policy->global_step())));
      if (stop) return absl::OkStatus();
    }
    HOGWILD_ASSIGN_OR_RETURN(std::optional<BatchView> batch, feed->Next());
    if (!batch) {
      // Done first: a finished worker counts as parked, so it must not change the policy's state
      // after (ssp: its WorkerDone lets blocked peers through).
      const absl::Status done = ctx.policy->WorkerDone(worker);
      if (ctx.boundary != nullptr) ctx.boundary->Finished(worker, next_step);
      return done;
    }
    step = batch->step;
    if (ctx.step_hook) HOGWILD_RETURN_IF_ERROR(ctx.step_hook(worker, step));
    HOGWILD_RETURN_IF_ERROR(ctx.policy->SetStepExamples(worker, batch->size, batch->global_size));
    const absl::Time step_start = absl::Now();
    HOGWILD_ASSIGN_OR_RETURN(DeviceSpan<const float> params, ctx.policy->BeginStep(worker));
    const float grad_scale = batch->global_size > 0 ? 1.0f / batch->global_size : 0.0f;
    HOGWILD_ASSIGN_OR_RETURN(double loss_sum,
                             tower->ForwardBackward(params.data(), batch->size, batch->features,
                                                    batch->labels, grad_scale, grad.data()));
    // In sync mode the global step is the same for every tower of a step; in async mode it is
    // the number of updates applied so far by all workers.
    const int64_t global_step = static_cast<int64_t>(ctx.policy->global_step());
    const float lr = ctx.lr.At(global_step);
    if (!std::isfinite(loss_sum)) {
      return DivergedError(absl::StrCat("the loss is ", FormatNonFinite(loss_sum)), global_step,
                           lr);
    }
    if (host_gradient) {
      HOGWILD_RETURN_IF_ERROR(CheckFinite(absl::MakeConstSpan(grad.data(), grad.size()),
                                          "gradient element", global_step, lr));
    }
    HOGWILD_ASSIGN_OR_RETURN(
        StepStats stats,
        ctx.policy->FinishStep(worker, DeviceSpan<const float>(grad.data(), grad.size()), lr));
    next_step = batch->step + 1;
    if (ctx.ema != nullptr && WorkerUpdatesEma(ctx.policy->mode(), worker)) {
      // Sync: worker 0 after the closing barrier, while the others only read the parameters
      // (exact, once per step). Async: this worker's update and whatever others landed (a
      // Hogwild read), with the global step after its own update.
      ema_params.resize(static_cast<size_t>(ctx.policy->num_params()));
      HOGWILD_RETURN_IF_ERROR(ctx.policy->ReadParams(absl::MakeSpan(ema_params)));
      ctx.ema->Update(ema_params, ctx.policy->global_step());
    }
    // A straggler holds back after its update (in sync mode its peers wait at the next
    // barrier); the delay scales with this step's own time, BeginStep to FinishStep.
    absl::Duration delay = absl::ZeroDuration();
    if (ctx.stragglers != nullptr && ctx.stragglers->enabled()) {
      delay = ctx.stragglers->DelayAfter(worker, batch->step, absl::Now() - step_start);
      ctx.delay_gate->SleepFor(delay);
    }
    // An async update dropped as too stale made no global step and has no update staleness (a
    // late backup gradient's step was made by the others, at staleness 0).
    const bool made_step = !(stats.dropped && ctx.policy->mode() == Mode::kAsync);
    // A failing convergence log stops the run (trainer/metrics/convergence_log.h).
    HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordStep(
        worker, batch->size, loss_sum,
        made_step ? std::optional<uint64_t>(stats.staleness) : std::nullopt, stats.applied_lr,
        global_step + 1, absl::ToDoubleSeconds(delay), stats.remote_staleness));
    // The global step this update made (read before it, plus it): the first claimer to reach a
    // point takes it; a point the global step has passed unclaimed is taken late, never skipped.
    if (claims_evals && made_step && ctx.eval_schedule->Claim(global_step + 1).has_value()) {
      // Sync: all slices are updated (the closing barrier passed) and the others only read the
      // parameters until worker 0 reaches the next barrier, so this is the exact step-boundary
      // state. Async: a consistent-enough snapshot, as any Hogwild reader sees.
      // On a GPU this worker's own last update may still be queued: let it land first.
      HOGWILD_RETURN_IF_ERROR(backend->Synchronize());
      // The row's counters are those of the moment the parameters are read; rows recorded
      // meanwhile wait for it, so the log's step stays monotonic.
      const TrainingMetrics::PendingEval pending = ctx.metrics->BeginEval(global_step + 1, lr);
      std::vector<float> snapshot(static_cast<size_t>(ctx.policy->num_params()));
      std::vector<float> ema_snapshot;
      absl::Status read = ctx.policy->ReadParams(absl::MakeSpan(snapshot));
      if (read.ok() && ctx.ema != nullptr) {
        ema_snapshot.resize(snapshot.size());
        ctx.ema->Read(absl::MakeSpan(ema_snapshot));
      }
      if (!read.ok()) return ctx.metrics->FinishEval(pending, read);
      // Waits only while the evaluator's queue is full (trainer/metrics/eval_runner.h).
      HOGWILD_RETURN_IF_ERROR(
          ctx.eval_runner->Submit(pending, std::move(snapshot), std::move(ema_snapshot)));
    }
  }
}

}  // namespace

absl::Status RunWorker(int worker, const WorkerContext& context) {
  int64_t step = 0;
  absl::Status status;
  // An exception escaping a worker thread would std::terminate the process, and one caught
  // without cancelling the others would leave them at the barrier: make it a status.
  try {
    status = RunSteps(worker, context, step);
  } catch (const std::bad_alloc&) {
    status =
        absl::ResourceExhaustedError("out of memory; use a smaller model, batch or fewer workers");
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrFormat("exception: %s", e.what()));
  } catch (...) {
    status = absl::InternalError("unknown exception");
  }
  return Annotate(status, worker, step);
}

}  // namespace hogwild
