// The flags of the modes' own options, shared by the commands that run every mode
// (//trainer:train for dense networks, //sparse:train for the sparse workloads), so that their
// names, defaults and help are defined once: --staleness_bound (ssp), --backup_workers (backup)
// and --average_every (local_sgd). Their defaults are sync/policy_factory.h's ModeOptions';
// their ranges are checked by each command's library (TrainerOptions, ValidateSparseModeOptions).
#ifndef HOGWILD_TRAINER_CLI_MODE_FLAGS_H_
#define HOGWILD_TRAINER_CLI_MODE_FLAGS_H_

#include <cstdint>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(int64_t, staleness_bound);
ABSL_DECLARE_FLAG(int32_t, backup_workers);
ABSL_DECLARE_FLAG(int64_t, average_every);

#endif  // HOGWILD_TRAINER_CLI_MODE_FLAGS_H_
