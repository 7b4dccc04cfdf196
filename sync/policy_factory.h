// Picks the update policy for a mode and the workers' devices:
//
//   mode   CPU workers     GPU workers
//   async  Hogwild         DeviceHogwild
//   sync   TowerAverage    NcclTowerAverage
//
// A new policy (a new Mode value) is added here and in its own file beside the others.
#ifndef HOGWILD_SYNC_POLICY_FACTORY_H_
#define HOGWILD_SYNC_POLICY_FACTORY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

struct PolicyPlacement {
  // worker_gpus[w]: the CUDA device of worker w; empty for CPU workers.
  std::vector<int> worker_gpus;
  int num_cpu_workers = 1;  // used when worker_gpus is empty; >= 1
  // Async on GPUs: the master in pinned host memory even where a GPU could hold it.
  bool force_host_master = false;
};

// Creates the policy for `mode` over `store` (which must outlive it).
// Errors: the GPU policies' Create errors (no usable GPU, out of device memory, NCCL);
// kInvalidArgument for a Mode value that names no policy.
absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(Mode mode, ParameterStore* store,
                                                                 const PolicyPlacement& placement,
                                                                 SgdOptions options);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_POLICY_FACTORY_H_
