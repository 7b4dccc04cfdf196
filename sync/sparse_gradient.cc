#include "sync/sparse_gradient.h"

namespace hogwild {

SparseGradient::SparseGradient(int64_t num_params)
    : sum_(num_params, 0.0f), marked_(num_params, 0) {}

void SparseGradient::Add(const SparseGradient& other) {
  for (int32_t j : other.touched_) Accumulate(j, other.sum_[j]);
}

void SparseGradient::Clear() {
  for (int32_t j : touched_) {
    sum_[j] = 0.0f;
    marked_[j] = 0;
  }
  touched_.clear();
}

}  // namespace hogwild
