// The training mode: asynchronous (Hogwild!) or synchronous (tower averaging). Shared by the
// update policies, the input pipeline (how a step's batch is split), checkpoints and the CLI.
#ifndef HOGWILD_CORE_MODE_H_
#define HOGWILD_CORE_MODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hogwild {

enum class Mode { kAsync, kSync };

// "async" / "sync": the spelling of the build flag, the checkpoint file and the log; "unknown"
// for a value that names no mode. Pure.
const char* ModeName(Mode mode);

// The inverse of ModeName. Errors: kInvalidArgument naming the value and the allowed ones.
absl::StatusOr<Mode> ParseMode(absl::string_view name);

}  // namespace hogwild

#endif  // HOGWILD_CORE_MODE_H_
