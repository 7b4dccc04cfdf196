// Parsers for the command line's structured flag values (kept out of main.cc so they are
// tested). Each error message names the flag, the value and what is allowed.
#ifndef HOGWILD_TRAINER_CLI_FLAGS_PARSE_H_
#define HOGWILD_TRAINER_CLI_FLAGS_PARSE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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
  int64_t steps = 0;     // > 0: every that many global steps
  double seconds = 0.0;  // > 0: every that many seconds
};

// "500" or "500steps" (global steps), "30s", "10m" or "1h" (wall time), or "0" (only on a stop
// request and at the end). Errors name the flag and the value, and either the accepted units
// (a value that is no number with a unit: "5min", "abc") or the allowed range (steps in
// [1, 2^40], a period in (0, 1e7] seconds).
absl::StatusOr<CheckpointEvery> ParseCheckpointEvery(const std::string& value);

// "--seed" as typed: an integer in [0, 2^64 - 1]. Errors name the flag, the value and the range
// (Abseil's own uint64 parsing says only "Illegal value").
absl::StatusOr<uint64_t> ParseSeed(const std::string& value);

// A floating-point flag's value as typed (`text`, e.g. Abseil's CommandLineFlag::CurrentValue)
// as the float32 the trainer computes in. NaN and infinities pass through (the option checks
// name them); a finite value that float32 cannot hold, because it overflows to infinity or
// underflows below the smallest normal float (1.17549e-38) where it would lose its precision
// or become 0, is an error naming `--<flag>=<text>` and the float32 range, instead of a
// later "--lr=0 is out of range" for `--lr=1e-50`.
absl::StatusOr<float> ToFloat32(absl::string_view flag, const std::string& text);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_FLAGS_PARSE_H_
