// The evaluation points (trainer/eval_schedule.h): each multiple of the period is claimed exactly
// once, in order, by concurrent claimers whose steps outrun each other; a step past several
// unclaimed points gets the earliest (late, never skipped); a resumed run starts after its step.
#include "trainer/eval_schedule.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace hogwild {
namespace {

TEST(EvalSchedule, APointIsClaimedOnceWhenReached) {
  EvalSchedule schedule(5, 0);
  EXPECT_FALSE(schedule.Claim(4).has_value());
  EXPECT_EQ(schedule.Claim(5), 5);
  EXPECT_FALSE(schedule.Claim(5).has_value()) << "claimed already";
  EXPECT_FALSE(schedule.Claim(9).has_value());
  EXPECT_EQ(schedule.Claim(10), 10);
}

TEST(EvalSchedule, AStepPastSeveralPointsClaimsThemOneByOneInOrder) {
  EvalSchedule schedule(5, 0);
  EXPECT_EQ(schedule.Claim(17), 5);
  EXPECT_EQ(schedule.Claim(17), 10);
  EXPECT_EQ(schedule.Claim(17), 15);
  EXPECT_FALSE(schedule.Claim(17).has_value());
  EXPECT_EQ(schedule.Claim(20), 20);
}

TEST(EvalSchedule, AResumedRunClaimsThePointsAnUninterruptedOneWould) {
  EvalSchedule at_point(5, 10);  // a checkpoint at a point: that point was evaluated before
  EXPECT_FALSE(at_point.Claim(14).has_value());
  EXPECT_EQ(at_point.Claim(15), 15);
  EvalSchedule between(5, 12);
  EXPECT_EQ(between.Claim(15), 15);
}

TEST(EvalSchedule, ConcurrentClaimersTakeEveryPointExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int64_t kSteps = 20000;
  constexpr int64_t kEvery = 7;
  EvalSchedule schedule(kEvery, 0);
  std::atomic<int64_t> global_step{0};
  std::mutex mu;
  std::vector<int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::vector<int64_t> mine;
      // As workers do: an update, then a claim with the step it made.
      while (true) {
        const int64_t step = global_step.fetch_add(1) + 1;
        if (step > kSteps) break;
        if (auto point = schedule.Claim(step)) mine.push_back(*point);
      }
      std::lock_guard<std::mutex> lock(mu);
      claimed.insert(claimed.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  // Whatever claims lost a race, the last steps' claims pick up: every point up to kSteps.
  std::sort(claimed.begin(), claimed.end());
  std::vector<int64_t> expected;
  for (int64_t p = kEvery; p <= kSteps; p += kEvery) expected.push_back(p);
  EXPECT_EQ(claimed, expected);
}

}  // namespace
}  // namespace hogwild
