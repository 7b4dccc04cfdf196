// The trainer: owns the parameter store, the update policy, the input pipeline, the workers
// (one thread each), evaluation and metrics, and runs one training job to completion.
//
//   hogwild::TrainerOptions options;
//   options.mode = hogwild::Mode::kAsync;   // or kSync: tower averaging
//   options.num_workers = 2;
//   HOGWILD_ASSIGN_OR_RETURN(hogwild::TrainResult result, hogwild::Train(options, train, test));
//
// Errors: the first error of any worker (with the worker id and step), after every worker has
// stopped: a failed worker cancels the update policy, the input pipeline and the step
// boundary, so no worker can stay blocked at the step barrier, on its queue or at a checkpoint.
// A NaN/Inf loss or gradient is such an error (the divergence guard); no checkpoint is written
// after an error, so the last good one stays, and the message names it. Invalid options give kInvalidArgument
// naming the option, its value and the allowed range.
// Thread-safety: Train() may be called concurrently with different options and datasets.
#ifndef HOGWILD_TRAINER_TRAINER_H_
#define HOGWILD_TRAINER_TRAINER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sync/update_policy.h"
#include "trainer/data/dataset.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/device.h"
#include "trainer/model/lr_schedule.h"
#include "trainer/model/model.h"

namespace hogwild {

struct TrainerOptions {
  Mode mode = Mode::kAsync;
  int num_workers = 1;       // >= 1
  int64_t batch_size = 64;   // per worker in async mode, global in sync mode; >= 1
  int64_t epochs = 10;       // passes over the training set, >= 1
  LrSchedule lr;
  SgdOptions sgd;
  uint64_t seed = 1;         // initialization and data order
  ModelSpec model;           // input_shape and num_classes are taken from the dataset

  // Evaluate on the test set every `eval_every_steps` global steps (0: only at the end), or,
  // if eval_every_epochs > 0, every that many epochs (converted to global steps).
  int64_t eval_every_steps = 0;
  double eval_every_epochs = 1.0;
  int64_t log_every_steps = 100;  // convergence-log rows per worker, >= 1
  std::string log_path;           // convergence log (CSV, or JSON Lines if *.jsonl); "" = none
  bool progress = false;          // print a progress line to stdout while training
  int prefetch = 4;               // batches queued per worker

  // Where the workers run (trainer/device.h). {cpu}: num_workers CPU workers. A list of GPUs:
  // workers_per_device workers on each (one stream each), so WorkerCount() = GPUs x
  // workers_per_device and num_workers is not used. Parameter placement per DESIGN.md: async
  // on GPUs uses sync/device_hogwild.h, sync uses sync/nccl_tower_average.h.
  std::vector<DeviceSpec> devices = {DeviceSpec::Cpu()};
  int workers_per_device = 1;  // >= 1, GPUs only
  // Async on GPUs: keep the master parameters in pinned host memory even where a GPU could
  // hold them (exercises the several-GPUs-without-peer-access path on one GPU).
  bool force_host_master = false;

  // Called by each worker before each of its steps (worker id, its step index); a non-OK
  // status stops training like any worker error. For fault injection and custom callbacks.
  std::function<absl::Status(int worker, int64_t step)> step_hook;

  // Checkpoints (trainer/checkpoint.h, trainer/step_boundary.h). "" = none.
  std::string checkpoint_dir;
  int64_t checkpoint_every_steps = 0;   // global steps, 0 = not by steps; >= 0
  double checkpoint_every_seconds = 0;  // 0 = not by time; >= 0
  // Continue from the checkpoint in checkpoint_dir when there is one (none: start afresh).
  // Its signature (model, mode, workers, batch size, seed, training-set size) must match.
  bool resume = false;
  // When it becomes true, every worker finishes its current step, a checkpoint is written (if
  // checkpoint_dir is set) and Train() returns OK with TrainResult::stopped_early. May be null;
  // the pointee must outlive Train(). Set it from a signal handler or any thread.
  const std::atomic<bool>* stop_requested = nullptr;
};

struct TrainResult {
  std::string mode;  // "async" / "sync"
  int num_workers = 0;
  double wall_time_s = 0.0;
  int64_t examples = 0;     // training examples processed
  int64_t steps = 0;        // global steps (updates applied to the parameters)
  double examples_per_s = 0.0;
  double final_test_loss = 0.0;
  double final_test_accuracy = 0.0;
  double staleness_mean = 0.0;
  uint64_t staleness_max = 0;
  std::vector<uint64_t> staleness_histogram;  // see TrainingMetrics::kStalenessBuckets
  std::vector<float> params;  // [P] final parameters
  bool stopped_early = false;        // a stop was requested (stop_requested) and honoured
  int64_t resumed_from_step = -1;    // the checkpoint's global step, or -1 (not resumed)
  int64_t last_checkpoint_step = -1; // global step of the last checkpoint written, or -1
};

// The number of workers the options ask for: num_workers on the CPU, GPUs x workers_per_device
// on GPUs.
int WorkerCount(const TrainerOptions& options);

// Validates options against the dataset; the message names the option and the allowed range.
absl::Status ValidateOptions(const TrainerOptions& options);

// Trains `options.model` on `train`, evaluating on `test` (may be empty: no evaluation).
absl::StatusOr<TrainResult> Train(const TrainerOptions& options, const Dataset& train,
                                  const Dataset& test);

// The end-of-run summary as a few human-readable lines.
std::string FormatSummary(const TrainResult& result);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_TRAINER_H_
