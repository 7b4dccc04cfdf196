// Parsers for the command line's structured flag values (kept out of main.cc so they are
// tested). Each error message names the flag, the value and what is allowed.
#ifndef HOGWILD_TRAINER_CLI_FLAGS_PARSE_H_
#define HOGWILD_TRAINER_CLI_FLAGS_PARSE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hogwild {

// "256,128" -> {256, 128}. Errors: an empty list, a non-integer or a value outside [1, 65536].
absl::StatusOr<std::vector<int64_t>> ParseHiddenSizes(const std::string& value);

struct EvalEvery {
  int64_t steps = 0;    // > 0: every that many global steps
  double epochs = 0.0;  // > 0: every that many epochs
};

// "1epoch", "0.5epochs", "500", "500steps", or "0" (only at the end).
absl::StatusOr<EvalEvery> ParseEvalEvery(const std::string& value);

struct CheckpointEvery {
  int64_t steps = 0;    // > 0: every that many global steps
  double seconds = 0.0; // > 0: every that many seconds
};

// "500" or "500steps" (global steps), "30s", "10m" or "1h" (wall time), or "0" (only on a stop
// request and at the end). Errors name the flag, the value and the allowed range: steps in
// [1, 2^40], a period in (0, 1e7] seconds.
absl::StatusOr<CheckpointEvery> ParseCheckpointEvery(const std::string& value);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_FLAGS_PARSE_H_
