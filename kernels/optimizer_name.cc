#include "kernels/optimizer_name.h"

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

constexpr OptimizerKind kAll[] = {
    OptimizerKind::kSgd,   OptimizerKind::kMomentum, OptimizerKind::kNesterov, OptimizerKind::kAdam,
    OptimizerKind::kAdamW, OptimizerKind::kRmsprop,  OptimizerKind::kAdagrad};

}  // namespace

const char* OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kMomentum:
      return "momentum";
    case OptimizerKind::kNesterov:
      return "nesterov";
    case OptimizerKind::kAdam:
      return "adam";
    case OptimizerKind::kAdamW:
      return "adamw";
    case OptimizerKind::kRmsprop:
      return "rmsprop";
    case OptimizerKind::kAdagrad:
      return "adagrad";
  }
  return "unknown";
}

const char* OptimizerNames() { return "sgd|momentum|nesterov|adam|adamw|rmsprop|adagrad"; }

absl::StatusOr<OptimizerKind> ParseOptimizer(absl::string_view name) {
  for (OptimizerKind kind : kAll) {
    if (name == OptimizerName(kind)) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown optimizer '%s'; it must be one of %s", name, OptimizerNames()));
}

}  // namespace hogwild
