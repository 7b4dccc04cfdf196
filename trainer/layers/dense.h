// Fully connected layer y = x W + b (PyTorch nn.Linear, with W stored transposed so that the
// forward pass is one row-major GEMM without transposes).
//   params: W [in, out] then b [out], float32
//   x: [B, in], y: [B, out]
// Backward: dW = x^T dy ([in, out]), db = column sums of dy ([out]), dx = dy W^T ([B, in]).
// Init: W and b uniform in [-1/sqrt(in), 1/sqrt(in)], PyTorch's nn.Linear default.
#ifndef HOGWILD_TRAINER_LAYERS_DENSE_H_
#define HOGWILD_TRAINER_LAYERS_DENSE_H_

#include "trainer/layers/layer.h"

namespace hogwild {

class Dense final : public Layer {
 public:
  Dense(int64_t in, int64_t out) : in_(in), out_(out) {}

  std::string name() const override;
  Shape input_shape() const override { return {in_}; }
  Shape output_shape() const override { return {out_}; }
  int64_t num_params() const override { return in_ * out_ + out_; }
  int64_t num_bias_params() const override { return out_; }
  void InitParams(std::mt19937_64& rng, absl::Span<float> params) const override;
  absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                       float* y) override;
  absl::Status Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                        const float* y, const float* dy, float* dparams, float* dx) override;

 private:
  int64_t in_;
  int64_t out_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_DENSE_H_
