// The divergence guard's scan: finds a NaN or an infinity in a gradient before it reaches the
// shared parameters.
#ifndef HOGWILD_TRAINER_FINITE_CHECK_H_
#define HOGWILD_TRAINER_FINITE_CHECK_H_

#include <cmath>
#include <cstdint>
#include <cstring>

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

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_FINITE_CHECK_H_
