// Simulated scale: W logical workers (64, 256, ... up to kMaxWorkers) trained on one thread by a
// deterministic discrete-event simulation, so a 2-core machine can study how the update
// policies behave with many workers. The arithmetic is the real trainer's (Model, Tower on a
// CpuBackend, the LrSchedule, BatchPlan's data order, the Evaluator, the weight EMA) and the
// update is the policies' own code: async and ssp call the real Hogwild and StaleSynchronous
// objects from the event loop (BeginStep at a step's read, FinishStep at its finish; ssp's bound
// is StaleSynchronous::MayBeginStep, the rule its BeginStep waits on); sync, backup and
// local_sgd, whose barriers one thread cannot meet, call the arithmetic those policies run after
// their barriers (sync/tower_sum.h's worker-order sum, sync/sliced_update.h's update,
// sync/optimizer_slots.h's ApplyOwnGradient). So every optimizer of kernels/optimizer.h,
// clipping by global norm, the bias exemption (weight_decay_biases), batch norm's moving
// statistics and the weight EMA (async and sync, as the trainer) run simulated. Only time is
// simulated (sim/compute_time.h draws each step's compute time). Every mode of the real trainer
// (core/mode.h) is simulated:
//
// async (Hogwild!): every worker starts its first step at simulated time 0. A worker's step
// starts by reading the current parameters and ends, compute_time later, by applying its update.
// Updates are applied one at a time in simulated-time order (ties: lower worker id first), which
// is what lock-free Hogwild! collapses to when no two writes overlap, so no update is lost and
// the staleness of each update (updates applied by others between its read and its write) is
// exact. The gradient is computed at read time on the parameters of that instant and held until
// the finish event, where the learning rate of the global step at that moment is applied (as
// the real worker, which reads the global step after its forward/backward pass). Each worker
// draws from its own shard of each epoch (BatchPlan, async) and keeps its own optimizer state
// (or shares one: shared_optimizer_state).
// With no jitter the workers run in lockstep: every update after the first W has staleness
// exactly W - 1 until the first worker runs out of batches (all at once when shards are equal).
// ssp (stale synchronous parallel, sync/stale_synchronous.h): async, except that a worker whose
// clock (steps completed) is more than `staleness_bound` ahead of the smallest clock of the
// workers that still have data does not start its next step until that gap closes; it then
// starts at the simulated time of the update that closed it (held-back workers start in worker
// order). A bound larger than the run is async bitwise.
// sync (tower averaging): every step, all W towers compute on their shard of the global batch
// from the same parameters; the gradients are summed in worker order (as TowerAverage) and one
// update is applied. The step's simulated time is the slowest tower's compute time plus
// `allreduce_time_s`. The parameters equal the real sync trainer's bitwise for the same options.
// backup (sync with b backup workers, sync/backup_sync.h): worker w's k-th step computes its
// part of global step k. A step closes when the first W - b parts arrive (simulated-time order,
// ties by worker id); their gradients, from the parameters the step opened with, are summed in
// worker order and rescaled to the examples used, as BackupSync::Apply, and the update is
// applied `allreduce_time_s` later, when the contributors and the next step start. A part that
// arrives after its step closed is dropped (SimResult::dropped; its examples still count as
// seen, as in the real log) and its worker starts its next part at once, so a persistently slow
// worker keeps being dropped, as in the real policy. The run ends with its last update: parts
// still being computed then (the last step's late ones, a lagging worker's remaining ones) are
// neither dropped nor seen, where a real run computes them before it ends. b = 0 is sync
// bitwise (times too).
// locked (sync/locked.h): async's shards, but a worker's whole step (read, compute_time, update)
// holds one lock: a worker asks for it when its previous step ends (all at time 0 first) and
// the requests are served first come first served, ties by lower worker id, so every update has
// staleness 0 and the updates are serial.
// round_robin (sync/round_robin.h): async's shards; every worker reads the parameters its own
// previous update left (the first step: the initial ones, at time 0) and computes at once, but
// the updates land in turn, worker 0, 1, ..., W - 1, 0, ..., each when both its gradient and
// the previous update are done; a worker whose data is used up leaves the rotation. The reads
// and the order are those of the real policy.
// local_sgd (periodic averaging, sync/local_sgd.h): rounds of H = average_every global steps;
// in a round each worker takes H local steps on its own replica (its part of each global batch,
// the gradient a mean over its part, its own optimizer state, the learning rate of the round's
// first step), and the replicas are averaged (summed in worker order, divided by W) at the slowest
// worker's end of round plus `allreduce_time_s`. The parameters equal the real local_sgd
// trainer's bitwise for the same options (it is deterministic); the H global steps of a round
// are logged at its end.
// local_sgd with Streaming DiLoCo's options (TrainerOptions::streaming, sync/streaming.h;
// sim/streaming_rounds.cc): every replica is kept, and step after step each worker takes its
// local step, then the merge and the exchange due at that step are made as LocalSgd makes them
// (the same schedule, mean, outer step and MixIntoReplica), so the parameters equal the real
// trainer's bitwise. Time: each worker has its own clock. The exchange of a fragment at step s
// starts when the last worker has finished step s and takes allreduce_time_s / F (a fragment's
// bytes); each worker merges it at the end of its step s + tau and, if it has not arrived by
// then, waits for it (tau = 0: every exchange is a barrier plus its time; an exchange shorter
// than tau steps is never waited for). The global steps since the previous exchange are logged
// at an exchange's arrival. At the end of the data the pending merges are waited for, then the
// fragments not exchanged at the last step are exchanged, one after another (their times add).
//
// Evaluations take no simulated time. The convergence log has the real runs' schema
// (trainer/metrics/convergence_log.h) with wall_time_s in simulated seconds; its train rows are
// one per `log_every_steps` global steps over all workers (worker -1), not one per worker.
//
// Memory: async, ssp and round_robin hold per worker the policy's [P] parameter snapshot and one
// [P] gradient from its read to its update; they and locked, unless shared, NumStateSlots [P]
// optimizer-state buffers per worker (momentum: 1; adam: 2); local_sgd NumStateSlots buffers per
// worker (and its replica with streaming options): W x P x 4 bytes per per-worker array,
// refused above SimOptions::max_state_bytes before anything is allocated. Sync and backup hold a
// few [P] arrays and one optimizer state, local_sgd a few [P] arrays.
//
// Reproducibility: the result (parameters, counts, staleness, simulated times) and the log are a
// pure function of the options and the data, bitwise, on one build and machine; only
// SimResult::real_time_s varies.
#ifndef HOGWILD_SIM_SIMULATOR_H_
#define HOGWILD_SIM_SIMULATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/compute_time.h"
#include "trainer/data/dataset.h"
#include "trainer/trainer_options.h"
#include "trainer/workloads/workload.h"

namespace hogwild {

inline constexpr double kMaxSimAllreduceTimeS = 1e6;
inline constexpr double kMaxSimBandwidth = 1e15;  // bytes per second

struct SimOptions {
  // The run as the real trainer would take it. Used: mode, num_workers (the simulated W),
  // batch_size, epochs, drop_last, lr, sgd, weight_decay_biases, ema_decay, ema_num_updates,
  // seed (initialization, data order and, mixed, the compute times), model,
  // eval_every_steps/eval_every_epochs, log_every_steps (global steps here), log_path,
  // overwrite_log. Refused when set (they have no meaning in a simulation): devices
  // other than {cpu}, workers_per_device, checkpoint_dir, resume, step_hook, progress,
  // log_row_sink, stop_requested, stragglers (real-thread stragglers: the simulation's are
  // compute.stragglers).
  TrainerOptions trainer;
  ComputeTimeOptions compute;
  // sync, backup, local_sgd: simulated seconds added to each step (local_sgd: each averaging;
  // with F streaming fragments each fragment's exchange takes 1/F of it, overlapped as above)
  // for the all-reduce, in [0, 1e6]; async_local_sgd: each push and pull, which its worker waits
  // for.
  double allreduce_time_s = 0.0;
  // Instead of the fixed allreduce_time_s, the time of an exchange from its bytes (the alpha-beta
  // model; Thakur, Rabenseifner, Gropp 2005): latency_s + wire bytes / bandwidth_bytes_per_s,
  // where an exchange of the B = 4 x (parameters exchanged) bytes puts on each worker's link
  //   all-reduce (sync, backup, local_sgd, a Streaming DiLoCo fragment): 2 (W - 1) / W x B (the
  //              ring algorithm's reduce-scatter and all-gather)
  //   push and pull (async_local_sgd): 2 B (its pseudo-gradient out, the parameters back)
  // Off (0) by default; with it on, allreduce_time_s must be 0. latency_s in [0, 1e6] needs
  // bandwidth_bytes_per_s in (0, 1e15].
  double latency_s = 0.0;
  double bandwidth_bytes_per_s = 0.0;
  // The most memory the simulation's per-worker state may take (see Memory above), >= 1.
  int64_t max_state_bytes = int64_t{8} << 30;
};

struct SimResult {
  Mode mode = Mode::kAsync;
  int num_workers = 0;
  double simulated_time_s = 0.0;  // simulated seconds until the last update
  double real_time_s = 0.0;       // seconds this process took (not reproducible)
  int64_t examples = 0;           // training examples processed
  int64_t steps = 0;              // global steps (updates applied)
  double examples_per_simulated_s = 0.0;
  double final_test_loss = 0.0;  // 0 without a test set
  double final_test_accuracy = 0.0;
  double staleness_mean = 0.0;
  uint64_t staleness_max = 0;
  // staleness_histogram[s]: updates of staleness s, for s in [0, staleness_max] (exact, no
  // overflow bucket).
  std::vector<uint64_t> staleness_histogram;
  // staleness_per_update[i]: staleness of the i-th update applied, [steps] (sync: all 0); 4
  // bytes per update.
  std::vector<uint32_t> staleness_per_update;
  // [W] steps each worker's gradient was used in: async, ssp, locked and round_robin its
  // updates; sync, backup and local_sgd the global steps it contributed to.
  std::vector<int64_t> worker_steps;
  // [W] backup: parts dropped as late; async: updates dropped as too stale
  // (SgdOptions::max_delay; their examples count in `examples`); other modes: zeros.
  std::vector<int64_t> dropped;
  // The simulated workers' communication, as TrainResult's (UpdatePolicy::communication, the
  // log's last exchanges and bytes_per_worker): rounds, and the logical bytes one worker sent
  // in them (mean over the workers). 0 where the workers share memory.
  int64_t exchanges = 0;
  double bytes_per_worker = 0.0;
  // async and ssp: the largest clock gap seen when a step started (its worker's completed
  // steps minus the smallest of the workers that still had data); ssp keeps it <= the bound.
  // Other modes: 0.
  int64_t max_clock_gap = 0;
  std::vector<float> params;  // [P] final parameters
  // With TrainerOptions::ema_decay: the weight EMA's final average ([P]) and its test loss and
  // accuracy (0 without a test set); else empty and 0.
  std::vector<float> ema_params;
  double final_ema_test_loss = 0.0;
  double final_ema_test_accuracy = 0.0;
};

// Checks the exchange's time model alone (no mode, no data): allreduce_time_s, latency_s and
// bandwidth_bytes_per_s in range, a latency only with a bandwidth, and not both models. Errors:
// kInvalidArgument naming the SimOptions fields (a front end checks its flags' ranges in its own
// units first; the combination messages name fields without values). Pure.
absl::Status CheckExchangeTimeModel(const SimOptions& options);

// Checks the options without data: the capabilities table's simulated cell of `workload` and the
// mode (core/capabilities.h), ValidateOptions on `trainer`, the compute-time options, the
// simulation's own fields and the refused TrainerOptions fields. Errors: kInvalidArgument naming
// the field (`TrainerOptions::num_workers`, `ComputeTimeOptions::jitter`,
// `SimOptions::allreduce_time_s`, ...), the value and the allowed range, or the table's sentence
// after `TrainerOptions::mode: `.
absl::Status ValidateSimOptions(const SimOptions& options,
                                WorkloadKind workload = WorkloadKind::kDense);

// Whether the per-worker state of a simulation of a model of `num_params` parameters fits in
// options.max_state_bytes (see Memory above), for a check before any data is loaded. Errors:
// kResourceExhausted naming the bytes, W and P and what they hold. Pure.
absl::Status CheckSimStateFits(const SimOptions& options, int64_t num_params);

// Runs the simulation on `train`, evaluating on `test` (may be empty: no evaluation). Errors:
// those of ValidateSimOptions and ValidateOptionsForDataset; kFailedPrecondition when the log
// exists and overwrite_log is not set; kResourceExhausted when the state exceeds
// max_state_bytes (naming the bytes, W and P); kInvalidArgument when training diverges (a
// non-finite loss or gradient, naming the global step); log write errors.
// Thread-safety: runs on the calling thread only; concurrent calls are independent.
absl::StatusOr<SimResult> Simulate(const SimOptions& options, const Dataset& train,
                                   const Dataset& test);

// The simulation of any workload (trainer/workloads/workload.h: the dense networks, the sparse
// linear models, matrix factorization), trained with options.trainer's run settings; the
// workload replaces options.trainer.model and the data sets (its training examples are what
// BatchPlan deals out; it evaluates on its test set when it has one). Simulate() is this with
// the DenseWorkload of options.trainer.model on `train` and `test`. A workload that owns its
// regularizer (the sparse ones) is simulated with options.trainer.sgd.weight_decay = 0 by the
// caller. Errors and thread-safety: Simulate()'s.
absl::StatusOr<SimResult> SimulateWorkload(const SimOptions& options, const Workload& workload);

// The end-of-run summary as a few human-readable lines (simulated and real seconds).
std::string FormatSimSummary(const SimResult& result);

}  // namespace hogwild

#endif  // HOGWILD_SIM_SIMULATOR_H_
