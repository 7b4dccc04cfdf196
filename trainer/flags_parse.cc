#include "trainer/flags_parse.h"

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

}  // namespace hogwild
