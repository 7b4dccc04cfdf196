#include "trainer/finite_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hogwild {

std::string FormatNonFinite(double v) { return std::isnan(v) ? "nan" : absl::StrCat(v); }

absl::Status DivergedError(absl::string_view what, int64_t global_step, std::optional<double> lr) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "training diverged: %s at global step %d%s; lower --lr (or --weight_decay or --momentum)",
      what, global_step, lr ? absl::StrFormat(" (learning rate %g)", *lr) : ""));
}

absl::Status CheckFinite(absl::Span<const float> values, absl::string_view name,
                         int64_t global_step, std::optional<double> lr) {
  const int64_t bad = FirstNonFinite(values);
  if (bad < 0) return absl::OkStatus();
  return DivergedError(absl::StrFormat("%s %d is %s", name, bad, FormatNonFinite(values[bad])),
                       global_step, lr);
}

}  // namespace hogwild
