#include "trainer/predict/predictor.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "kernels/buffer.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/model/tower.h"

namespace hogwild {

absl::StatusOr<Predictions> Predict(const Model& model, absl::Span<const float> params,
                                    const Dataset& data, int64_t batch) {
  if (static_cast<int64_t>(params.size()) != model.num_params()) {
    return absl::InvalidArgumentError(absl::StrFormat("%d parameters given; the model %s has %d",
                                                      params.size(), model.spec().name,
                                                      model.num_params()));
  }
  if (data.example_shape != model.spec().input_shape) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s has examples of shape %s; the checkpoint's model %s takes %s",
                        data.name, ShapeToString(data.example_shape), model.spec().name,
                        ShapeToString(model.spec().input_shape)));
  }
  if (data.num_classes != model.num_classes()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s has %d classes; the checkpoint's model %s has %d", data.name,
                        data.num_classes, model.spec().name, model.num_classes()));
  }
  batch = std::max<int64_t>(1, batch);
  const int64_t n = data.size();
  const int64_t dim = data.feature_dim();
  const int64_t classes = model.num_classes();
  // Backend memory as the Evaluator uses it, so the GEMMs see the same buffers' alignment.
  CpuBackend backend;
  HOGWILD_ASSIGN_OR_RETURN(auto tower, Tower::Create(&model, &backend, batch));
  HOGWILD_ASSIGN_OR_RETURN(auto device_params,
                           BackendBuffer<float>::Create(&backend, model.num_params()));
  HOGWILD_ASSIGN_OR_RETURN(auto features, BackendBuffer<float>::Create(&backend, batch * dim));
  HOGWILD_RETURN_IF_ERROR(
      backend.CopyToDevice(device_params.data(), params.data(), device_params.bytes()));
  std::vector<float> logits(static_cast<size_t>(batch * classes));  // [batch, K]
  Predictions out;
  out.num_classes = classes;
  out.predicted.resize(static_cast<size_t>(n));
  out.probabilities.resize(static_cast<size_t>(n * classes));
  for (int64_t lo = 0; lo < n; lo += batch) {
    const int64_t b = std::min(batch, n - lo);
    HOGWILD_RETURN_IF_ERROR(backend.CopyToDevice(features.data(), data.features.data() + lo * dim,
                                                 b * dim * sizeof(float)));
    HOGWILD_ASSIGN_OR_RETURN(const float* device_logits,
                             tower->Forward(device_params.data(), b, features.data()));
    HOGWILD_RETURN_IF_ERROR(
        backend.CopyToHost(logits.data(), device_logits, b * classes * sizeof(float)));
    for (int64_t i = 0; i < b; ++i) {
      const float* row = logits.data() + i * classes;
      const int64_t best = std::max_element(row, row + classes) - row;
      out.predicted[lo + i] = static_cast<int32_t>(best);
      out.correct += best == data.labels[lo + i];
      double sum = 0.0;
      for (int64_t k = 0; k < classes; ++k) sum += std::exp(double{row[k]} - row[best]);
      float* p = out.probabilities.data() + (lo + i) * classes;
      for (int64_t k = 0; k < classes; ++k) {
        p[k] = static_cast<float>(std::exp(double{row[k]} - row[best]) / sum);
      }
    }
  }
  return out;
}

}  // namespace hogwild
