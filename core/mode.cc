#include "core/mode.h"

#include "absl/strings/str_format.h"
#include "core/capabilities.h"

namespace hogwild {

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kAsync:
      return "async";
    case Mode::kSync:
      return "sync";
    case Mode::kSsp:
      return "ssp";
    case Mode::kBackup:
      return "backup";
    case Mode::kLocalSgd:
      return "local_sgd";
    case Mode::kLocked:
      return "locked";
    case Mode::kRoundRobin:
      return "round_robin";
    case Mode::kAsyncLocalSgd:
      return "async_local_sgd";
    case Mode::kCyclades:
      return "cyclades";
    case Mode::kBuckwild:
      return "buckwild";
  }
  return "unknown";  // a value cast from an integer that names no mode
}

absl::StatusOr<Mode> ParseMode(absl::string_view name) {
  for (Mode mode : kAllModes) {
    if (name == ModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown mode \"%s\"; the modes are async, sync, ssp, backup, local_sgd, locked, "
      "round_robin, async_local_sgd, cyclades and buckwild",
      name));
}

bool SplitsGlobalBatch(Mode mode) {
  return mode == Mode::kSync || mode == Mode::kBackup || mode == Mode::kLocalSgd;
}

bool HasLocalRounds(Mode mode) { return mode == Mode::kLocalSgd || mode == Mode::kAsyncLocalSgd; }

bool UpdatesAfterLastStep(Mode mode) { return mode == Mode::kAsyncLocalSgd; }

bool Exchanges(Mode mode) { return SplitsGlobalBatch(mode) || mode == Mode::kAsyncLocalSgd; }

bool HasWorkerOptimizerState(Mode mode) {
  return mode == Mode::kAsync || mode == Mode::kSsp || mode == Mode::kLocked ||
         mode == Mode::kRoundRobin;
}

bool SupportsCheckpoints(Mode mode) { return SupportsCheckpoints(WorkloadKind::kDense, mode); }

}  // namespace hogwild
