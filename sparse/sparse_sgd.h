// The sparse SGD step of the Hogwild! paper's Algorithm 1 (Niu, Recht, Ré, Wright, NIPS 2011):
// an example reads and writes only the coordinates of its non-zeros, so workers whose examples
// share no feature never touch the same parameter.
//
// The weights `shared` ([D] float32, host memory) are the array of a ParameterStore and follow
// its contract (sync/parameter_store.h): every element is read with cpu::SharedLoad() and
// updated with cpu::SharedSgdElement() (kernels/cpu/shared_element.h): never torn; an update of
// an element concurrent with another worker's may be lost; unchanged elements are not written.
//
// The gradient of an example i is slope_i * x_i (linear_loss.h); a minibatch's is the sum over
// its examples of scale * slope_i * x_i, scale = 1 / (global batch size). The update of each
// touched coordinate j is SgdMomentumFn with momentum 0: w_j <- w_j - lr * (g_j + wd * w_j).
// Weight decay is applied to the touched coordinates only (the regularizer split over the
// examples' supports, as in the paper's sparse SVM), so an update stays sparse.
#ifndef HOGWILD_SPARSE_SPARSE_SGD_H_
#define HOGWILD_SPARSE_SPARSE_SGD_H_

#include <cstdint>

#include "absl/types/span.h"
#include "kernels/functors.h"
#include "sparse/linear_loss.h"
#include "sparse/sparse_dataset.h"
#include "sync/sparse_gradient.h"

namespace hogwild::sparse {

// Batch 1 (the paper's setting): the margin of example i from `shared`, then every coordinate of
// its support updated with gradient slope * x_ij, in index order. Returns the example's loss at
// the margin it read. `i` in [0, N); data's indices < D. sgd.momentum must be 0.
// Thread-safety: safe concurrently with any other SparseSgdStep()/ApplySparseGradient() on the
// same `shared` (the contract above).
float SparseSgdStep(LinearModel model, const SgdMomentumFn& sgd, const SparseDataset& data,
                    int64_t i, float* shared);

// Adds example i's gradient scale * slope_i * x_i (slope_i at the margin read from `shared` with
// SharedLoad) to `gradient` ([D]; every coordinate of the support touched, also when the slope is
// 0, so that weight decay reaches the support as in SparseSgdStep()), and returns the example's
// loss. Reads `shared` only: safe concurrently with other workers' updates.
float AddExample(LinearModel model, const SparseDataset& data, int64_t i, float scale,
                 const float* shared, SparseGradient& gradient);

// w_j <- sgd(w_j, gradient.value(j)) for j in gradient.touched(), in that order, with
// SharedSgdElement: ApplySparseSgd (sync/sparse_gradient.h, the update policies' one
// touched-coordinate update) with every coordinate decaying. sgd.momentum must be 0.
// Thread-safety: as SparseSgdStep().
void ApplySparseGradient(const SgdMomentumFn& sgd, const SparseGradient& gradient, float* shared);

struct LinearEvaluation {
  double mean_loss = 0.0;  // mean of the examples' losses (double accumulation)
  double accuracy = 0.0;   // fraction with sign(margin) == label's sign (margin 0 counts as -1)
};

// The model `weights` ([>= D] float32; plain reads: not concurrent with updates) on every example
// of `data`. Margins in double. N >= 1.
LinearEvaluation EvaluateLinear(LinearModel model, absl::Span<const float> weights,
                                const SparseDataset& data);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_SPARSE_SGD_H_
