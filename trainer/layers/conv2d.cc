#include "trainer/layers/conv2d.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<Conv2d>> Conv2d::Create(const Conv2dOptions& o) {
  const Conv2dShape shape{.batch = 0,
                          .in_channels = o.in_channels,
                          .in_height = o.in_height,
                          .in_width = o.in_width,
                          .out_channels = o.out_channels,
                          .kernel_height = o.kernel,
                          .kernel_width = o.kernel,
                          .stride_height = o.stride,
                          .stride_width = o.stride,
                          .pad_height = o.pad,
                          .pad_width = o.pad};
  HOGWILD_RETURN_IF_ERROR(ValidateConv2dShape(shape, "conv2d layer"));
  return std::unique_ptr<Conv2d>(new Conv2d(shape));
}

std::string Conv2d::name() const {
  return absl::StrFormat("conv%dx%d %d->%d s%d p%d", shape_.kernel_height, shape_.kernel_width,
                         shape_.in_channels, shape_.out_channels, shape_.stride_height,
                         shape_.pad_height);
}

Shape Conv2d::input_shape() const {
  return {shape_.in_channels, shape_.in_height, shape_.in_width};
}

Shape Conv2d::output_shape() const {
  return {shape_.out_channels, shape_.out_height(), shape_.out_width()};
}

int64_t Conv2d::num_params() const { return shape_.filter_size() + shape_.out_channels; }

void Conv2d::InitParams(std::mt19937_64& rng, absl::Span<float> params) const {
  const int64_t fan_in = shape_.in_channels * shape_.kernel_height * shape_.kernel_width;
  // kaiming_uniform_(a = sqrt(5)) gives gain sqrt(2 / (1 + 5)) and bound gain * sqrt(3 / fan_in)
  // = 1 / sqrt(fan_in); PyTorch bounds the bias by the same 1 / sqrt(fan_in).
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  for (float& p : params) p = uniform(rng);
}

Conv2dShape Conv2d::ShapeFor(int64_t batch) const {
  Conv2dShape s = shape_;
  s.batch = batch;
  return s;
}

absl::Status Conv2d::Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                             float* y) {
  const float* w = params;                         // [F, C, KH, KW]
  const float* b = params + shape_.filter_size();  // [F]
  return backend.Conv2dForward(ShapeFor(batch), x, w, b, y);
}

absl::Status Conv2d::Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                              const float* /*y*/, const float* dy, float* dparams, float* dx) {
  return backend.Conv2dBackward(ShapeFor(batch), x, /*w=*/params, dy, dx, dparams,
                                /*db=*/dparams + shape_.filter_size());
}

}  // namespace hogwild
