#include "sync/sparse_gradient.h"

#include <algorithm>

#include "kernels/cpu/shared_element.h"
#include "kernels/functors.h"

namespace hogwild {

SparseGradient::SparseGradient(int64_t num_params)
    : sum_(num_params, 0.0f), marked_(num_params, 0) {}

void SparseGradient::Add(const SparseGradient& other) {
  for (int32_t j : other.touched_) Accumulate(j, other.sum_[j]);
}

void SparseGradient::Scale(float factor) {
  for (int32_t j : touched_) sum_[j] *= factor;
}

void SparseGradient::Clear() {
  for (int32_t j : touched_) {
    sum_[j] = 0.0f;
    marked_[j] = 0;
  }
  touched_.clear();
}

void ApplySparseSgd(float lr, float weight_decay,
                    absl::Span<const std::pair<int64_t, int64_t>> no_decay,
                    const SparseGradient& grad, float* shared) {
  // Local functors: a store into `shared` could alias a caller's (both are floats), which would
  // make the compiler reload lr for every element.
  const SgdMomentumFn decayed{lr, 0.0f, weight_decay};
  float unused_velocity = 0.0f;
  if (no_decay.empty() || weight_decay == 0.0f) {
    for (int32_t j : grad.touched()) {
      cpu::SharedSgdElement(decayed, grad.value(j), unused_velocity, shared + j);
    }
    return;
  }
  const SgdMomentumFn exempt{lr, 0.0f, 0.0f};
  for (int32_t j : grad.touched()) {
    // The first range that ends after j; j is exempt when that range has begun.
    const auto range = std::upper_bound(
        no_decay.begin(), no_decay.end(), static_cast<int64_t>(j),
        [](int64_t at, const std::pair<int64_t, int64_t>& r) { return at < r.second; });
    const bool is_exempt = range != no_decay.end() && range->first <= j;
    cpu::SharedSgdElement(is_exempt ? exempt : decayed, grad.value(j), unused_velocity, shared + j);
  }
}

}  // namespace hogwild
