#include "sync/gpu_policy_factory.h"

#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/status_macros.h"
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
  // The GPU policies run every optimizer with per-worker state (async) or one state (sync);
  // state shared by every Hogwild worker (A3C's shared Adam) is not implemented on the device.
  if (options.shared_optimizer_state) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "optimizer %s with shared optimizer state is not available for GPU workers yet "
        "(per-worker state is); run it on cpu devices",
        OptimizerName(options.optimizer)));
  }
  HOGWILD_RETURN_IF_ERROR(CheckSupported(WorkloadKind::kDense, mode, Substrate::kGpu));
  switch (mode) {
    case Mode::kAsync:
      if (placement.job != nullptr && placement.job->num_ranks > 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "async GPU workers do not run across processes yet (%d ranks); use sync mode, cpu "
            "devices, or one process",
            placement.job->num_ranks));
      }
      return DeviceHogwild::Create(store, placement.worker_gpus, options,
                                   placement.force_host_master);
    case Mode::kSync:
      return NcclTowerAverage::Create(store, placement.worker_gpus, options, placement.job);
    case Mode::kSsp:
    case Mode::kBackup:
    case Mode::kLocalSgd:
    case Mode::kLocked:
    case Mode::kRoundRobin:
    case Mode::kAsyncLocalSgd:
    case Mode::kCyclades:
    case Mode::kBuckwild:
      break;  // refused by the capabilities table
  }
  return absl::InternalError(absl::StrFormat(
      "no GPU update policy for mode %s although the capabilities table (core/capabilities.h) "
      "runs it",
      ModeName(mode)));
}

}  // namespace hogwild
