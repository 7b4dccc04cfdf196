#include "trainer/model/lr_schedule.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace hogwild {

float LrSchedule::At(int64_t step) const {
  switch (kind) {
    case Kind::kConstant:
      return base_lr;
    case Kind::kExponential:
      return base_lr * static_cast<float>(std::pow(
                           static_cast<double>(decay_rate),
                           static_cast<double>(step) / static_cast<double>(decay_steps)));
    case Kind::kStep:
      return base_lr * static_cast<float>(std::pow(static_cast<double>(decay_rate),
                                                   static_cast<double>(step / decay_steps)));
  }
  return base_lr;
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
  return absl::OkStatus();
}

}  // namespace hogwild
