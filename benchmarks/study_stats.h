// Statistics over seeds for the study report (benchmarks/sync_vs_async.cc): the mean and a 95%
// confidence interval for the mean from Student's t distribution, and the wording of a cell
// where some seeds never reached the target accuracy.
//
// Thread-safety: plain functions.
#ifndef HOGWILD_BENCHMARKS_STUDY_STATS_H_
#define HOGWILD_BENCHMARKS_STUDY_STATS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hogwild {

// The mean of n values and the half-width of its two-sided 95% interval,
// t_{0.975, n-1} * s / sqrt(n) with s the sample standard deviation (n - 1 in the
// denominator). With one value there is no interval (half_width empty).
struct MeanInterval {
  double mean = 0.0;
  std::optional<double> half_width;
  int n = 0;
};

// The 0.975 quantile of Student's t with `degrees_of_freedom` (>= 1) degrees of freedom, the
// factor of a two-sided 95% interval (Boost.Math). Errors: kInvalidArgument for df < 1.
absl::StatusOr<double> StudentT975(int degrees_of_freedom);

// Mean and 95% Student-t interval of `values`. Errors: kInvalidArgument when empty or when a
// value is not finite.
absl::StatusOr<MeanInterval> Mean95(const std::vector<double>& values);

// "m" with one value, "m ± h" otherwise; both with printf precision `decimals`.
std::string FormatMeanInterval(const MeanInterval& m, int decimals);

// A word on an interval from few seeds, for a report whose configurations have at least
// `fewest_seeds` seeds: with n in [2, 4] the half-width is t_{0.975, n-1} / sqrt(n) sample
// deviations (9.0 with 2 seeds), wide whatever the runs do, and the note says so and what 5
// seeds give; "" for other n (one seed has no interval). Pure.
std::string FewSeedsNote(int fewest_seeds);

// A cell over seeds of a quantity that only exists when the seed reached the target (time or
// examples to target): "m ± h" (FormatMeanInterval) when every seed reached it, else
// "k of n seeds did not reach X%" (X = 100 * target_accuracy, up to one decimal), never an
// average of the seeds that did. Empty `values`: "no seeds". Errors: those of Mean95.
absl::StatusOr<std::string> FormatReached(const std::vector<std::optional<double>>& values,
                                          double target_accuracy, int decimals);

}  // namespace hogwild

#endif  // HOGWILD_BENCHMARKS_STUDY_STATS_H_
