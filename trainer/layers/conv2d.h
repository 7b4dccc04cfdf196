// 2-D convolution layer, NCHW (PyTorch nn.Conv2d without dilation or groups; cross-correlation).
//   params: W [F, C, KH, KW] then b [F], float32 (PyTorch's weight and bias layout)
//   x: [B, C, H, W], y: [B, F, OH, OW], OH = (H + 2 * pad - KH) / stride + 1, likewise OW
// Backward: dW and db summed over the batch, dx = the transposed convolution of dy (skipped when
// dx is null). All three run on the Backend's conv ops (kernels/backend.h): im2col + GEMM on the
// CPU, cuDNN on a GPU; the layer does not know which.
// Init: W and b uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)], fan_in = C * KH * KW: PyTorch's
// default (kaiming_uniform_ with a = sqrt(5) for W, the same bound for b).
#ifndef HOGWILD_TRAINER_LAYERS_CONV2D_H_
#define HOGWILD_TRAINER_LAYERS_CONV2D_H_

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/conv_shapes.h"
#include "trainer/layers/layer.h"

namespace hogwild {

struct Conv2dOptions {
  int64_t in_channels = 1;   // C
  int64_t in_height = 28;    // H
  int64_t in_width = 28;     // W
  int64_t out_channels = 1;  // F
  int64_t kernel = 3;        // KH = KW
  int64_t stride = 1;        // both directions
  int64_t pad = 0;           // zeros on every side
};

class Conv2d final : public Layer {
 public:
  // Errors: kInvalidArgument from ValidateConv2dShape (e.g. a kernel larger than the padded input).
  static absl::StatusOr<std::unique_ptr<Conv2d>> Create(const Conv2dOptions& options);

  std::string name() const override;
  Shape input_shape() const override;
  Shape output_shape() const override;
  int64_t num_params() const override;
  int64_t num_bias_params() const override { return shape_.out_channels; }
  void InitParams(std::mt19937_64& rng, absl::Span<float> params) const override;
  absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                       float* y) override;
  absl::Status Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                        const float* y, const float* dy, float* dparams, float* dx) override;

 private:
  explicit Conv2d(const Conv2dShape& shape) : shape_(shape) {}
  Conv2dShape ShapeFor(int64_t batch) const;

  Conv2dShape shape_;  // batch 0; set per call
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_CONV2D_H_
