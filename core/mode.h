// The training mode: which update policy (sync/update_policy.h) turns the workers' gradients
// into parameter updates. Shared by the update policies, the input pipeline (how a step's batch
// is dealt out), checkpoints and the CLI.
//
//   async       Hogwild! (sync/hogwild.h): lock-free, no waiting
//   sync        tower averaging (sync/tower_average.h): one averaged update per step
//   ssp         stale synchronous parallel (sync/stale_synchronous.h): Hogwild updates, but no
//               worker more than TrainerOptions::staleness_bound steps ahead of the slowest
//   backup      sync with backup workers (sync/backup_sync.h): each step averages the first
//               W - TrainerOptions::backup_workers gradients to arrive and drops the rest
//   local_sgd   periodic model averaging (sync/local_sgd.h): each worker trains its own
//               replica; the replicas are averaged every TrainerOptions::average_every steps
//   locked      the baseline Hogwild! removes (Niu et al. 2011): async's data split, but each
//               step (read, gradient, update) holds one lock shared by all workers
//   round_robin the Hogwild! paper's RR baseline: async's data split; the workers compute
//               concurrently but apply their updates in turn, worker 0, 1, ..., W - 1, 0, ...
//   async_local_sgd
//               asynchronous local SGD (sync/async_local_sgd.h, Liu et al. 2024): async's data
//               split; each worker trains its own replica and, every average_every local steps,
//               pushes its pseudo-gradient to the shared parameters through the outer optimizer
//               at once, without waiting for the others, and pulls the result
//   cyclades    (sparse workloads) conflict-free rounds of per-example updates (sparse/cyclades.h)
//   buckwild    (sparse linear models) Hogwild! with the model in 8- or 16-bit fixed point and
//               stochastic rounding (sparse/buckwild.h)
#ifndef HOGWILD_CORE_MODE_H_
#define HOGWILD_CORE_MODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hogwild {

// kCyclades (Pan et al., NIPS 2016) and kBuckwild (De Sa et al., NIPS 2015) run the sparse
// workloads' per-example updates (a schedule of them; a fixed-point model), not update policies:
// sparse/cyclades.h, sparse/buckwild.h.
enum class Mode {
  kAsync,
  kSync,
  kSsp,
  kBackup,
  kLocalSgd,
  kLocked,
  kRoundRobin,
  kAsyncLocalSgd,
  kCyclades,
  kBuckwild
};

inline constexpr Mode kAllModes[] = {Mode::kAsync,      Mode::kSync,          Mode::kSsp,
                                     Mode::kBackup,     Mode::kLocalSgd,      Mode::kLocked,
                                     Mode::kRoundRobin, Mode::kAsyncLocalSgd, Mode::kCyclades,
                                     Mode::kBuckwild};

// The modes that are update policies (sync/update_policy.h, sync/policy_factory.h): every mode
// but kCyclades and kBuckwild.
inline constexpr Mode kPolicyModes[] = {Mode::kAsync,      Mode::kSync,    Mode::kSsp,
                                        Mode::kBackup,     Mode::kLocalSgd, Mode::kLocked,
                                        Mode::kRoundRobin, Mode::kAsyncLocalSgd};

// "async", "sync", "ssp", "backup", "local_sgd", "locked", "round_robin", "async_local_sgd",
// "cyclades", "buckwild": the spelling of the build flag, the checkpoint file and the log;
// "unknown" for a value that names no mode. Pure.
const char* ModeName(Mode mode);

// The inverse of ModeName. Errors: kInvalidArgument naming the value and the allowed ones.
absl::StatusOr<Mode> ParseMode(absl::string_view name);

// How the input pipeline deals out the data (trainer/data/input_pipeline.h): true when every
// step splits one global batch of TrainerOptions::batch_size examples across the workers, so
// that all workers take the same number of steps (sync, backup, local_sgd); false when each
// worker walks its own shard of the epoch in batches of its own (async, ssp, locked,
// round_robin, async_local_sgd). Pure.
bool SplitsGlobalBatch(Mode mode);

// Whether the workers train replicas in rounds of TrainerOptions::average_every local steps that
// end in an outer step (sync/outer_optimizer.h): local_sgd (all workers together) and
// async_local_sgd (each worker on its own). These modes read average_every and the outer
// optimizer; the others refuse them. Pure.
bool HasLocalRounds(Mode mode);

// Whether the parameters may still change after the run's last global step is counted:
// async_local_sgd, whose workers push their last, partial rounds when their data ends
// (UpdatePolicy::WorkerDone) without counting a step. A periodic evaluation at the last step
// then does not see the final parameters, so the final evaluation is logged as well. Pure.
bool UpdatesAfterLastStep(Mode mode);

// Whether a step or round of the mode exchanges parameters or gradients between the workers, so
// that a simulation charges it an all-reduce's (or push's) time: sync, backup, local_sgd and
// async_local_sgd. Pure.
bool Exchanges(Mode mode);

// Whether the mode runs Hogwild's updates (sync/hogwild.h), whose optimizer state is one per
// worker or, with SgdOptions::shared_optimizer_state, one shared by all: async, ssp, locked,
// round_robin. The others keep one state per replica. Pure.
bool HasWorkerOptimizerState(Mode mode);

// Whether checkpoints (trainer/checkpoint/) capture this mode's state for dense networks: the
// capabilities table's checkpoint column (core/capabilities.h
// SupportsCheckpoints(WorkloadKind::kDense, mode)), which also says which workload runs under which
// mode where. The other modes refuse TrainerOptions::checkpoint_dir. Pure.
bool SupportsCheckpoints(Mode mode);

}  // namespace hogwild

#endif  // HOGWILD_CORE_MODE_H_
