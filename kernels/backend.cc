#include "kernels/backend.h"

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

absl::Status NotImplemented(const Backend& backend, const char* op) {
  return absl::UnimplementedError(absl::StrFormat(
      "backend %s does not implement %s; use the cpu or cuda backend", backend.name(), op));
}

}  // namespace

absl::Status Backend::Conv2dForward(const Conv2dShape&, const float*, const float*, const float*,
                                    float*) {
  return NotImplemented(*this, "Conv2dForward");
}

absl::Status Backend::Conv2dBackwardData(const Conv2dShape&, const float*, const float*, float*) {
  return NotImplemented(*this, "Conv2dBackwardData");
}

absl::Status Backend::Conv2dBackwardFilter(const Conv2dShape&, const float*, const float*, float*,
                                           float*) {
  return NotImplemented(*this, "Conv2dBackwardFilter");
}

absl::Status Backend::Conv2dBackward(const Conv2dShape& shape, const float* x, const float* w,
                                     const float* dy, float* dx, float* dw, float* db) {
  if (absl::Status s = Conv2dBackwardFilter(shape, x, dy, dw, db); !s.ok()) return s;
  return dx != nullptr ? Conv2dBackwardData(shape, w, dy, dx) : absl::OkStatus();
}

absl::Status Backend::MaxPool2dForward(const Pool2dShape&, const float*, float*) {
  return NotImplemented(*this, "MaxPool2dForward");
}

absl::Status Backend::MaxPool2dBackward(const Pool2dShape&, const float*, const float*,
                                        const float*, float*) {
  return NotImplemented(*this, "MaxPool2dBackward");
}

absl::Status Backend::BatchNormForwardTraining(const BatchNormShape&, const float*, const float*,
                                               const float*, float*) {
  return NotImplemented(*this, "BatchNormForwardTraining");
}

absl::Status Backend::BatchNormForwardInference(const BatchNormShape&, const float*, const float*,
                                                const float*, const float*, const float*, float*) {
  return NotImplemented(*this, "BatchNormForwardInference");
}

absl::Status Backend::BatchNormBackward(const BatchNormShape&, const float*, const float*,
                                        const float*, float*, float*, float*) {
  return NotImplemented(*this, "BatchNormBackward");
}

absl::Status Backend::BatchNormStatistics(const BatchNormShape&, const float*, float, float*,
                                          float*) {
  return NotImplemented(*this, "BatchNormStatistics");
}

}  // namespace hogwild
