// Validation of the optimizer's options (TrainerOptions::sgd, sync/update_policy.h SgdOptions;
// the rules of each optimizer are in kernels/optimizer.h). Part of ValidateOptions.
#ifndef HOGWILD_TRAINER_OPTIMIZER_OPTIONS_H_
#define HOGWILD_TRAINER_OPTIMIZER_OPTIONS_H_

#include "absl/status/status.h"
#include "core/mode.h"
#include "sync/update_policy.h"
#include "trainer/model/model.h"

namespace hogwild {

// Checks each field against its range and refuses a field set (away from its default) that the
// optimizer or the mode does not read:
//   optimizer       one of the OptimizerKind values
//   momentum        [0, 1); (0, 1) for momentum and nesterov; not read by adam, adamw, adagrad
//   beta1, beta2    [0, 1); adam and adamw only
//   alpha           [0, 1); rmsprop only
//   eps             finite, >= 0 (0 = PyTorch's default); not read by the SGD family
//   clip_global_norm   finite, >= 0 (0 = no clipping)
//   shared_optimizer_state   async, ssp, locked, round_robin only (the Hogwild updates), with
//                   an optimizer that
//                   has state
// Errors: kInvalidArgument naming `TrainerOptions::sgd.<field>`, the value and the range or the
// optimizer or mode that ignores it. Pure.
absl::Status ValidateOptimizerOptions(const SgdOptions& sgd, Mode mode);

// The SgdOptions a run of a model updates with: `sgd` with the model's moving statistics
// (`stat_ranges`: batch norm, Model::StatRanges) and, unless weight_decay_biases, its biases
// (`bias_ranges`, Model::BiasRanges) exempt from weight decay. Train() and the simulator both
// take their policies' options from here. Pure.
SgdOptions ModelSgdOptions(SgdOptions sgd, bool weight_decay_biases,
                           std::vector<std::pair<int64_t, int64_t>> bias_ranges,
                           std::vector<std::pair<int64_t, int64_t>> stat_ranges);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_OPTIMIZER_OPTIONS_H_
