#include "trainer/layers/max_pool2d.h"

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<MaxPool2d>> MaxPool2d::Create(const MaxPool2dOptions& o) {
  const Pool2dShape shape{.batch = 0,
                          .channels = o.channels,
                          .in_height = o.in_height,
                          .in_width = o.in_width,
                          .window_height = o.window,
                          .window_width = o.window,
                          .stride_height = o.stride,
                          .stride_width = o.stride,
                          .pad_height = o.pad,
                          .pad_width = o.pad};
  HOGWILD_RETURN_IF_ERROR(ValidatePool2dShape(shape, "maxpool2d layer"));
  return std::unique_ptr<MaxPool2d>(new MaxPool2d(shape));
}

std::string MaxPool2d::name() const {
  return absl::StrFormat("maxpool%dx%d s%d p%d", shape_.window_height, shape_.window_width,
                         shape_.stride_height, shape_.pad_height);
}

Shape MaxPool2d::input_shape() const {
  return {shape_.channels, shape_.in_height, shape_.in_width};
}

Shape MaxPool2d::output_shape() const {
  return {shape_.channels, shape_.out_height(), shape_.out_width()};
}

Pool2dShape MaxPool2d::ShapeFor(int64_t batch) const {
  Pool2dShape s = shape_;
  s.batch = batch;
  return s;
}

absl::Status MaxPool2d::Forward(Backend& backend, int64_t batch, const float* /*params*/,
                                const float* x, float* y) {
  return backend.MaxPool2dForward(ShapeFor(batch), x, y);
}

absl::Status MaxPool2d::Backward(Backend& backend, int64_t batch, const float* /*params*/,
                                 const float* x, const float* y, const float* dy,
                                 float* /*dparams*/, float* dx) {
  if (dx == nullptr) return absl::OkStatus();
  return backend.MaxPool2dBackward(ShapeFor(batch), x, y, dy, dx);
}

}  // namespace hogwild
