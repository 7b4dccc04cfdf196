// The progress line's "train loss": the mean over the examples trained since the previous line
// (from the snapshots' running totals), so it changes with every line; the window mean before
// any line, and the previous line's value when no example was trained in between.
#include "trainer/cli/progress_line.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace hogwild {
namespace {

ProgressReport Report(int64_t examples, double loss_sum, double window_loss) {
  ProgressReport r;
  r.epochs = 1;
  r.metrics.examples_seen = examples;
  r.metrics.train_loss_sum = loss_sum;
  r.metrics.recent_train_loss = window_loss;
  r.metrics.wall_time_s = 1.0;
  return r;
}

TEST(ProgressLine, TrainLossIsTheMeanSinceThePreviousLine) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  ASSERT_NE(out, nullptr);
  {
    ProgressSink sink = MakeProgressLine(out, /*may_rewrite=*/false);
    sink(Report(0, 0.0, 9.0));      // before any step: the window mean (9)
    sink(Report(100, 250.0, 7.0));  // 250 / 100
    sink(Report(300, 350.0, 7.0));  // 100 / 200, not the unchanged window mean
    sink(Report(300, 350.0, 7.0));  // nothing new: the previous line's
    sink(Report(400, 375.0, 7.0));  // 25 / 100
  }
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  std::vector<std::string> losses;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t at = line.find("train loss ");
    ASSERT_NE(at, absl::string_view::npos) << line;
    losses.emplace_back(line.substr(at + 11, 6));
  }
  EXPECT_EQ(losses, (std::vector<std::string>{"9.0000", "2.5000", "0.5000", "0.5000", "0.2500"}));
}

}  // namespace
}  // namespace hogwild
