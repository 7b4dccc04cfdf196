// Learning-rate schedules, as a function of the global step (updates applied so far).
//   constant      lr = base_lr
//   exponential   lr = base_lr * decay_rate^(step / decay_steps)          (real division;
//                 TensorFlow's tf.keras.optimizers.schedules.ExponentialDecay, staircase=False)
//   step          lr = base_lr * decay_rate^floor(step / decay_steps)     (staircase; PyTorch's
//                 torch.optim.lr_scheduler.StepLR counted in steps)
#ifndef HOGWILD_TRAINER_MODEL_LR_SCHEDULE_H_
#define HOGWILD_TRAINER_MODEL_LR_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace hogwild {

struct LrSchedule {
  enum class Kind { kConstant, kExponential, kStep };

  Kind kind = Kind::kConstant;
  float base_lr = 0.05f;     // > 0
  float decay_rate = 1.0f;   // in (0, 1] for decays
  int64_t decay_steps = 1;   // >= 1

  // The learning rate at `step` (>= 0). Thread-safe (pure).
  float At(int64_t step) const;
};

// Parses "constant", "exponential" or "step". Errors: kInvalidArgument naming the known kinds.
absl::StatusOr<LrSchedule::Kind> ParseLrScheduleKind(const std::string& name);

// Checks ranges; the message names the flag and the allowed range.
absl::Status ValidateLrSchedule(const LrSchedule& schedule);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_MODEL_LR_SCHEDULE_H_
