#include "sparse/buckwild.h"

#include "absl/strings/str_format.h"

namespace hogwild::sparse {

absl::Status ValidateFixedPointFormat(const FixedPointFormat& format) {
  if (format.bits != 8 && format.bits != 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--fixed_point_bits=%d is not a model width of buckwild mode: 8 or 16", format.bits));
  }
  if (!(format.range > 0.0f) || !(format.range <= 65536.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--fixed_point_range=%g is out of range (0, 65536]: the largest |weight| the fixed-point "
        "model holds",
        format.range));
  }
  return absl::OkStatus();
}

}  // namespace hogwild::sparse
