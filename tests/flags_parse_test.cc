// The parsers of the command line's structured flag values (trainer/cli/flags_parse.h): good
// values parse, and a bad one gets a one-line error naming the flag, the value and the culprit.
#include "trainer/cli/flags_parse.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"

namespace hogwild {
namespace {

using testing::ExpectError;

TEST(FlagsParse, HiddenSizesThatDoNotParseAreRejected) {
  struct Case {
    std::string value, culprit;
  };
  for (const Case& c :
       {Case{"12,x", "'x'"}, Case{"", "''"}, Case{"256,,128", "''"}, Case{"0", "'0'"},
        Case{"-4", "'-4'"}, Case{"100000", "'100000'"}, Case{"1.5", "'1.5'"}}) {
    ExpectError(ParseHiddenSizes(c.value).status(), absl::StatusCode::kInvalidArgument,
                {"--hidden=" + c.value, c.culprit});
  }
  auto ok = ParseHiddenSizes("256,128");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (std::vector<int64_t>{256, 128}));
}

TEST(FlagsParse, BadEvalEveryIsRejected) {
  for (const std::string value : {"abc", "-1", "0epoch", "-2epochs", "xepochs", "1.5", "5stepz"}) {
    ExpectError(ParseEvalEvery(value).status(), absl::StatusCode::kInvalidArgument,
                {"--eval_every=" + value});
  }
  auto steps = ParseEvalEvery("500steps");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->steps, 500);
  auto epochs = ParseEvalEvery("0.5epochs");
  ASSERT_TRUE(epochs.ok());
  EXPECT_EQ(epochs->epochs, 0.5);
}

TEST(FlagsParse, CheckpointEveryNamesTheUnitsOrTheRange) {
  // No number with an accepted unit: a parse error naming the units, not "out of range".
  for (const std::string value : {"5min", "abc", "10x", "s"}) {
    ExpectError(ParseCheckpointEvery(value).status(), absl::StatusCode::kInvalidArgument,
                {"--checkpoint_every=" + value + " is not a period", "s, m or h", "steps"});
  }
  for (const std::string value : {"-5", "2000000000000", "0s", "1e9s"}) {
    ExpectError(ParseCheckpointEvery(value).status(), absl::StatusCode::kInvalidArgument,
                {"--checkpoint_every=" + value + " is out of range"});
  }
  auto minutes = ParseCheckpointEvery("10m");
  ASSERT_TRUE(minutes.ok());
  EXPECT_EQ(minutes->seconds, 600.0);
}

TEST(FlagsParse, SeedSaysNotAnIntegerOrOutOfRange) {
  ExpectError(ParseSeed("abc").status(), absl::StatusCode::kInvalidArgument,
              {"--seed=abc is not an integer", "[0, 18446744073709551615]"});
  ExpectError(ParseSeed("-1").status(), absl::StatusCode::kInvalidArgument,
              {"--seed=-1 is out of range"});
  ExpectError(ParseSeed("18446744073709551616").status(), absl::StatusCode::kInvalidArgument,
              {"--seed=18446744073709551616 is out of range"});
}

}  // namespace
}  // namespace hogwild
