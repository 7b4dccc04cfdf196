#include "trainer/layers/dense.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace hogwild {

std::string Dense::name() const { return absl::StrFormat("dense %d->%d", in_, out_); }

void Dense::InitParams(std::mt19937_64& rng, absl::Span<float> params) const {
  const float bound = 1.0f / std::sqrt(static_cast<float>(in_));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  for (float& p : params) p = uniform(rng);
}

absl::Status Dense::Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                            float* y) {
  const float* w = params;               // [in, out]
  const float* b = params + in_ * out_;  // [out]
  HOGWILD_RETURN_IF_ERROR(
      backend.Gemm(Transpose::kNo, Transpose::kNo, batch, out_, in_, 1.0f, x, w, 0.0f, y));
  return backend.AddBias(batch, out_, b, y);
}

absl::Status Dense::Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                             const float* /*y*/, const float* dy, float* dparams, float* dx) {
  float* dw = dparams;               // [in, out]
  float* db = dparams + in_ * out_;  // [out]
  HOGWILD_RETURN_IF_ERROR(
      backend.Gemm(Transpose::kYes, Transpose::kNo, in_, out_, batch, 1.0f, x, dy, 0.0f, dw));
  HOGWILD_RETURN_IF_ERROR(backend.SumRows(batch, out_, dy, db));
  if (dx != nullptr) {
    HOGWILD_RETURN_IF_ERROR(backend.Gemm(Transpose::kNo, Transpose::kYes, batch, in_, out_, 1.0f,
                                         dy, params, 0.0f, dx));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
