#include "trainer/model/lr_schedule.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace hogwild {

namespace {

float Decayed(const LrSchedule& s, int64_t step) {
  switch (s.kind) {
    case LrSchedule::Kind::kConstant:
      return s.base_lr;
    case LrSchedule::Kind::kExponential:
      return s.base_lr * static_cast<float>(std::pow(
                             static_cast<double>(s.decay_rate),
                             static_cast<double>(step) / static_cast<double>(s.decay_steps)));
    case LrSchedule::Kind::kStep:
      return s.base_lr * static_cast<float>(std::pow(static_cast<double>(s.decay_rate),
                                                     static_cast<double>(step / s.decay_steps)));
  }
  return s.base_lr;
}

}  // namespace

float LrSchedule::At(int64_t step) const {
  const float lr = Decayed(*this, step);
  // After the warm-up the factor is exactly 1: the rate is the schedule's, bitwise.
  if (warmup_steps <= 0 || step + 1 >= warmup_steps) return lr;
  return lr * static_cast<float>(static_cast<double>(step + 1) / static_cast<double>(warmup_steps));
}

LrSchedule ScaleForBatch(const LrSchedule& schedule, int64_t global_batch) {
  LrSchedule scaled = schedule;
  scaled.scaling = LrSchedule::Scaling::kNone;
  const double k =
      static_cast<double>(global_batch) / static_cast<double>(schedule.reference_batch);
  switch (schedule.scaling) {
    case LrSchedule::Scaling::kNone:
      break;
    case LrSchedule::Scaling::kLinear:
      scaled.base_lr = static_cast<float>(schedule.base_lr * k);
      break;
    case LrSchedule::Scaling::kSqrt:
      scaled.base_lr = static_cast<float>(schedule.base_lr * std::sqrt(k));
      break;
  }
  return scaled;
}

absl::StatusOr<LrSchedule::Scaling> ParseLrScaling(const std::string& name) {
  if (name == "none") return LrSchedule::Scaling::kNone;
  if (name == "linear") return LrSchedule::Scaling::kLinear;
  if (name == "sqrt") return LrSchedule::Scaling::kSqrt;
  return absl::InvalidArgumentError(
      absl::StrFormat("--lr_scaling=%s is unknown; use none, linear or sqrt", name));
}

absl::StatusOr<LrSchedule::Kind> ParseLrScheduleKind(const std::string& name) {
  if (name == "constant") return LrSchedule::Kind::kConstant;
  if (name == "exponential") return LrSchedule::Kind::kExponential;
  if (name == "step") return LrSchedule::Kind::kStep;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--lr_schedule=%s is unknown; use constant, exponential or step", name));
}

absl::Status ValidateLrSchedule(const LrSchedule& s) {
  if (!(s.base_lr > 0.0f) || !std::isfinite(s.base_lr)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("LrSchedule::base_lr=%g is out of range; the learning rate must be > 0", s.base_lr));
  }
  if (!(s.decay_rate > 0.0f && s.decay_rate <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LrSchedule::decay_rate=%g is out of range; it must be in (0, 1]", s.decay_rate));
  }
  if (s.decay_steps < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LrSchedule::decay_steps=%d is out of range; it must be >= 1", s.decay_steps));
  }
  if (s.warmup_steps < 0 || s.warmup_steps > kMaxWarmupSteps) {
    return absl::InvalidArgumentError(
        absl::StrFormat("LrSchedule::warmup_steps=%d is out of range; it must be in [0, %d]",
                        s.warmup_steps, kMaxWarmupSteps));
  }
  if (s.reference_batch < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LrSchedule::reference_batch=%d is out of range; it must be >= 1", s.reference_batch));
  }
  if (s.scaling == LrSchedule::Scaling::kNone &&
      s.reference_batch != LrSchedule{}.reference_batch) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LrSchedule::reference_batch=%d has no effect with LrSchedule::scaling=none; choose "
        "linear or sqrt scaling",
        s.reference_batch));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
