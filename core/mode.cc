#include "core/mode.h"

#include "absl/strings/str_format.h"

namespace hogwild {

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kAsync:
      return "async";
    case Mode::kSync:
      return "sync";
  }
  return "unknown";  // a value cast from an integer that names no mode
}

absl::StatusOr<Mode> ParseMode(absl::string_view name) {
  if (name == "async") return Mode::kAsync;
  if (name == "sync") return Mode::kSync;
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown mode \"%s\"; the modes are async and sync", name));
}

}  // namespace hogwild
