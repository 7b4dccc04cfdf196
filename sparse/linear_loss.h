// The losses of the sparse linear models, as functions of the margin m = w.x and the label
// y in {-1, +1} (a data set's label > 0 is +1, anything else -1: sparse_dataset.h):
//
//   logistic regression: loss = log(1 + exp(-y m)),  dloss/dm = -y / (1 + exp(y m))
//   linear SVM (hinge):  loss = max(0, 1 - y m),     dloss/dm = -y if y m < 1, else 0
//                        (the subgradient 0 at the kink y m = 1)
//
// Pure, thread-safe, float32 (the trainer's arithmetic); the losses reported over a data set
// are accumulated in double by EvaluateLinear() (sparse/sparse_sgd.h).
#ifndef HOGWILD_SPARSE_LINEAR_LOSS_H_
#define HOGWILD_SPARSE_LINEAR_LOSS_H_

#include <cmath>

namespace hogwild::sparse {

enum class LinearModel { kLogistic, kHinge };

// The models' names in flags and logs: "logreg", "svm".
inline const char* LinearModelName(LinearModel model) {
  return model == LinearModel::kHinge ? "svm" : "logreg";
}

// +1 for a label > 0, else -1.
inline float SignedLabel(float label) { return label > 0.0f ? 1.0f : -1.0f; }

struct LossAndSlope {
  float loss;   // the example's loss at margin m
  float slope;  // dloss/dm
};

inline LossAndSlope LinearLoss(LinearModel model, float margin, float label) {
  const float y = SignedLabel(label);
  const float z = y * margin;
  if (model == LinearModel::kHinge) {
    return z < 1.0f ? LossAndSlope{1.0f - z, -y} : LossAndSlope{0.0f, 0.0f};
  }
  // log(1 + exp(-z)) without overflow for large |z|.
  const float e = std::exp(-std::fabs(z));
  const float loss = (z > 0.0f ? 0.0f : -z) + std::log1p(e);
  // 1 / (1 + exp(z)) = sigmoid(-z), stable on both sides.
  const float sigmoid_minus_z = z > 0.0f ? e / (1.0f + e) : 1.0f / (1.0f + e);
  return {loss, -y * sigmoid_minus_z};
}

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_LINEAR_LOSS_H_
