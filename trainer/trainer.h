// The trainer: runs one training job to completion.
//
//   hogwild::TrainerOptions options;          // trainer/trainer_options.h
//   options.mode = hogwild::Mode::kAsync;     // or kSync: tower averaging
//   options.num_workers = 2;
//   HOGWILD_ASSIGN_OR_RETURN(hogwild::TrainResult result, hogwild::Train(options, train, test));
//
// Train() validates the options, builds the model and its parameter store, picks the update
// policy (sync/policy_factory.h; on GPUs through the GPU runtime, trainer/gpu_runtime.h), resumes
// from a checkpoint when asked, runs one worker per device in a WorkerGroup
// (trainer/worker_group.h), reports progress to the options' sink and evaluates the result.
//
// Errors: the first error of any worker (with the worker id and step), after every worker has
// stopped: a failed worker cancels the update policy, the input pipeline and the step
// boundary, so no worker can stay blocked at the step barrier, on its queue or at a checkpoint.
// A NaN/Inf loss or gradient is such an error (the divergence guard); no checkpoint is written
// after an error, so the last good one stays, and the message names it. Invalid options give
// kInvalidArgument naming the option field (TrainerOptions::<field>), its value and the range;
// a model too large for memory gives kResourceExhausted with the bytes asked. Checkpoint
// directory and log problems (CheckOutputs) are reported before any work. A convergence-log
// write, fsync or close error stops the run with that error (trainer/metrics/convergence_log.h).
// GPU devices in a program without the GPU runtime (not linked with //trainer:gpu, e.g. built
// with --config=cpu) give kFailedPrecondition, "TrainerOptions::devices=gpu:0: this program was
// built without CUDA ...", before any work; without a usable GPU, the reason (no driver, ...).
// Resuming a version-1 checkpoint (which does not record its dataset) writes a one-line
// warning to stderr.
// Thread-safety: Train() may be called concurrently with different options and datasets.
#ifndef HOGWILD_TRAINER_TRAINER_H_
#define HOGWILD_TRAINER_TRAINER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "trainer/cluster.h"
#include "trainer/data/dataset.h"
#include "trainer/trainer_options.h"

namespace hogwild {

struct TrainResult {
  Mode mode = Mode::kAsync;
  int num_workers = 0;
  double wall_time_s = 0.0;
  int64_t examples = 0;  // training examples processed
  int64_t steps = 0;     // global steps (updates applied to the parameters)
  double examples_per_s = 0.0;
  double final_test_loss = 0.0;
  double final_test_accuracy = 0.0;
  double staleness_mean = 0.0;
  uint64_t staleness_max = 0;
  // Gradients computed but not applied (UpdatePolicy::num_dropped): backup's late ones, async's
  // too stale ones (SgdOptions::max_delay). Their examples count in `examples`; the staleness
  // statistics are those of the applied updates.
  int64_t dropped = 0;
  // The workers' communication (UpdatePolicy::communication, the log's last exchanges and
  // bytes_per_worker): rounds, and the logical bytes one worker sent in them (mean over the
  // workers; docs/convergence_log.md). 0 where the workers share memory.
  int64_t exchanges = 0;
  double bytes_per_worker = 0.0;
  std::vector<uint64_t> staleness_histogram;  // see TrainingMetrics::kStalenessBuckets
  std::vector<float> params;                  // [P] final parameters
  // With TrainerOptions::ema_decay: the moving average of the weights ([P]) and its test loss and
  // accuracy (0 without a test set); empty and 0 without an EMA.
  std::vector<float> ema_params;
  double final_ema_test_loss = 0.0;
  double final_ema_test_accuracy = 0.0;
  // The periodic evaluations during training (the final one excluded) and their wall time,
  // summed (TrainingMetrics::Snapshot, the log's eval_seconds): inline on the workers
  // (TrainerOptions::eval_in_background false) wall_time_s - eval_seconds is the run's time
  // without them; on the evaluator thread they overlap the training.
  int64_t periodic_evals = 0;
  double eval_seconds = 0.0;
  bool evals_in_background = false;  // TrainerOptions::eval_in_background, as the run used it
  // Seconds workers waited to hand a snapshot over (EvalRunner::wait_seconds: its queue full,
  // or inline another worker's evaluation running), summed over workers.
  double eval_wait_seconds = 0.0;
  bool stopped_early = false;         // a stop was requested (stop_requested) and honoured
  int64_t resumed_from_step = -1;     // the checkpoint's global step, or -1 (not resumed)
  int64_t last_checkpoint_step = -1;  // global step of the last checkpoint written, or -1
  // A job of several processes (TrainerOptions::cluster): the ranks, and this rank's
  // communication. num_workers, examples, steps, examples_per_s and staleness are this rank's
  // (steps: its local updates in async mode, the job's steps in sync); examples_all_ranks sums
  // every rank's examples. params and the test figures are the same on every rank.
  int num_ranks = 1;
  int64_t examples_all_ranks = 0;
  ExchangeStats exchange;
};

// What Train() checks first about where it writes, and a caller may check before loading data,
// so a mistake costs no time:
//   - a non-empty regular file at `options.log_path` is not replaced without
//     TrainerOptions::overwrite_log: otherwise kFailedPrecondition naming the path, its size and
//     that option (ConvergenceLog::CheckWouldNotReplace);
// and about `options.checkpoint_dir` (nothing when it is empty):
//   - checkpoints can be written there: CheckCheckpointDirWritable (it is created if missing,
//     and removed again, with the parents created for it, when any check here refuses the run);
//     errors name TrainerOptions::checkpoint_dir, e.g. kInvalidArgument
//     "TrainerOptions::checkpoint_dir=/proc/x: cannot create the directory (...)";
//   - without TrainerOptions::resume or TrainerOptions::overwrite_checkpoint, it holds no
//     checkpoint: otherwise kFailedPrecondition naming its global step (or that it is damaged,
//     and why) and both options, so a forgotten --resume cannot silently replace a run's work.
// Thread-safety: as Train().
absl::Status CheckOutputs(const TrainerOptions& options);

// What a job of `num_ranks` processes (TrainerOptions::cluster) cannot do or needs of the
// options, checked without the data (Train() checks it again, and the batch against the
// shards): the mode (async or sync), CPU devices (GPU devices in sync mode only: NCCL over every
// rank's GPUs, sync/nccl_tower_average.h, each rank on its own GPUs by trainer/rank_gpus.h's
// rule; compiled, not yet executed on a GPU), SGD with or without momentum only (no other
// optimizer, shared state, clipping, EMA, bias exemption, lr scaling), checkpoints in sync mode
// only, exchange_every >= 1, and in sync mode a global batch of at least num_ranks examples.
// OK when num_ranks <= 1. Call it before CheckOutputs, which creates the checkpoint directory.
// Errors: kInvalidArgument naming the option field, its value and the rank count. Pure.
absl::Status CheckClusterOptions(const TrainerOptions& options, int num_ranks);

// Trains `options.model` on `train`, evaluating on `test` (may be empty: no evaluation).
absl::StatusOr<TrainResult> Train(const TrainerOptions& options, const Dataset& train,
                                  const Dataset& test);

// The end-of-run summary as a few human-readable lines (with an EMA, its test accuracy too).
std::string FormatSummary(const TrainResult& result);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_TRAINER_H_
