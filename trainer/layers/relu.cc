#include "trainer/layers/relu.h"

namespace hogwild {

absl::Status Relu::Forward(Backend& backend, int64_t batch, const float* /*params*/, const float* x,
                           float* y) {
  return backend.Relu(batch * NumElements(shape_), x, y);
}

absl::Status Relu::Backward(Backend& backend, int64_t batch, const float* /*params*/,
                            const float* /*x*/, const float* y, const float* dy, float* /*dparams*/,
                            float* dx) {
  if (dx == nullptr) return absl::OkStatus();
  return backend.ReluGrad(batch * NumElements(shape_), y, dy, dx);
}

}  // namespace hogwild
