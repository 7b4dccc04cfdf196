// Picks the update policy for a mode and the workers' devices:
//
//   mode   CPU workers        GPU workers
//   async  Hogwild            DeviceHogwild
//   sync   TowerAverage       NcclTowerAverage
//   ssp    StaleSynchronous   (none: kInvalidArgument)
//   backup BackupSync         (none: kInvalidArgument)
//   local_sgd LocalSgd        (none: kInvalidArgument)
//   locked Locked             (none: kInvalidArgument)
//   round_robin RoundRobin    (none: kInvalidArgument)
//
// The CPU column is CreateUpdatePolicy (here, no CUDA dependency); the GPU column is
// CreateGpuUpdatePolicy (sync/gpu_policy_factory.h, built only where CUDA is), which the trainer
// reaches through its GPU runtime (trainer/gpu_runtime.h). A new policy (a new Mode value) is
// added in both and in its own file beside the others.
#ifndef HOGWILD_SYNC_POLICY_FACTORY_H_
#define HOGWILD_SYNC_POLICY_FACTORY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "sync/outer_optimizer.h"
#include "sync/parameter_store.h"
#include "sync/process_group.h"
#include "sync/streaming.h"
#include "sync/update_policy.h"

namespace hogwild {

struct PolicyPlacement {
  // worker_gpus[w]: the CUDA device of worker w; empty for CPU workers.
  std::vector<int> worker_gpus;
  int num_cpu_workers = 1;  // used when worker_gpus is empty; >= 1
  // Async on GPUs: the master in pinned host memory even where a GPU could hold it.
  bool force_host_master = false;
  // Sync on GPUs across processes: the job's processes (not owned; must outlive the policy's
  // creation). nullptr, or num_ranks == 1: this process alone.
  const ProcessGroup* job = nullptr;
};

// The options of the modes that have any (TrainerOptions validates them; see there).
struct ModeOptions {
  int64_t staleness_bound = 3;  // ssp: steps a worker may run ahead of the slowest, >= 0
  int backup_workers = 0;       // backup: gradients dropped per step, in [0, workers)
  int64_t average_every = 8;    // local_sgd: local steps between averagings, >= 1
  OuterOptimizer outer;         // local_sgd: what an averaging applies (plain averaging)
  StreamingOptions streaming;   // local_sgd: Streaming DiLoCo's fragments (one, exchanged at once)
};

// Creates the CPU policy for `mode` over `store` (which must outlive it) for
// placement.num_cpu_workers workers; `mode_options` is read by the modes that have options.
// Errors: kInvalidArgument for a placement with GPU workers (those policies are
// CreateGpuUpdatePolicy's), for a Mode value that names no policy and for mode options out of
// range (naming the ModeOptions field).
absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(
    Mode mode, ParameterStore* store, const PolicyPlacement& placement, SgdOptions options,
    const ModeOptions& mode_options = {});

}  // namespace hogwild

#endif  // HOGWILD_SYNC_POLICY_FACTORY_H_
