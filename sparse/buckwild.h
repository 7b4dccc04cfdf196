// Buckwild! (De Sa, Zhang, Olukotun, Ré, "Taming the Wild: A Unified Analysis of Hogwild!-Style
// Algorithms", NIPS 2015, Section 4): Hogwild!'s lock-free SGD with the model in low-precision
// fixed point. The paper's claims: unbiased rounding keeps SGD's convergence (its Theorem 2,
// with a noise term from the rounding that grows with the quantization step), and the narrower
// model makes each update move fewer bytes, which it reports as large throughput gains on CPUs.
//
// The format: weight w_j = delta * q_j, q_j a signed integer of b = 8 or 16 bits, delta = R /
// 2^(b - 1) for the range R (FixedPointFormat), so the weights representable are [-R, R - delta].
// One coordinate's SGD step w_j <- w_j - lr (g_j + wd w_j) becomes
//
//   q_j <- sat(q_j + round~(-lr (g_j + wd w_j) / delta)),   round~(y) = floor(y) + [u < y - floor(y)]
//
// with u uniform in [0, 1) drawn afresh for every coordinate of every update: the paper's
// unbiased stochastic rounding, E[round~(y)] = y (here within 2^-24 of a step: u has 24 random
// bits, StochasticRounder). sat clamps to [-2^(b-1), 2^(b-1) - 1], which biases only updates that
// would leave the range. The margin w.x is computed in float32 from the integers (delta * sum of
// q_j x_j); the data stay float32 (the paper's "D32M8", not its 8-bit data).
//
// Concurrency: the model is a shared array of int8_t or int16_t read and written element by
// element with std::atomic_ref (relaxed): never torn, an update concurrent with another worker's
// of the same element may be lost (the contract of sync/parameter_store.h on integers, except
// that every element of an update's support is stored, changed or not).
//
// Here: --mode=buckwild of the sparse linear models (sparse/policy_workers.h RunSparseEpoch), on
// async's data split with batch 1; the float store is converted to fixed point at an epoch's
// start and back at its end, exactly (the floats the end writes convert back to the same
// integers), so evaluations
// and checkpoints see the fixed-point model as it is and a resume continues it bitwise.
#ifndef HOGWILD_SPARSE_BUCKWILD_H_
#define HOGWILD_SPARSE_BUCKWILD_H_

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/splitmix64.h"
#include "sparse/linear_loss.h"
#include "sparse/sparse_dataset.h"

namespace hogwild::sparse {

// The fixed-point format of a model: `bits` (8 or 16) and the range R > 0 (finite).
struct FixedPointFormat {
  int bits = 8;
  float range = 8.0f;
  // delta = R / 2^(bits - 1): the weight of one integer step.
  float step() const { return range / static_cast<float>(1 << (bits - 1)); }
};

// Checks bits in {8, 16} and range in (0, 2^16] finite. Errors: kInvalidArgument naming
// --fixed_point_bits or --fixed_point_range, the value and the allowed values. Pure.
absl::Status ValidateFixedPointFormat(const FixedPointFormat& format);

// A worker's stream of uniform draws for the rounding: u_n = (top 24 bits of SplitMix64(s + n)) /
// 2^24 for the n-th draw from state s = SplitMix64(seed) + SplitMix64(stream) (stream: e.g. the
// epoch and the worker). Not thread-safe: one per worker.
class StochasticRounder {
 public:
  StochasticRounder(uint64_t seed, uint64_t stream)
      : state_(SplitMix64(seed) + SplitMix64(stream ^ 0x5eed5eed5eed5eedull)) {}

  // The next draw, in [0, 1) on a grid of 2^-24.
  float Uniform() { return static_cast<float>(SplitMix64(state_++) >> 40) * 0x1p-24f; }

  // round~(y) = floor(y) + [u < y - floor(y)] as a float holding an integer; E over u is y within
  // 2^-24 (the draw's grid). y finite, |y| < 2^24 (so that y - floor(y) is exact).
  float Round(float y) {
    // Branch-free: the comparisons are coin flips a branch predictor would miss half the time.
    // floor by truncation (one instruction on any x86-64; std::floor is a libm call without
    // SSE4.1), less one for a negative non-integer.
    const float truncated = static_cast<float>(static_cast<int32_t>(y));
    const float lower = truncated - static_cast<float>(truncated > y);
    return lower + static_cast<float>(Uniform() < y - lower);
  }

 private:
  uint64_t state_;
};

// An integer-valued float clamped to T's range, as a T; `clamped` tells whether it was out of
// it. Pure.
template <typename T>
T Saturate(float v, bool& clamped) {
  constexpr float kLo = static_cast<float>(std::numeric_limits<T>::min());
  constexpr float kHi = static_cast<float>(std::numeric_limits<T>::max());
  clamped = (v < kLo) | (v > kHi);
  return static_cast<T>(std::clamp(v, kLo, kHi));
}

// q + r clamped to T's range (r an integer-valued float, any magnitude). Pure.
template <typename T>
T SaturatingAdd(T q, float r) {
  bool clamped = false;
  return Saturate<T>(static_cast<float>(q) + r, clamped);
}

// weights ([D] float32) into `fixed` ([D] T, T int8_t for 8 bits, int16_t for 16), each
// round-to-nearest of w / delta clamped to T's range: exact for every weight a delta * q
// (FromFixedPoint's output; zero). Plain reads and writes: no worker may run. Pure otherwise.
template <typename T>
void ToFixedPoint(const FixedPointFormat& format, absl::Span<const float> weights, T* fixed) {
  const float inverse = 1.0f / format.step();
  for (size_t j = 0; j < weights.size(); ++j) {
    fixed[j] = SaturatingAdd<T>(0, std::nearbyint(weights[j] * inverse));
  }
}

// weights[j] = delta * fixed[j], rounded to float32 (exact when delta is a power of two; either
// way ToFixedPoint gives fixed[j] back: |q| <= 2^15 is far from float32's 24-bit rounding).
// As ToFixedPoint.
template <typename T>
void FromFixedPoint(const FixedPointFormat& format, const T* fixed, absl::Span<float> weights) {
  const float delta = format.step();
  for (size_t j = 0; j < weights.size(); ++j) weights[j] = delta * static_cast<float>(fixed[j]);
}

// One shared element of the fixed-point model (the contract above). Thread-safe.
template <typename T>
T FixedLoad(const T* element) {
  return std::atomic_ref<T>(*const_cast<T*>(element)).load(std::memory_order_relaxed);
}

// Buckwild!'s step of example i (batch 1, the Hogwild! paper's Algorithm 1 in fixed point): the
// margin delta * sum_k q[idx_k] x_k read from `fixed`, the loss's slope s (linear_loss.h), and
// for each coordinate j of the support, in index order, one load of q_j and one store of
// sat(q_j + round~(-lr (s x_j + wd delta q_j) / delta)). Returns the example's loss at the margin
// it read; adds to `saturated` the coordinates whose q_j + round~(...) left T's range (and were
// clamped). `fixed` [D] of int8_t or int16_t; i in [0, N). Thread-safe concurrently with any
// other FixedPointSgdStep on `fixed` (the contract above); `rounder` and `saturated` are the
// caller's own.
template <typename T>
float FixedPointSgdStep(LinearModel model, const FixedPointFormat& format, float lr,
                        float weight_decay, const SparseDataset& data, int64_t i, T* fixed,
                        StochasticRounder& rounder, int64_t& saturated) {
  static_assert(std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t>);
  const int64_t begin = data.row_offsets[i];
  const int64_t end = data.row_offsets[i + 1];
  const int32_t* idx = data.indices.data();
  const float* val = data.values.data();
  const float delta = format.step();
  float dot = 0.0f;
  for (int64_t k = begin; k < end; ++k) dot += static_cast<float>(FixedLoad(fixed + idx[k])) * val[k];
  const LossAndSlope ls = LinearLoss(model, delta * dot, data.labels[i]);
  if (ls.slope == 0.0f && weight_decay == 0.0f) return ls.loss;
  // -lr (s x + wd delta q) / delta = c x + d q.
  const float c = -lr * ls.slope / delta;
  const float d = -lr * weight_decay;
  int64_t clamped = 0;
  for (int64_t k = begin; k < end; ++k) {
    std::atomic_ref<T> element(fixed[idx[k]]);
    const T old_q = element.load(std::memory_order_relaxed);
    bool out_of_range = false;
    const T new_q = Saturate<T>(static_cast<float>(old_q) +
                                    rounder.Round(c * val[k] + d * static_cast<float>(old_q)),
                                out_of_range);
    clamped += out_of_range;
    // Stored even when unchanged: whether the rounding moved it is a coin flip, and a
    // mispredicted branch costs more than the store.
    element.store(new_q, std::memory_order_relaxed);
  }
  saturated += clamped;
  return ls.loss;
}

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_BUCKWILD_H_
