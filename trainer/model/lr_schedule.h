// Learning-rate schedules, as a function of the global step (updates applied so far).
//   constant      lr = base_lr
//   exponential   lr = base_lr * decay_rate^(step / decay_steps)          (real division;
//                 TensorFlow's tf.keras.optimizers.schedules.ExponentialDecay, staircase=False)
//   step          lr = base_lr * decay_rate^floor(step / decay_steps)     (staircase; PyTorch's
//                 torch.optim.lr_scheduler.StepLR counted in steps)
// composed with an optional linear warm-up (Goyal et al., "Accurate, Large Minibatch SGD:
// Training ImageNet in 1 Hour", 2017, section 2.2), which multiplies any of them:
//   lr(step) = schedule(step) * min(1, (step + 1) / warmup_steps)    (warmup_steps > 0)
// so the first update uses schedule(0) / warmup_steps and update warmup_steps - 1 the full rate;
// the schedule itself counts from step 0 (it decays during the warm-up too, as TensorFlow's and
// Hugging Face's warm-up wrappers do).
//
// Scaling with the batch (Goyal et al.'s linear scaling rule; the square-root rule of Krizhevsky,
// "One weird trick for parallelizing convolutional neural networks", 2014): the trainer replaces
// base_lr by base_lr * k (linear) or base_lr * sqrt(k) (sqrt), k = global batch / reference_batch,
// once before training (ScaleForBatch), so a user can change the worker count and keep the rule.
#ifndef HOGWILD_TRAINER_MODEL_LR_SCHEDULE_H_
#define HOGWILD_TRAINER_MODEL_LR_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace hogwild {

inline constexpr int64_t kMaxWarmupSteps = int64_t{1} << 40;

struct LrSchedule {
  enum class Kind { kConstant, kExponential, kStep };
  enum class Scaling { kNone, kLinear, kSqrt };

  Kind kind = Kind::kConstant;
  float base_lr = 0.05f;     // > 0
  float decay_rate = 1.0f;   // in (0, 1] for decays
  int64_t decay_steps = 1;   // >= 1
  int64_t warmup_steps = 0;  // linear warm-up over this many global steps; [0, kMaxWarmupSteps]
  Scaling scaling = Scaling::kNone;
  int64_t reference_batch = 256;  // the batch base_lr is meant for (scaling only); >= 1

  // The learning rate at `step` (>= 0), warm-up included, scaling not (see ScaleForBatch).
  // Thread-safe (pure).
  float At(int64_t step) const;
};

// `schedule` with base_lr scaled for a global batch of `global_batch` examples (>= 1) by its
// scaling rule and the scaling set to kNone (so scaling twice does nothing more). The factor is
// computed in double and base_lr rounded once. Pure.
LrSchedule ScaleForBatch(const LrSchedule& schedule, int64_t global_batch);

// Parses "none", "linear" or "sqrt". Errors: kInvalidArgument naming the value and the choices.
absl::StatusOr<LrSchedule::Scaling> ParseLrScaling(const std::string& name);

// Parses "constant", "exponential" or "step". Errors: kInvalidArgument naming the known kinds.
absl::StatusOr<LrSchedule::Kind> ParseLrScheduleKind(const std::string& name);

// Checks ranges (warm-up and reference batch too); the message names the field and the range.
absl::Status ValidateLrSchedule(const LrSchedule& schedule);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_MODEL_LR_SCHEDULE_H_
