#include "sync/gpu_policy_factory.h"

#include "absl/strings/str_format.h"
#include "kernels/optimizer_name.h"
#include "sync/device_hogwild.h"
#include "sync/nccl_tower_average.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateGpuUpdatePolicy(
    Mode mode, ParameterStore* store, const PolicyPlacement& placement, SgdOptions options) {
  if (placement.worker_gpus.empty()) {
    return absl::InvalidArgumentError(
        "CreateGpuUpdatePolicy: no GPU workers; CPU policies come from CreateUpdatePolicy");
  }
  // The GPU policies keep one momentum buffer per owner and launch the SGD kernel; the other
  // optimizers' kernel (kernels/cuda/optimizer_update.h) is not wired into them yet.
  if (!options.is_sgd_momentum() || options.shared_optimizer_state) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "optimizer %s%s is not available for GPU workers yet (sgd and momentum with per-worker "
        "state are); run it on cpu devices",
        OptimizerName(options.optimizer),
        options.shared_optimizer_state ? " with shared optimizer state" : ""));
  }
  switch (mode) {
    case Mode::kAsync:
      return DeviceHogwild::Create(store, placement.worker_gpus, options,
                                   placement.force_host_master);
    case Mode::kSync:
      return NcclTowerAverage::Create(store, placement.worker_gpus, options);
    case Mode::kSsp:
    case Mode::kBackup:
    case Mode::kLocalSgd:
      break;  // CPU workers only
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("mode %s has no GPU update policy; run it on cpu devices", ModeName(mode)));
}

}  // namespace hogwild
