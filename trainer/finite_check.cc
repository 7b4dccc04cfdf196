#include "trainer/finite_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hogwild {

std::string FormatNonFinite(double v) { return std::isnan(v) ? "nan" : absl::StrCat(v); }

absl::Status DivergedError(absl::string_view what, int64_t global_step, std::optional<double> lr,
                           absl::string_view remedy) {
  return absl::InvalidArgumentError(
      absl::StrFormat("training diverged: %s at global step %d%s; %s", what, global_step,
                      lr ? absl::StrFormat(" (learning rate %g)", *lr) : "", remedy));
}

absl::Status CheckFinite(absl::Span<const float> values, absl::string_view name,
                         int64_t global_step, std::optional<double> lr, absl::string_view remedy) {
  const int64_t bad = FirstNonFinite(values);
  if (bad < 0) return absl::OkStatus();
  return DivergedError(absl::StrFormat("%s %d is %s", name, bad, FormatNonFinite(values[bad])),
                       global_step, lr, remedy);
}

}  // namespace hogwild
