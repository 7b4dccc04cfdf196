// The statistics of the study report (benchmarks/study_stats.h) against hand-computed values;
// the t quantiles are those of a published table (e.g. NIST/SEMATECH e-Handbook of Statistical
// Methods, section 1.3.6.7.2, upper critical values of Student's t, alpha = 0.025).
#include "benchmarks/study_stats.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hogwild {
namespace {

TEST(StudyStatsTest, StudentTMatchesThePublishedTable) {
  const struct {
    int df;
    double t;
  } table[] = {{1, 12.706}, {2, 4.303},  {4, 2.776},  {7, 2.365},
               {10, 2.228}, {30, 2.042}, {100, 1.984}};
  for (const auto& row : table) {
    absl::StatusOr<double> t = StudentT975(row.df);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_NEAR(*t, row.t, 0.0005) << "df " << row.df;
  }
  EXPECT_FALSE(StudentT975(0).ok());
}

// Two seeds give a wide interval by construction: the report says so instead of printing
// "59.55 ± 40.98" without a word.
TEST(StudyStatsTest, FewSeedsNoteSaysHowWideTheIntervalIs) {
  EXPECT_EQ(FewSeedsNote(2),
            "Few seeds: with 2 seeds a 95% interval's half-width is 12.71 / sqrt(2) = 9.0 times "
            "the seeds' standard deviation (Student t with 1 degree of freedom), so it is wide "
            "whatever the runs do; 5 seeds give 1.2 times.");
  EXPECT_EQ(FewSeedsNote(3),
            "Few seeds: with 3 seeds a 95% interval's half-width is 4.30 / sqrt(3) = 2.5 times "
            "the seeds' standard deviation (Student t with 2 degrees of freedom), so it is wide "
            "whatever the runs do; 5 seeds give 1.2 times.");
  EXPECT_EQ(FewSeedsNote(1), "");  // no interval
  EXPECT_EQ(FewSeedsNote(5), "");
}

TEST(StudyStatsTest, MeanAndIntervalOfThreeValues) {
  // {1, 2, 3}: mean 2, s = 1, half-width t(2) * 1 / sqrt(3) = 4.303 / 1.732 = 2.484.
  absl::StatusOr<MeanInterval> m = Mean95({1.0, 2.0, 3.0});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->mean, 2.0);
  ASSERT_TRUE(m->half_width.has_value());
  EXPECT_NEAR(*m->half_width, 2.484, 0.001);
  EXPECT_EQ(FormatMeanInterval(*m, 2), "2.00 ± 2.48");
}

TEST(StudyStatsTest, MeanAndIntervalOfEightValues) {
  // {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, s^2 = 32 / 7, half-width 2.365 * 2.138 / 2.828 = 1.788.
  absl::StatusOr<MeanInterval> m = Mean95({2, 4, 4, 4, 5, 5, 7, 9});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->mean, 5.0);
  ASSERT_TRUE(m->half_width.has_value());
  EXPECT_NEAR(*m->half_width, 1.788, 0.001);
}

TEST(StudyStatsTest, OneSeedHasNoInterval) {
  absl::StatusOr<MeanInterval> m = Mean95({0.8634});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->half_width.has_value());
  EXPECT_EQ(FormatMeanInterval(*m, 3), "0.863");
}

TEST(StudyStatsTest, RefusesNoValuesAndNonFiniteValues) {
  EXPECT_FALSE(Mean95({}).ok());
  EXPECT_FALSE(Mean95({1.0, std::nan("")}).ok());
}

TEST(StudyStatsTest, SeedsThatDidNotReachTheTargetAreNamedNotAveraged) {
  absl::StatusOr<std::string> cell = FormatReached({5.0, std::nullopt, 6.0}, 0.85, 2);
  ASSERT_TRUE(cell.ok()) << cell.status();
  EXPECT_EQ(*cell, "1 of 3 seeds did not reach 85%");
  cell = FormatReached({std::nullopt, std::nullopt}, 0.875, 2);
  ASSERT_TRUE(cell.ok()) << cell.status();
  EXPECT_EQ(*cell, "2 of 2 seeds did not reach 87.5%");
  cell = FormatReached({5.0, 7.0}, 0.85, 1);
  ASSERT_TRUE(cell.ok()) << cell.status();
  // t(1) * sqrt(2) / sqrt(2) = 12.706.
  EXPECT_EQ(*cell, "6.0 ± 12.7");
}

}  // namespace
}  // namespace hogwild
