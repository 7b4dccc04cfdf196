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

}  // namespace
}  // namespace hogwild
