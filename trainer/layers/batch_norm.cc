#include "trainer/layers/batch_norm.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<BatchNorm>> BatchNorm::Create(const Shape& shape, float eps) {
  if (shape.size() != 1 && shape.size() != 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "batch norm needs [channels] or [channels, height, width] activations, got %s",
        ShapeToString(shape)));
  }
  const BatchNormShape bn{.batch = 0,
                          .channels = shape[0],
                          .spatial = shape.size() == 3 ? shape[1] * shape[2] : 1,
                          .eps = eps};
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; })) {
    return absl::InvalidArgumentError(
        absl::StrFormat("batch norm: sizes must be positive, got %s", ShapeToString(shape)));
  }
  HOGWILD_RETURN_IF_ERROR(ValidateBatchNormShape(bn, "batch norm layer"));
  return std::unique_ptr<BatchNorm>(new BatchNorm(shape, bn));
}

std::string BatchNorm::name() const { return absl::StrFormat("batchnorm %d", channels()); }

void BatchNorm::InitParams(std::mt19937_64& /*rng*/, absl::Span<float> params) const {
  const size_t c = static_cast<size_t>(channels());
  std::fill(params.begin(), params.begin() + c, 1.0f);              // gamma
  std::fill(params.begin() + c, params.begin() + 3 * c, 0.0f);      // beta, moving mean
  std::fill(params.begin() + 3 * c, params.begin() + 4 * c, 1.0f);  // moving variance
}

BatchNormShape BatchNorm::ShapeFor(int64_t batch) const {
  BatchNormShape s = bn_;
  s.batch = batch;
  return s;
}

absl::Status BatchNorm::Forward(Backend& backend, int64_t batch, const float* params,
                                const float* x, float* y) {
  const int64_t c = channels();
  return backend.BatchNormForwardInference(ShapeFor(batch), x, params, params + c, params + 2 * c,
                                           params + 3 * c, y);
}

absl::Status BatchNorm::ForwardTraining(Backend& backend, int64_t batch, const float* params,
                                        const float* x, float* y) {
  return backend.BatchNormForwardTraining(ShapeFor(batch), x, params, params + channels(), y);
}

absl::Status BatchNorm::BatchStatistics(Backend& backend, int64_t batch, const float* x,
                                        float weight, float* stats) {
  return backend.BatchNormStatistics(ShapeFor(batch), x, weight, stats, stats + channels());
}

absl::Status BatchNorm::Backward(Backend& backend, int64_t batch, const float* params,
                                 const float* x, const float* /*y*/, const float* dy,
                                 float* dparams, float* dx) {
  return backend.BatchNormBackward(ShapeFor(batch), x, dy, params, dx, dparams,
                                   dparams + channels());
}

}  // namespace hogwild
