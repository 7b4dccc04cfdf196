// The divergence guard's scan: finds a NaN or an infinity in a gradient before it reaches the
// shared parameters.
#ifndef HOGWILD_TRAINER_FINITE_CHECK_H_
#define HOGWILD_TRAINER_FINITE_CHECK_H_

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "absl/types/span.h"

namespace hogwild {

// Index of the first NaN or ±Inf in `values` ([n] float32, host memory), or -1 if every value
// is finite. A float is non-finite exactly when its exponent bits are all ones, i.e. when
// (bits & 0x7fffffff) >= 0x7f800000; the per-block maximum of that is a reduction the compiler
// vectorizes, so the scan costs about a memory pass (~0.1 ms for P = 268,800 on one core, under
// 5% of a batch-64 MLP step).
inline int64_t FirstNonFinite(absl::Span<const float> values) {
  constexpr size_t kBlock = 1024;
  for (size_t lo = 0; lo < values.size(); lo += kBlock) {
    const size_t hi = std::min(values.size(), lo + kBlock);
    uint32_t max_magnitude = 0;
    for (size_t i = lo; i < hi; ++i) {
      max_magnitude = std::max(max_magnitude, std::bit_cast<uint32_t>(values[i]) & 0x7fffffffu);
    }
    if (max_magnitude >= 0x7f800000u) {
      for (size_t i = lo; i < hi; ++i) {
        if (!std::isfinite(values[i])) return static_cast<int64_t>(i);
      }
    }
  }
  return -1;
}

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_FINITE_CHECK_H_
