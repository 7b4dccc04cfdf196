#include "trainer/eval_schedule.h"

#include <algorithm>

namespace hogwild {

EvalSchedule::EvalSchedule(int64_t every_steps, int64_t start_step)
    : every_steps_(std::max<int64_t>(1, every_steps)),
      next_((std::max<int64_t>(0, start_step) / every_steps_ + 1) * every_steps_) {}

std::optional<int64_t> EvalSchedule::Claim(int64_t global_step) {
  int64_t point = next_.load(std::memory_order_relaxed);
  while (global_step >= point) {
    // On failure `point` is reloaded: another caller claimed it; try the next one.
    if (next_.compare_exchange_weak(point, point + every_steps_, std::memory_order_relaxed)) {
      return point;
    }
  }
  return std::nullopt;
}

}  // namespace hogwild
