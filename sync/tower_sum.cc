#include "sync/tower_sum.h"

#include <algorithm>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace hogwild {

void SumTowers(absl::Span<const float* const> towers, int64_t lo, int64_t n, float* out) {
  const float* g0 = towers[0] + lo;
  const size_t count = towers.size();
  int64_t i = 0;
#if defined(__SSE2__)
  // The same sums in the same worker order as the scalar loop below, four elements at a time:
  // each element's partial sum stays in a register across the workers.
  for (; i + 4 <= n; i += 4) {
    __m128 acc = _mm_loadu_ps(g0 + i);
    for (size_t w = 1; w < count; ++w) acc = _mm_add_ps(acc, _mm_loadu_ps(towers[w] + lo + i));
    _mm_storeu_ps(out + i, acc);
  }
#endif
  for (; i < n; ++i) {
    float acc = g0[i];
    for (size_t w = 1; w < count; ++w) acc += towers[w][lo + i];
    out[i] = acc;
  }
}

void SumSparseTowers(absl::Span<const SparseGradient* const> towers, SparseGradient& sum) {
  sum.Clear();
  for (const SparseGradient* tower : towers) sum.Add(*tower);
}

void AddTower(int k, absl::Span<const float> tower, absl::Span<float> sum) {
  if (k == 0) {
    std::copy(tower.begin(), tower.end(), sum.begin());
    return;
  }
  const float* pair[2] = {sum.data(), tower.data()};
  SumTowers(absl::MakeConstSpan(pair), 0, static_cast<int64_t>(sum.size()), sum.data());
}

void DivideSum(int count, absl::Span<const float> sum, absl::Span<float> out) {
  const float divisor = static_cast<float>(count);
  for (size_t i = 0; i < sum.size(); ++i) out[i] = sum[i] / divisor;
}

void AverageTowers(absl::Span<const float* const> towers, int64_t lo, int64_t n, float* out) {
  SumTowers(towers, lo, n, out);
  DivideSum(static_cast<int>(towers.size()), absl::MakeConstSpan(out, n), absl::MakeSpan(out, n));
}

float UsedExamplesRescale(int64_t used, int64_t whole) {
  return used == whole || used == 0 ? 1.0f : static_cast<float>(whole) / static_cast<float>(used);
}

void RescaleSum(float rescale, float* sum, int64_t n) {
  if (rescale == 1.0f) return;
  for (int64_t i = 0; i < n; ++i) sum[i] *= rescale;
}

void RescaleSparseSum(float rescale, SparseGradient& sum) {
  if (rescale == 1.0f) return;
  sum.Scale(rescale);
}

}  // namespace hogwild
