// The divergence guard: the scan that finds a NaN or an infinity in a gradient before it reaches
// the shared parameters, and the one error every command and front end reports when training
// has diverged (a non-finite loss, gradient, parameter or evaluation), whatever found it.
#ifndef HOGWILD_TRAINER_FINITE_CHECK_H_
#define HOGWILD_TRAINER_FINITE_CHECK_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace hogwild {

namespace finite_check_internal {

inline constexpr size_t kBlock = 1024;

// True if one of v[0, kBlock) is NaN or ±Inf. A float is non-finite exactly when its 8 exponent
// bits are all ones; then (bits & 0x7f800000) + 0x00800000 carries into bit 31, and otherwise it
// stays below 2^31. AND, ADD and OR exist in plain SSE2 (unlike an unsigned max, which x86-64's
// baseline lacks), so with the constant trip count GCC -O2 vectorizes the loop and the check
// runs at close to memcpy speed.
inline bool BlockHasNonFinite(const float* v) {
  uint32_t carry = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    uint32_t bits;
    std::memcpy(&bits, v + i, sizeof(bits));
    carry |= (bits & 0x7f800000u) + 0x00800000u;
  }
  return (carry & 0x80000000u) != 0;
}

}  // namespace finite_check_internal

// Index of the first NaN or ±Inf in `values` ([n] float32, host memory), or -1 if every value
// is finite. Pure, thread-safe.
inline int64_t FirstNonFinite(absl::Span<const float> values) {
  using finite_check_internal::kBlock;
  size_t lo = 0;
  for (; lo + kBlock <= values.size(); lo += kBlock) {
    if (!finite_check_internal::BlockHasNonFinite(values.data() + lo)) continue;
    for (size_t i = lo; i < lo + kBlock; ++i) {
      if (!std::isfinite(values[i])) return static_cast<int64_t>(i);
    }
  }
  for (size_t i = lo; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

// "nan", "inf", "-inf" or the number: printf's %f writes "-nan" for a NaN with its sign bit set
// (as 0 * inf gives), which reads like a different value.
std::string FormatNonFinite(double v);

// What a diverged run can lower: the dense trainer's options, and the sparse and
// matrix-factorization runs' (which have no momentum).
inline constexpr absl::string_view kDenseDivergenceRemedy =
    "lower --lr (or --weight_decay or --momentum)";
inline constexpr absl::string_view kSparseDivergenceRemedy = "lower --lr (or --weight_decay)";

// The divergence error, one line, kInvalidArgument:
//   "training diverged: <what> at global step <step> (learning rate <lr>); <remedy>"
// `what` names the value, e.g. "the loss is nan" or "parameter 12 is inf"; without `lr` (a
// checkpoint read back) the parenthesis is left out; `remedy` names only options the run has.
// Front ends rename the flags (the Python module drops the dashes).
absl::Status DivergedError(absl::string_view what, int64_t global_step,
                           std::optional<double> lr = std::nullopt,
                           absl::string_view remedy = kDenseDivergenceRemedy);

// The one "parameters are finite" check: OK when every value of `values` ([n] float32, host
// memory) is finite, else DivergedError("<name> <i> is <value>", ...) for the first one that is
// not. Used before a checkpoint is written, when one is read (its EMA too), before a final
// result is reported, and per epoch by the sparse and matrix-factorization runs. Pure.
absl::Status CheckFinite(absl::Span<const float> values, absl::string_view name,
                         int64_t global_step, std::optional<double> lr = std::nullopt,
                         absl::string_view remedy = kDenseDivergenceRemedy);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_FINITE_CHECK_H_
