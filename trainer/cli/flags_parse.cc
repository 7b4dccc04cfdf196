#include "trainer/cli/flags_parse.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hogwild {

absl::StatusOr<std::vector<int64_t>> ParseHiddenSizes(const std::string& value) {
  std::vector<int64_t> sizes;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size < 1 || size > 65536) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--hidden=%s does not parse: '%s' is not an integer in [1, 65536]; use e.g. "
          "--hidden=256,128",
          value, part));
    }
    sizes.push_back(size);
  }
  return sizes;
}

absl::StatusOr<EvalEvery> ParseEvalEvery(const std::string& value) {
  absl::string_view v = value;
  EvalEvery every;
  if (absl::ConsumeSuffix(&v, "epochs") || absl::ConsumeSuffix(&v, "epoch")) {
    if (!absl::SimpleAtod(v, &every.epochs) || !(every.epochs > 0.0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--eval_every=%s does not parse; use a positive number of epochs (1epoch, 0.5epoch) "
          "or of steps (500)",
          value));
    }
    return every;
  }
  absl::ConsumeSuffix(&v, "steps") || absl::ConsumeSuffix(&v, "step");
  if (!absl::SimpleAtoi(v, &every.steps) || every.steps < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--eval_every=%s does not parse; use a number of steps (500, 0 = only at the end) or "
        "of epochs (1epoch)",
        value));
  }
  return every;
}

absl::StatusOr<CheckpointEvery> ParseCheckpointEvery(const std::string& value) {
  absl::string_view v = value;
  CheckpointEvery every;
  double unit_s = 0.0;
  if (absl::ConsumeSuffix(&v, "steps") || absl::ConsumeSuffix(&v, "step")) {
  } else if (absl::ConsumeSuffix(&v, "s")) {
    unit_s = 1.0;
  } else if (absl::ConsumeSuffix(&v, "m")) {
    unit_s = 60.0;
  } else if (absl::ConsumeSuffix(&v, "h")) {
    unit_s = 3600.0;
  }
  // A value that is no number with an accepted unit (5min, 10x): say which units there are.
  const auto not_a_period = [&value] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--checkpoint_every=%s is not a period: give a number with the unit s, m or h (30s, 10m, "
        "1h), a number of global steps (500 or 500steps), or 0 for only on stop and at the end",
        value));
  };
  if (unit_s > 0.0) {
    double n = 0.0;
    if (!absl::SimpleAtod(v, &n)) return not_a_period();
    if (!(n > 0.0) || !(n * unit_s <= 1e7)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--checkpoint_every=%s is out of range: a period must be in (0, 1e7] seconds; use "
          "e.g. 30s, 10m, or a number of steps (500)",
          value));
    }
    every.seconds = n * unit_s;
    return every;
  }
  int64_t steps = 0;
  double number = 0.0;
  if (!absl::SimpleAtoi(v, &steps) && !absl::SimpleAtod(v, &number)) return not_a_period();
  if (!absl::SimpleAtoi(v, &steps) || steps < 0 || steps > (int64_t{1} << 40)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--checkpoint_every=%s is out of range: use a number of global steps in [1, 2^40] "
        "(500), a period (30s, 10m, 1h), or 0 for only on stop and at the end",
        value));
  }
  every.steps = steps;
  return every;
}

absl::StatusOr<uint64_t> ParseSeed(const std::string& value) {
  uint64_t seed = 0;
  if (!absl::SimpleAtoi(value, &seed)) {
    // "-1" and "2^64" are integers out of range; "abc" or "1.5" are no integer at all.
    int64_t negative = 0;
    const bool integer = absl::SimpleAtoi(value, &negative) ||
                         (!value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
                           return absl::ascii_isdigit(c);
                         }));
    return absl::InvalidArgumentError(absl::StrFormat(
        "--seed=%s is %s; it must be an integer in [0, %d]", value,
        integer ? "out of range" : "not an integer", std::numeric_limits<uint64_t>::max()));
  }
  return seed;
}

absl::StatusOr<float> ToFloat32(absl::string_view flag, const std::string& text) {
  double value = 0.0;
  if (!absl::SimpleAtod(text, &value)) {
    return absl::InvalidArgumentError(absl::StrFormat("--%s=%s is not a number", flag, text));
  }
  const float f = static_cast<float>(value);
  if (std::isnan(value) || std::isinf(value) || value == 0.0) return f;
  if (std::isinf(f) || std::fabs(f) < std::numeric_limits<float>::min()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s is out of range: the trainer computes in float32, which holds magnitudes in "
        "[%g, %g] (or 0)",
        flag, text, std::numeric_limits<float>::min(), std::numeric_limits<float>::max()));
  }
  return f;
}

}  // namespace hogwild
