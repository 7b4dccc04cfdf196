// The GPU column of sync/policy_factory.h: DeviceHogwild (async) and NcclTowerAverage (sync).
// Links the CUDA runtime and NCCL, so it is built only where CUDA is enabled (//tools:cuda.bzl);
// the trainer reaches it through its GPU runtime (trainer/gpu_runtime.h).
#ifndef HOGWILD_SYNC_GPU_POLICY_FACTORY_H_
#define HOGWILD_SYNC_GPU_POLICY_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "sync/update_policy.h"

namespace hogwild {

// Creates the GPU policy for `mode` over `store` (which must outlive it), one worker per entry
// of placement.worker_gpus (placement.force_host_master applies to async only). With
// placement.job of several ranks (sync only) the call is collective and the NCCL all-reduce
// spans every GPU of every rank (NcclTowerAverage::Create's contract).
// Every optimizer of kernels/optimizer.h, with options.no_decay and options.moving_stats.
// Errors: kInvalidArgument for a placement without GPU workers, for
// options.shared_optimizer_state (CPU workers only), for a mode without a GPU policy (ssp,
// backup, local_sgd: CPU workers only, sync/policy_factory.h) and for async with a job of
// several ranks; the policies' Create errors (no usable GPU, out of device memory, NCCL).
absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateGpuUpdatePolicy(
    Mode mode, ParameterStore* store, const PolicyPlacement& placement, SgdOptions options);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_GPU_POLICY_FACTORY_H_
