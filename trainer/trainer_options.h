// What a training run is asked to do: TrainerOptions, their limits as named constants, and
// their validation. The library names a bad option by its field (`TrainerOptions::num_workers`);
// only the command line turns those names into flags (trainer/cli/option_flags.h).
#ifndef HOGWILD_TRAINER_TRAINER_OPTIONS_H_
#define HOGWILD_TRAINER_TRAINER_OPTIONS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/mode.h"
#include "sync/mode_options.h"
#include "sync/outer_optimizer.h"
#include "sync/streaming.h"
#include "sync/update_policy.h"
#include "trainer/device.h"
#include "trainer/metrics/progress.h"
#include "trainer/model/lr_schedule.h"
#include "trainer/model/model.h"
#include "trainer/straggler.h"

namespace hogwild {

class Cluster;  // trainer/cluster.h

// The allowed ranges of the integer options, inclusive. They bound memory and thread counts
// against typing mistakes, not against what a machine can do.
inline constexpr int kMaxWorkers = 4096;
inline constexpr int kMaxWorkersPerDevice = 64;
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 24;
inline constexpr int64_t kMaxEpochs = 1000000;
inline constexpr int kMaxPrefetch = 1024;
inline constexpr int64_t kMaxStalenessBound = int64_t{1} << 40;
inline constexpr int64_t kMaxAverageEvery = int64_t{1} << 40;

struct TrainerOptions {
  Mode mode = Mode::kAsync;
  int num_workers = 1;  // CPU workers, in [1, kMaxWorkers]
  // Per worker in async and ssp modes, global (split across the workers) in sync, backup and
  // local_sgd modes; [1, kMaxBatchSize].
  int64_t batch_size = 64;
  int64_t epochs = 10;  // passes over the training set, [1, kMaxEpochs]
  // Leave out each epoch's short last batch (PyTorch's drop_last, TensorFlow's drop_remainder;
  // trainer/data/input_pipeline.h): every step then has batch_size examples, and the run's last
  // update, whose parameters the final accuracy measures, is not a noisy step of a few examples.
  // The left-out examples (fewer than batch_size per worker in async and ssp modes, per epoch in
  // the others) differ from epoch to epoch. The real trainer and the simulation (sim/) alike. Not
  // with checkpoint_dir yet (a checkpoint does not record it).
  bool drop_last = false;
  LrSchedule lr;
  SgdOptions sgd;  // sgd.no_decay is Train()'s to fill (from weight_decay_biases); leave it empty
  // Whether sgd.weight_decay applies to biases too (PyTorch's default) or only to the weights
  // (false: most recipes exempt biases; Layer::num_bias_params). CPU devices only.
  bool weight_decay_biases = true;
  // Exponential moving average of the weights (trainer/weight_ema.h): 0 = none, else the decay
  // in (0, 1), e.g. 0.9999; updated after each applied update (async: by the worker that applied
  // it, lock-free; sync: once per step). The final result reports the EMA weights' test
  // accuracy too. async and sync modes on cpu devices; checkpoints hold it.
  float ema_decay = 0.0f;
  // TensorFlow's num_updates warm-up: decay min(ema_decay, (1 + step) / (10 + step)).
  bool ema_num_updates = true;
  // ssp only (sync/stale_synchronous.h): a worker starts a step at most this many steps (of its
  // own) ahead of the slowest worker; [0, kMaxStalenessBound]. 0 is bulk-synchronous; a bound
  // at least the run's steps per worker never waits (async).
  int64_t staleness_bound = 3;
  // backup only (sync/backup_sync.h): each step uses the first WorkerCount() - backup_workers
  // gradients to arrive and drops the others; [0, WorkerCount() - 1]. 0 is sync mode exactly.
  int backup_workers = 0;
  // local_sgd only (sync/local_sgd.h): local steps between two averagings of the workers'
  // replicas; [1, kMaxAverageEvery]. local_sgd needs batch_size >= WorkerCount() (each worker
  // gets its own part of every global batch).
  int64_t average_every = 8;
  // local_sgd only (sync/outer_optimizer.h): what each averaging applies to the shared
  // parameters; the default is plain averaging, lr 0.7 with Nesterov momentum 0.9 is DiLoCo.
  // async_local_sgd reads average_every (local steps per round) and outer (what each push
  // applies) too (sync/async_local_sgd.h).
  OuterOptimizer outer;
  // async_local_sgd only (sync/async_local_sgd.h): pushes per update of the outer momentum (the
  // delayed Nesterov update; [1, kMaxDelayedNesterov], > 1 needs outer momentum), and dynamic
  // local updates (each worker's round length from its measured speed).
  int64_t delayed_nesterov = 1;
  bool dynamic_local_updates = false;
  // local_sgd only (sync/streaming.h): Streaming DiLoCo's F fragments exchanged at staggered
  // steps, each exchange overlapping tau steps and merged with factor alpha; the default is one
  // exchange of all the parameters every H steps. Not with checkpoint_dir unless the default.
  StreamingOptions streaming;
  uint64_t seed = 1;  // initialization and data order
  ModelSpec model;    // input_shape and num_classes are taken from the dataset

  // Evaluate on the test set every `eval_every_steps` global steps (0: only at the end), or,
  // if eval_every_epochs > 0, every that many epochs (converted to global steps). Both >= 0.
  int64_t eval_every_steps = 0;
  double eval_every_epochs = 1.0;
  // Periodic evaluations on an evaluator thread of their own (the worker that reaches an
  // evaluation point only copies the parameters and goes on; the copies queue, so every point
  // keeps its row; trainer/metrics/eval_runner.h), or, false, inline on that worker (it stalls
  // for each one). The log's rows are the same either way.
  bool eval_in_background = true;
  int64_t log_every_steps = 100;  // convergence-log rows per worker, >= 1
  std::string log_path;           // convergence log (CSV, or JSON Lines if *.jsonl); "" = none
  // Replace a non-empty regular file at log_path. Without it, Train() refuses to start rather
  // than truncate a previous run's log (also when resuming: give each part its own log).
  bool overwrite_log = false;
  int prefetch = 4;  // batches queued per worker, [1, kMaxPrefetch]

  // Receives every convergence-log row (trainer/metrics/convergence_log.h: LogRow, the schema
  // of docs/convergence_log.md), whether or not there is a log_path: the same rows, in the same
  // order, each once, after the log got it. Empty: none. Thread-safety: called from the worker
  // threads (train rows, periodic evaluations), the evaluator thread (periodic evaluations and the
  // rows held behind them) and from the thread that called Train() (the last rows), one call at a
  // time: calls are serialized under the lock that orders the rows, so `step` never decreases from
  // one call to the next. Every worker that finishes a step meanwhile waits for the call, so keep
  // it short, and never call into this run from it. A non-OK status stops the run like a log write
  // error: Train() returns that status once every worker has stopped, and the sink is not called
  // again.
  LogRowSink log_row_sink;

  // Called with a progress report every `progress_period` while training and once at the end
  // (trainer/metrics/progress.h), from the thread that called Train(). Null: no reports. The
  // command line prints a progress line.
  ProgressSink progress;
  absl::Duration progress_period = absl::Seconds(2);

  // Where the workers run (trainer/device.h). {cpu}: num_workers CPU workers. A list of GPUs:
  // workers_per_device workers on each (one stream each), so WorkerCount() = GPUs x
  // workers_per_device and num_workers is not used. Parameter placement: async on GPUs uses
  // sync/device_hogwild.h, sync uses sync/nccl_tower_average.h.
  std::vector<DeviceSpec> devices = {DeviceSpec::Cpu()};
  int workers_per_device = 1;  // [1, kMaxWorkersPerDevice], GPUs only
  // Async on GPUs: keep the master parameters in pinned host memory even where a GPU could
  // hold them (exercises the several-GPUs-without-peer-access path on one GPU).
  bool force_host_master = false;

  // Called by each worker before each of its steps (worker id, its step index); a non-OK
  // status stops training like any worker error. For fault injection and custom callbacks.
  std::function<absl::Status(int worker, int64_t step)> step_hook;

  // Stragglers on the real threads (trainer/straggler.h): chosen workers slowed by a factor,
  // and/or random exponential delays after steps, seeded by `seed`; each row of the convergence
  // log records its steps' delay. Default: none.
  StragglerOptions stragglers;

  // Checkpoints (trainer/checkpoint/). "" = none. On CPUs and GPUs alike.
  std::string checkpoint_dir;
  int64_t checkpoint_every_steps = 0;   // global steps, 0 = not by steps; >= 0
  double checkpoint_every_seconds = 0;  // 0 = not by time; >= 0, finite
  // Continue from the checkpoint in checkpoint_dir when there is one (none: start afresh).
  // Its signature (model, mode, workers, batch size, seed, training set) must match.
  bool resume = false;
  // Start afresh although checkpoint_dir holds a checkpoint (good or damaged), replacing it at
  // the first save. Without it (and without resume), Train() refuses to start over an existing
  // checkpoint, so a forgotten resume cannot silently destroy a run's work. Needs
  // checkpoint_dir; contradicts resume.
  bool overwrite_checkpoint = false;
  // When it becomes true, every worker finishes its current step, a checkpoint is written (if
  // checkpoint_dir is set) and Train() returns OK with TrainResult::stopped_early. May be null;
  // the pointee must outlive Train(). Set it from a signal handler or any thread.
  const std::atomic<bool>* stop_requested = nullptr;

  // The processes of a job started by mpirun (trainer/cluster.h, mpi/mpi_cluster.h); null: this
  // process alone. With R > 1 ranks every rank calls Train() with the same options: its
  // num_workers workers are the job's workers [rank·W, (rank+1)·W) of R·W; async or sync mode
  // on CPU workers; checkpoints are the whole job's (rank 0 writes them, every rank reads them);
  // rank 0 alone writes log_path and evaluates periodically.
  // Must outlive Train().
  Cluster* cluster = nullptr;
  // Async across processes: a rank pushes its accumulated local updates and pulls the global
  // parameters every this many of its local updates, >= 1 (mpi/sharded_hogwild.h).
  int64_t exchange_every = 8;
};

// The number of workers the options ask for: num_workers on the CPU, GPUs x workers_per_device
// on GPUs. Pure.
int WorkerCount(const TrainerOptions& options);

// The examples behind one round of updates, which LrSchedule::scaling scales the learning rate
// by: batch_size where it is the global batch (sync, backup, local_sgd: core/mode.h
// SplitsGlobalBatch), batch_size x WorkerCount() where it is per worker (async, ssp: the batches
// of all workers in flight, Goyal et al.'s kn). Pure.
int64_t GlobalBatch(const TrainerOptions& options);

// The mode's own options as the policies take them (sync/mode_options.h): the fields of
// `options` that options.mode reads (staleness_bound in ssp, ..., delayed_nesterov and
// dynamic_local_updates in async_local_sgd), the others at their defaults. Pure.
ModeOptions ModeOptionsOf(const TrainerOptions& options);

// The inverse: sets the fields of `options` that options.mode reads from `mode_options` and
// leaves the others as they are (so that ValidateOptions refuses nothing a front end read for
// another mode).
void SetModeOptions(const ModeOptions& mode_options, TrainerOptions& options);

// Checks every option against its range (no dataset needed), and refuses an option that would
// do nothing in this mode, on these devices or with these other options (so nothing the caller
// set is silently dropped). A field left at its default value is never refused. The rules:
//   sgd.staleness_aware_lr   async only (sync updates have staleness 0)
//   staleness_bound          ssp only;   backup_workers   backup only
//   average_every, outer     local_sgd and async_local_sgd only
//   streaming                local_sgd only
//   delayed_nesterov, dynamic_local_updates   async_local_sgd only
//   mode                     a mode that dense networks run on threads (cpu devices) or on GPUs
//                            (core/capabilities.h; the table's sentence after
//                            `TrainerOptions::mode: `)
//   checkpoint_dir           the modes with checkpoints (core/capabilities.h), and not with
//                            drop_last
//   workers_per_device != 1  GPU devices only;   num_workers != 1   CPU devices only
//   force_host_master        async on GPUs only
//   eval_every_steps > 0     only with eval_every_epochs = 0 (the epoch period takes precedence)
//   model.hidden             mlp only (other than the default {256, 256} or empty)
//   lr.decay_rate != 1, lr.decay_steps != 1   only with a decaying schedule; a decaying
//                            schedule needs decay_rate < 1
//   weight_decay_biases=false   only with sgd.weight_decay > 0, on cpu devices
//   lr.reference_batch       only with lr.scaling linear or sqrt; the scaled base_lr must be a
//                            positive finite float32
// Errors: kInvalidArgument whose message names the field as `TrainerOptions::<field>` (or
// `LrSchedule::<field>`), the value and the allowed range or the mode that ignores it.
absl::Status ValidateOptions(const TrainerOptions& options);

// A setting that only some configurations read (a command-line flag and Python keyword of the
// same name), with why these options do not read it.
struct UnreadSetting {
  std::string name;   // e.g. "adam_beta1"
  std::string where;  // e.g. "with optimizer sgd; it is read by adam, adamw"
};

// The settings among the optimizer's constants (momentum, adam_beta1, adam_beta2,
// rmsprop_alpha, eps), optimizer_state, lr_reference_batch, ema_num_updates,
// weight_decay_biases, bn_momentum and log_every (read only with a log_path or a log_row_sink, so a
// front end calls this after setting the sink) that `options` would not read. ValidateOptions
// refuses such a field only when it differs from its default (log_every_steps: never, a row
// period without rows is harmless), since it cannot see what was typed; a front end
// that can (the command line, the Python module) refuses every setting listed here that its user
// typed, default value included, so nothing typed is silently dropped. The reasons name the other
// settings as the command line spells them (--lr_scaling=none) when `as_flags`, else as Python
// keywords (lr_scaling='none'). Pure.
std::vector<UnreadSetting> UnreadSettings(const TrainerOptions& options, bool as_flags);

// ValidateOptions, then the options against the training set's size `train_examples` (> 0):
// the batch must fit in the data a worker draws from, the global training set in sync mode and
// the largest worker shard (ceil(train_examples / workers)) in async and ssp modes, since a larger
// one would be cut to that size without a word (with drop_last: the smallest shard,
// floor(train_examples / workers), since a worker whose shard is smaller would take no step).
// Errors: kInvalidArgument naming `TrainerOptions::batch_size`, the batch and the number of
// examples; in async and sync modes on one process, a warm-up (lr.warmup_steps) or an evaluation
// period in steps (eval_every_steps) longer than the run's global steps, naming
// `LrSchedule::warmup_steps` or `TrainerOptions::eval_every_steps` and the run's length. Pure.
absl::Status ValidateOptionsForDataset(const TrainerOptions& options, int64_t train_examples);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_TRAINER_OPTIONS_H_
