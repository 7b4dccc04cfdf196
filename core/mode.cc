#include "core/mode.h"

#include "absl/strings/str_format.h"

namespace hogwild {

const char* ModeName(Mode mode) { return mode == Mode::kSync ? "sync" : "async"; }

absl::StatusOr<Mode> ParseMode(absl::string_view name) {
  if (name == "async") return Mode::kAsync;
  if (name == "sync") return Mode::kSync;
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown mode \"%s\"; the modes are async and sync", name));
}

}  // namespace hogwild
