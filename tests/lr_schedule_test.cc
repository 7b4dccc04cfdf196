// Learning-rate schedules (trainer/model/lr_schedule.h): a schedule kind is parsed by name, and
// an unknown name is refused naming the flag, the value and the kinds there are.
#include "trainer/model/lr_schedule.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"

namespace hogwild {
namespace {

using testing::ExpectError;

TEST(LrSchedule, UnknownKindIsRejectedByName) {
  ExpectError(ParseLrScheduleKind("cosine").status(), absl::StatusCode::kInvalidArgument,
              {"--lr_schedule=cosine", "exponential"});
}

// Warm-up multiplies every schedule by (step + 1) / N for the first N steps and by exactly 1 after
// (the schedule's own rate, bitwise).
TEST(LrSchedule, WarmupIsLinearAndComposesWithEverySchedule) {
  for (LrSchedule::Kind kind :
       {LrSchedule::Kind::kConstant, LrSchedule::Kind::kExponential, LrSchedule::Kind::kStep}) {
    LrSchedule plain{.kind = kind, .base_lr = 0.4f, .decay_rate = 0.5f, .decay_steps = 3};
    LrSchedule warm = plain;
    warm.warmup_steps = 4;
    for (int64_t step = 0; step < 10; ++step) {
      const float factor = step < 4 ? static_cast<float>((step + 1) / 4.0) : 1.0f;
      EXPECT_FLOAT_EQ(warm.At(step), plain.At(step) * factor) << static_cast<int>(kind) << step;
      if (step >= 3) {
        EXPECT_EQ(warm.At(step), plain.At(step));  // bitwise after the warm-up
      }
    }
    EXPECT_FLOAT_EQ(warm.At(0), plain.At(0) / 4);
  }
}

TEST(LrSchedule, ScalingFollowsTheGlobalBatch) {
  LrSchedule s{.base_lr = 0.1f};
  s.reference_batch = 256;
  s.scaling = LrSchedule::Scaling::kLinear;
  EXPECT_FLOAT_EQ(ScaleForBatch(s, 1024).base_lr, 0.4f);
  EXPECT_FLOAT_EQ(ScaleForBatch(s, 64).base_lr, 0.025f);
  EXPECT_EQ(ScaleForBatch(s, 64).scaling, LrSchedule::Scaling::kNone);  // once only
  s.scaling = LrSchedule::Scaling::kSqrt;
  EXPECT_FLOAT_EQ(ScaleForBatch(s, 1024).base_lr, 0.2f);
  s.scaling = LrSchedule::Scaling::kNone;
  EXPECT_EQ(ScaleForBatch(s, 1024).base_lr, 0.1f);
  EXPECT_EQ(ParseLrScaling("sqrt").value(), LrSchedule::Scaling::kSqrt);
  ExpectError(ParseLrScaling("quadratic").status(), absl::StatusCode::kInvalidArgument,
              {"--lr_scaling=quadratic", "none, linear or sqrt"});
}

TEST(LrSchedule, WarmupAndReferenceBatchAreRangeChecked) {
  LrSchedule s;
  s.warmup_steps = -1;
  ExpectError(ValidateLrSchedule(s), absl::StatusCode::kInvalidArgument,
              {"LrSchedule::warmup_steps=-1 is out of range"});
  s = LrSchedule{};
  s.scaling = LrSchedule::Scaling::kLinear;
  s.reference_batch = 0;
  ExpectError(ValidateLrSchedule(s), absl::StatusCode::kInvalidArgument,
              {"LrSchedule::reference_batch=0 is out of range"});
  s = LrSchedule{};
  s.reference_batch = 512;
  ExpectError(ValidateLrSchedule(s), absl::StatusCode::kInvalidArgument,
              {"LrSchedule::reference_batch=512 has no effect with LrSchedule::scaling=none"});
}

}  // namespace
}  // namespace hogwild
