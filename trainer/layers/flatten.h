// Flatten: reinterprets each example's [C, H, W] activation as [C * H * W] features (PyTorch
// nn.Flatten). The memory layout is already row-major per example, so both passes are one copy
// (the model gives every layer its own output buffer); no parameters.
//   x: [B, ...input_shape], y: [B, NumElements(input_shape)]; dx = dy reshaped.
#ifndef HOGWILD_TRAINER_LAYERS_FLATTEN_H_
#define HOGWILD_TRAINER_LAYERS_FLATTEN_H_

#include "trainer/layers/layer.h"

namespace hogwild {

class Flatten final : public Layer {
 public:
  explicit Flatten(Shape input_shape) : input_shape_(std::move(input_shape)) {}

  std::string name() const override { return "flatten"; }
  Shape input_shape() const override { return input_shape_; }
  Shape output_shape() const override { return {NumElements(input_shape_)}; }
  absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                       float* y) override;
  absl::Status Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                        const float* y, const float* dy, float* dparams, float* dx) override;

 private:
  Shape input_shape_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_FLATTEN_H_
