#include "sync/policy_factory.h"

#include "absl/strings/str_format.h"
#include "sync/device_hogwild.h"
#include "sync/hogwild.h"
#include "sync/nccl_tower_average.h"
#include "sync/tower_average.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(Mode mode, ParameterStore* store,
                                                                 const PolicyPlacement& placement,
                                                                 SgdOptions options) {
  const bool gpu = !placement.worker_gpus.empty();
  switch (mode) {
    case Mode::kAsync:
      if (gpu) {
        return DeviceHogwild::Create(store, placement.worker_gpus, options,
                                     placement.force_host_master);
      }
      return std::make_unique<Hogwild>(store, placement.num_cpu_workers, options);
    case Mode::kSync:
      if (gpu) return NcclTowerAverage::Create(store, placement.worker_gpus, options);
      return std::make_unique<TowerAverage>(store, placement.num_cpu_workers, options);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("no update policy for mode %d", static_cast<int>(mode)));
}

}  // namespace hogwild
