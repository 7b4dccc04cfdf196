// One worker: a thread that owns its Backend and Tower and runs train steps until its input is
// exhausted, an error occurs, or training is cancelled. It creates its Backend on its own
// thread (on a GPU: cudaSetDevice, its stream and cuBLAS handle; trainer/device.h), attaches it
// to the update policy, and receives its batches in that backend's memory (trainer/batch_feed.h):
//   batch <- feed.Next(); params <- policy.BeginStep(w);
//   loss, grad <- tower.ForwardBackward(params, batch, 1 / batch.global_size);
//   policy.FinishStep(w, grad, lr(step)); metrics; a snapshot for the evaluation when this
//   worker claims an evaluation point (WorkerContext::eval_schedule).
#ifndef HOGWILD_TRAINER_WORKER_H_
#define HOGWILD_TRAINER_WORKER_H_

#include <atomic>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "sync/update_policy.h"
#include "trainer/checkpoint/step_boundary.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/device.h"
#include "trainer/eval_schedule.h"
#include "trainer/metrics/eval_runner.h"
#include "trainer/metrics/training_metrics.h"
#include "trainer/model/lr_schedule.h"
#include "trainer/model/model.h"
#include "trainer/straggler.h"
#include "trainer/weight_ema.h"

namespace hogwild {

// Everything the workers share; owned by the trainer, outlives the worker threads.
struct WorkerContext {
  const Model* model = nullptr;
  UpdatePolicy* policy = nullptr;
  InputPipeline* pipeline = nullptr;
  TrainingMetrics* metrics = nullptr;
  LrSchedule lr;
  int64_t max_batch = 1;
  // The periodic evaluations (both null: none). A worker whose update reaches an evaluation
  // point claims it (EvalSchedule::Claim: each point once, in order), opens its log row, takes
  // a snapshot of the parameters (and of the EMA's) and hands it to the runner, which evaluates
  // it inline or on its own thread (trainer/metrics/eval_runner.h). Claimers: every worker when
  // any_worker_evaluates (async and ssp on CPU workers in one process, where the global step
  // moves on while one worker is held up, and any worker's read is a Hogwild snapshot anyway),
  // else worker 0 alone (sync-like modes, whose global step waits for worker 0 and whose exact
  // step-boundary state and EMA worker 0 reads; GPU workers; several processes).
  EvalRunner* eval_runner = nullptr;
  EvalSchedule* eval_schedule = nullptr;
  bool any_worker_evaluates = false;
  std::function<absl::Status(int, int64_t)> step_hook;
  // worker_devices[w]: the device of worker w. Empty: every worker on the CPU.
  std::vector<DeviceSpec> worker_devices;
  // Checkpoints and orderly stops between steps; may be null (no checkpoints, no stops).
  StepBoundary* boundary = nullptr;
  // Straggler delays after each step (both null, or the model disabled: none). The gate is
  // cancelled with the run, so a delay never holds up a stop or an error.
  const StragglerModel* stragglers = nullptr;
  DelayGate* delay_gate = nullptr;
  // The weights' moving average, updated after each update (async: by every worker after its
  // own; sync: by worker 0 once per step); null: none.
  WeightEma* ema = nullptr;
};

// Runs worker `worker` to completion on the calling thread. Returns OK when its data is
// exhausted or the boundary asked it to stop; otherwise the error, annotated with the worker id
// and step. An exception thrown inside the worker (the step hook, the model, an allocation)
// becomes a kInternal error the same way. A NaN/Inf loss or gradient is an error (the
// divergence guard) raised before the update reaches the shared parameters.
absl::Status RunWorker(int worker, const WorkerContext& context);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WORKER_H_
