// 2-D max pooling layer, NCHW (PyTorch nn.MaxPool2d with ceil_mode=False, no dilation); no
// parameters.
//   x: [B, C, H, W], y: [B, C, OH, OW], OH = (H + 2 * pad - window) / stride + 1, likewise OW
// Backward: each dy element goes to its window's maximum in x (Backend::MaxPool2dBackward).
#ifndef HOGWILD_TRAINER_LAYERS_MAX_POOL2D_H_
#define HOGWILD_TRAINER_LAYERS_MAX_POOL2D_H_

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/conv_shapes.h"
#include "trainer/layers/layer.h"

namespace hogwild {

struct MaxPool2dOptions {
  int64_t channels = 1;    // C
  int64_t in_height = 28;  // H
  int64_t in_width = 28;   // W
  int64_t window = 2;      // KH = KW
  int64_t stride = 2;      // both directions
  int64_t pad = 0;         // in [0, window / 2]
};

class MaxPool2d final : public Layer {
 public:
  // Errors: kInvalidArgument from ValidatePool2dShape.
  static absl::StatusOr<std::unique_ptr<MaxPool2d>> Create(const MaxPool2dOptions& options);

  std::string name() const override;
  Shape input_shape() const override;
  Shape output_shape() const override;
  absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                       float* y) override;
  absl::Status Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                        const float* y, const float* dy, float* dparams, float* dx) override;

 private:
  explicit MaxPool2d(const Pool2dShape& shape) : shape_(shape) {}
  Pool2dShape ShapeFor(int64_t batch) const;

  Pool2dShape shape_;  // batch 0; set per call
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_MAX_POOL2D_H_
