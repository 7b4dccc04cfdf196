// Element-wise ReLU, y = max(x, 0), on activations of any shape; no parameters.
// Backward: dx = dy where y > 0 (kernels/functors.h ReluGradFn).
#ifndef HOGWILD_TRAINER_LAYERS_RELU_H_
#define HOGWILD_TRAINER_LAYERS_RELU_H_

#include "trainer/layers/layer.h"

namespace hogwild {

class Relu final : public Layer {
 public:
  explicit Relu(Shape shape) : shape_(std::move(shape)) {}

  std::string name() const override { return "relu"; }
  Shape input_shape() const override { return shape_; }
  Shape output_shape() const override { return shape_; }
  absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                       float* y) override;
  absl::Status Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                        const float* y, const float* dy, float* dparams, float* dx) override;

 private:
  Shape shape_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_RELU_H_
