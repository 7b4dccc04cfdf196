// The spelling of OptimizerKind on the command line, in Python, in checkpoints and in logs.
#ifndef HOGWILD_KERNELS_OPTIMIZER_NAME_H_
#define HOGWILD_KERNELS_OPTIMIZER_NAME_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/optimizer.h"

namespace hogwild {

// "sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"; "unknown" for a value that
// names no optimizer. Pure.
const char* OptimizerName(OptimizerKind kind);

// The inverse of OptimizerName. Errors: kInvalidArgument naming the value and the allowed ones.
absl::StatusOr<OptimizerKind> ParseOptimizer(absl::string_view name);

// "sgd|momentum|nesterov|adam|adamw|rmsprop|adagrad", for help texts and error messages. Pure.
const char* OptimizerNames();

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_OPTIMIZER_NAME_H_
