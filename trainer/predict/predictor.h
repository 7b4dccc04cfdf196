// Prediction (TensorFlow Estimator's PREDICT mode): the class probabilities and predicted class
// of every example of a dataset under given parameters, on the CPU backend.
#ifndef HOGWILD_TRAINER_PREDICT_PREDICTOR_H_
#define HOGWILD_TRAINER_PREDICT_PREDICTOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "trainer/data/dataset.h"
#include "trainer/model/model.h"

namespace hogwild {

struct Predictions {
  int64_t num_classes = 0;           // K
  std::vector<int32_t> predicted;    // [N] argmax of the logits (the first on ties)
  std::vector<float> probabilities;  // [N, K] softmax of the logits, row-major
  int64_t correct = 0;               // examples whose label is the predicted class

  int64_t size() const { return static_cast<int64_t>(predicted.size()); }
  // correct / N, in [0, 1]; 0 for no examples.
  double accuracy() const {
    return predicted.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(size());
  }
};

// Runs `model` with `params` ([P] float32, host memory) on every example of `data` in chunks of
// `batch` examples (>= 1). The forward pass, the chunking (1000, the Evaluator's default) and
// the argmax are the trainer's evaluation's (trainer/metrics/evaluator.h), so `correct` equals
// the count behind its test accuracy for the same parameters and data. Probabilities are
// computed in double from the float logits (max-subtracted) and rounded to float.
// Errors: kInvalidArgument when params is not [P]; kFailedPrecondition naming both shapes when
// the dataset's examples are not the model's input shape ("... examples of shape 1x28x28; the
// checkpoint's model cnn takes 3x32x32"), or its class count differs from the model's. Thread-safe
// (each call owns its CPU backend and tower).
absl::StatusOr<Predictions> Predict(const Model& model, absl::Span<const float> params,
                                    const Dataset& data, int64_t batch = 1000);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_PREDICT_PREDICTOR_H_
