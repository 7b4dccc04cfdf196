// A gradient that is zero outside a few coordinates: the gradient kind of the sparse workloads
// (sparse linear models and matrix factorization, whose example touches only its non-zeros or its
// two factor rows; the Hogwild! paper's setting, Niu, Recht, Ré, Wright, NIPS 2011). The update
// policies take it in UpdatePolicy::FinishSparseStep (sync/update_policy.h) and update only its
// coordinates where their rule allows.
//
// Layout: a dense accumulator [P] float32 (so adding an example costs one add per non-zero) and
// the list of the coordinates touched, in the order they were first touched; value(j) is 0 for a
// coordinate not touched. Clear() costs O(touched), not O(P).
//
// Thread-safety: none; one per worker (a policy reads a worker's gradient only inside that
// worker's FinishSparseStep, while the worker waits for it to return).
#ifndef HOGWILD_SYNC_SPARSE_GRADIENT_H_
#define HOGWILD_SYNC_SPARSE_GRADIENT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace hogwild {

class SparseGradient {
 public:
  // P in [1, 2^31 - 1] (the coordinates are int32). Allocates 5 P bytes (throws std::bad_alloc
  // like std::vector).
  explicit SparseGradient(int64_t num_params);

  // P.
  int64_t size() const { return static_cast<int64_t>(sum_.size()); }

  // value(j) += g, j in [0, P); j joins touched() on its first contribution (also when g is 0:
  // a touched coordinate is one the update visits, e.g. for its weight decay).
  void Accumulate(int32_t j, float g) {
    if (!marked_[j]) {
      marked_[j] = 1;
      touched_.push_back(j);
    }
    sum_[j] += g;
  }
  // Adds another gradient (of the same P) into this one: Accumulate(j, other.value(j)) for j in
  // other.touched(), in other's order. Summing the workers' gradients into a cleared one in
  // worker order gives, on every coordinate, bitwise the dense sum of sync/tower_sum.h's
  // SumTowers (a coordinate a tower did not touch adds +0 there), but for the sign of a zero.
  void Add(const SparseGradient& other);

  absl::Span<const int32_t> touched() const { return touched_; }
  float value(int32_t j) const { return sum_[j]; }
  // The dense form, [P]: value(j) on the touched coordinates, 0 elsewhere (O(P)).
  absl::Span<const float> dense() const { return sum_; }

  // value(j) *= factor for j in touched(), in O(touched).
  void Scale(float factor);

  // Back to zero, in O(touched).
  void Clear();

 private:
  std::vector<float> sum_;        // [P], 0 outside touched_
  std::vector<uint8_t> marked_;   // [P], 1 on touched_
  std::vector<int32_t> touched_;  // coordinates with a contribution, first-touch order
};

// The touched-coordinate SGD update, the one place that applies a sparse gradient to a Hogwild!
// shared array (the update policies' sparse steps, sync/update_policy.h, and the sparse models'
// minibatch step): for j in grad.touched(), in that order,
//   shared[j] <- SgdMomentumFn{lr, 0, wd_j}(shared[j], grad.value(j))   (kernels/functors.h)
// with cpu::SharedSgdElement (kernels/cpu/shared_element.h: one relaxed load, at most one relaxed
// store; a concurrent update of the same element may be lost, none is torn). wd_j is
// weight_decay, or 0 where j lies in one of `no_decay`'s [begin, end) ranges (sorted, disjoint;
// SgdOptions::no_decay): weight decay reaches the touched coordinates only, so the update stays
// O(touched). Bitwise the dense rule (SgdMomentumFn with momentum 0 over all P) on the touched
// coordinates; the dense rule leaves the others unchanged only when weight_decay is 0.
//   shared: [P] float32, host memory, P = grad.size()
// Thread-safety: safe concurrently with other workers' shared accesses of `shared`.
void ApplySparseSgd(float lr, float weight_decay,
                    absl::Span<const std::pair<int64_t, int64_t>> no_decay,
                    const SparseGradient& grad, float* shared);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_SPARSE_GRADIENT_H_
