// The flags of async mode's learning-rate and dropping rules, shared by the commands that run
// async dense training (//trainer:train, //sim:simulate), so that their names, defaults and help
// are defined once: --staleness_aware_lr, --delay_adaptive_lr and --max_delay
// (sync/update_policy.h SgdOptions, AsyncStepStats). Their ranges and the modes that read them
// are checked by TrainerOptions (trainer/trainer_options.h).
#ifndef HOGWILD_TRAINER_CLI_ASYNC_FLAGS_H_
#define HOGWILD_TRAINER_CLI_ASYNC_FLAGS_H_

#include <cstdint>

#include "absl/flags/declare.h"
#include "sync/update_policy.h"

ABSL_DECLARE_FLAG(bool, staleness_aware_lr);
ABSL_DECLARE_FLAG(bool, delay_adaptive_lr);
ABSL_DECLARE_FLAG(int64_t, max_delay);

namespace hogwild {

// Sets options.staleness_aware_lr, delay_adaptive_lr and max_delay from the flags, unchecked.
// Reads flags; call after parsing.
void ApplyAsyncFlags(SgdOptions& options);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_ASYNC_FLAGS_H_
