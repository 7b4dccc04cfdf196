#include "sync/policy_factory.h"

#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/status_macros.h"
#include "sync/async_local_sgd.h"
#include "sync/backup_sync.h"
#include "sync/hogwild.h"
#include "sync/local_sgd.h"
#include "sync/locked.h"
#include "sync/round_robin.h"
#include "sync/stale_synchronous.h"
#include "sync/tower_average.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(Mode mode, ParameterStore* store,
                                                                 const PolicyPlacement& placement,
                                                                 SgdOptions options,
                                                                 const ModeOptions& mode_options) {
  if (!placement.worker_gpus.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CreateUpdatePolicy: %d GPU workers; GPU policies come from CreateGpuUpdatePolicy "
        "(sync/gpu_policy_factory.h)",
        placement.worker_gpus.size()));
  }
  HOGWILD_RETURN_IF_ERROR(CheckSupported(WorkloadKind::kDense, mode, Substrate::kThreads));
  switch (mode) {
    case Mode::kAsync:
      return std::make_unique<Hogwild>(store, placement.num_cpu_workers, options);
    case Mode::kSync:
      return std::make_unique<TowerAverage>(store, placement.num_cpu_workers, options);
    case Mode::kSsp:
      if (mode_options.staleness_bound < 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("ModeOptions::staleness_bound=%d is out of range; it must be >= 0",
                            mode_options.staleness_bound));
      }
      return std::make_unique<StaleSynchronous>(store, placement.num_cpu_workers, options,
                                                mode_options.staleness_bound);
    case Mode::kBackup:
      if (mode_options.backup_workers < 0 ||
          mode_options.backup_workers >= placement.num_cpu_workers) {
        return absl::InvalidArgumentError(
            absl::StrFormat("ModeOptions::backup_workers=%d is out of range; it must be in [0, %d]",
                            mode_options.backup_workers, placement.num_cpu_workers - 1));
      }
      return std::make_unique<BackupSync>(store, placement.num_cpu_workers, options,
                                          mode_options.backup_workers);
    case Mode::kLocalSgd:
      if (mode_options.average_every < 1) {
        return absl::InvalidArgumentError(
            absl::StrFormat("ModeOptions::average_every=%d is out of range; it must be >= 1",
                            mode_options.average_every));
      }
      HOGWILD_RETURN_IF_ERROR(CheckOuterOptimizer(mode_options.outer, "ModeOptions::outer."));
      HOGWILD_RETURN_IF_ERROR(CheckStreamingOptions(mode_options.streaming,
                                                    mode_options.average_every, store->size(),
                                                    "ModeOptions::streaming."));
      return std::make_unique<LocalSgd>(store, placement.num_cpu_workers, options,
                                        mode_options.average_every, mode_options.outer,
                                        mode_options.streaming);
    case Mode::kAsyncLocalSgd:
      if (mode_options.average_every < 1) {
        return absl::InvalidArgumentError(
            absl::StrFormat("ModeOptions::average_every=%d is out of range; it must be >= 1",
                            mode_options.average_every));
      }
      HOGWILD_RETURN_IF_ERROR(CheckOuterOptimizer(mode_options.outer, "ModeOptions::outer."));
      HOGWILD_RETURN_IF_ERROR(
          CheckDelayedNesterov(mode_options.delayed_nesterov, mode_options.outer,
                               "ModeOptions::delayed_nesterov", "ModeOptions::outer.momentum"));
      return std::make_unique<AsyncLocalSgd>(
          store, placement.num_cpu_workers, options,
          AsyncLocalSgdOptions{.average_every = mode_options.average_every,
                               .outer = mode_options.outer,
                               .delayed_nesterov = mode_options.delayed_nesterov,
                               .dynamic_local_updates = mode_options.dynamic_local_updates});
    case Mode::kLocked:
      return std::make_unique<Locked>(store, placement.num_cpu_workers, options);
    case Mode::kRoundRobin:
      return std::make_unique<RoundRobin>(store, placement.num_cpu_workers, options);
    case Mode::kCyclades:
    case Mode::kBuckwild:
      break;  // refused by the capabilities table: the sparse trainers' own loops, no policy
  }
  return absl::InternalError(absl::StrFormat(
      "no update policy for mode %s although the capabilities table (core/capabilities.h) runs it",
      ModeName(mode)));
}

}  // namespace hogwild
