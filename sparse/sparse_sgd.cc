#include "sparse/sparse_sgd.h"

#include <cmath>

#include "kernels/cpu/shared_element.h"

namespace hogwild::sparse {
namespace {

// w.x over the example's support, in index order, float32 like the rest of the step.
inline float Margin(const SparseDataset& data, int64_t i, const float* shared) {
  const int64_t begin = data.row_offsets[i];
  const int64_t end = data.row_offsets[i + 1];
  const int32_t* idx = data.indices.data();
  const float* val = data.values.data();
  float margin = 0.0f;
  for (int64_t k = begin; k < end; ++k) margin += cpu::SharedLoad(shared + idx[k]) * val[k];
  return margin;
}

}  // namespace

float SparseSgdStep(LinearModel model, const SgdMomentumFn& sgd_in, const SparseDataset& data,
                    int64_t i, float* shared) {
  // A local copy: the stores into `shared` could alias the caller's functor (both are floats),
  // which would make the compiler reload lr and re-test momentum for every element.
  const SgdMomentumFn sgd = sgd_in;
  const LossAndSlope ls = LinearLoss(model, Margin(data, i, shared), data.labels[i]);
  // A zero slope (hinge beyond the margin) still decays the support when weight decay is on.
  if (ls.slope == 0.0f && sgd.weight_decay == 0.0f) return ls.loss;
  const int64_t begin = data.row_offsets[i];
  const int64_t end = data.row_offsets[i + 1];
  const int32_t* idx = data.indices.data();
  const float* val = data.values.data();
  float unused_velocity = 0.0f;
  for (int64_t k = begin; k < end; ++k) {
    cpu::SharedSgdElement(sgd, ls.slope * val[k], unused_velocity, shared + idx[k]);
  }
  return ls.loss;
}

float AddExample(LinearModel model, const SparseDataset& data, int64_t i, float scale,
                 const float* shared, SparseGradient& gradient) {
  const LossAndSlope ls = LinearLoss(model, Margin(data, i, shared), data.labels[i]);
  const float c = ls.slope * scale;
  const int64_t begin = data.row_offsets[i];
  const int64_t end = data.row_offsets[i + 1];
  for (int64_t k = begin; k < end; ++k) gradient.Accumulate(data.indices[k], c * data.values[k]);
  return ls.loss;
}

void ApplySparseGradient(const SgdMomentumFn& sgd, const SparseGradient& gradient, float* shared) {
  ApplySparseSgd(sgd.lr, sgd.weight_decay, {}, gradient, shared);
}

LinearEvaluation EvaluateLinear(LinearModel model, absl::Span<const float> weights,
                                const SparseDataset& data) {
  double loss = 0.0;
  int64_t correct = 0;
  for (int64_t i = 0; i < data.num_examples(); ++i) {
    double margin = 0.0;
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      margin += static_cast<double>(weights[data.indices[k]]) * data.values[k];
    }
    const double y = SignedLabel(data.labels[i]);
    const double z = y * margin;
    loss += model == LinearModel::kHinge
                ? (z < 1.0 ? 1.0 - z : 0.0)
                : (z > 0.0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z)));
    correct += (margin > 0.0 ? 1.0 : -1.0) == y;
  }
  const double n = static_cast<double>(data.num_examples());
  return {loss / n, static_cast<double>(correct) / n};
}

}  // namespace hogwild::sparse
