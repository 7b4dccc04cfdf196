#include "benchmarks/study_stats.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "boost/math/distributions/students_t.hpp"

namespace hogwild {

absl::StatusOr<double> StudentT975(int degrees_of_freedom) {
  if (degrees_of_freedom < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Student t: %d degrees of freedom; need at least 1", degrees_of_freedom));
  }
  const boost::math::students_t dist(static_cast<double>(degrees_of_freedom));
  return boost::math::quantile(dist, 0.975);
}

absl::StatusOr<MeanInterval> Mean95(const std::vector<double>& values) {
  if (values.empty()) return absl::InvalidArgumentError("mean of no values");
  MeanInterval out;
  out.n = static_cast<int>(values.size());
  double sum = 0.0;
  for (double v : values) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrFormat("mean of a non-finite value (%g)", v));
    }
    sum += v;
  }
  out.mean = sum / out.n;
  if (out.n < 2) return out;
  double squares = 0.0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  const double sd = std::sqrt(squares / (out.n - 1));
  absl::StatusOr<double> t = StudentT975(out.n - 1);
  if (!t.ok()) return t.status();
  out.half_width = *t * sd / std::sqrt(static_cast<double>(out.n));
  return out;
}

std::string FormatMeanInterval(const MeanInterval& m, int decimals) {
  if (!m.half_width) return absl::StrFormat("%.*f", decimals, m.mean);
  return absl::StrFormat("%.*f ± %.*f", decimals, m.mean, decimals, *m.half_width);
}

std::string FewSeedsNote(int fewest_seeds) {
  constexpr int kEnough = 5;
  if (fewest_seeds < 2 || fewest_seeds >= kEnough) return "";
  // The half-width in sample standard deviations: t_{0.975, n-1} / sqrt(n).
  const auto width = [](int n) { return *StudentT975(n - 1) / std::sqrt(static_cast<double>(n)); };
  return absl::StrFormat(
      "Few seeds: with %d seeds a 95%% interval's half-width is %.2f / sqrt(%d) = %.1f times the "
      "seeds' standard deviation (Student t with %d degree%s of freedom), so it is wide whatever "
      "the runs do; %d seeds give %.1f times.",
      fewest_seeds, *StudentT975(fewest_seeds - 1), fewest_seeds, width(fewest_seeds),
      fewest_seeds - 1, fewest_seeds == 2 ? "" : "s", kEnough, width(kEnough));
}

absl::StatusOr<std::string> FormatReached(const std::vector<std::optional<double>>& values,
                                          double target_accuracy, int decimals) {
  if (values.empty()) return std::string("no seeds");
  std::vector<double> reached;
  for (const std::optional<double>& v : values) {
    if (v) reached.push_back(*v);
  }
  const int missing = static_cast<int>(values.size() - reached.size());
  if (missing > 0) {
    // 85 -> "85", 87.5 -> "87.5".
    std::string pct = absl::StrFormat("%.1f", 100.0 * target_accuracy);
    if (pct.size() > 2 && pct.substr(pct.size() - 2) == ".0") pct.resize(pct.size() - 2);
    return absl::StrFormat("%d of %d seeds did not reach %s%%", missing, values.size(), pct);
  }
  absl::StatusOr<MeanInterval> m = Mean95(reached);
  if (!m.ok()) return m.status();
  return FormatMeanInterval(*m, decimals);
}

}  // namespace hogwild
