// Bitwise comparison of float arrays, for the tests that promise "bitwise equal" (equivalences
// between modes, policies, the simulation and sequential SGD): a failure says how many elements
// differ rather than stopping at the first.
#ifndef HOGWILD_TESTS_BITWISE_H_
#define HOGWILD_TESTS_BITWISE_H_

#include <bit>
#include <cstdint>

#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace hogwild::testing {

// The number of positions where `a` and `b` hold different bit patterns (so -0.0 differs from
// 0.0, and a NaN equals only the same NaN). Different sizes fail the calling test and compare
// the common prefix.
inline int64_t CountBitwiseDifferences(absl::Span<const float> a, absl::Span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  int64_t n = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    n += std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]);
  }
  return n;
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_BITWISE_H_
