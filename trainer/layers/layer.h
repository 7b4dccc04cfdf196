// A layer of a feed-forward model: parameters are a slice of the flat parameter array (so the
// update policies see only [P] floats), activations live in the worker's Backend memory.
//
// Shapes: an activation is [B, ...example_shape] row-major, example_shape being {features} for
// dense layers or {channels, height, width} (NCHW) for convolutional ones.
#ifndef HOGWILD_TRAINER_LAYERS_LAYER_H_
#define HOGWILD_TRAINER_LAYERS_LAYER_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/shape.h"
#include "kernels/backend.h"

namespace hogwild {

class Layer {
 public:
  virtual ~Layer() = default;

  // e.g. "dense 784->256".
  virtual std::string name() const = 0;
  virtual Shape input_shape() const = 0;
  virtual Shape output_shape() const = 0;
  // Number of float32 parameters this layer owns in the flat array (0 for ReLU, pooling).
  virtual int64_t num_params() const { return 0; }
  // How many of them, at the end of the layer's trainable part (just before its statistics,
  // below), are biases (or normalization parameters), which TrainerOptions::weight_decay_biases =
  // false exempts from weight decay.
  virtual int64_t num_bias_params() const { return 0; }
  // How many of them, at the very end of the layer's slice, are not trained but moving
  // statistics (batch norm's moving mean and variance): gradients, optimizers, clipping and weight
  // decay never touch them; the update policies move them towards the batch statistics that
  // BatchStatistics writes into their gradient slots (the contract: trainer/layers/batch_norm.h).
  virtual int64_t num_stat_params() const { return 0; }
  // Writes the initial parameters into `params` ([num_params()] host memory), drawing from rng.
  virtual void InitParams(std::mt19937_64& /*rng*/, absl::Span<float> /*params*/) const {}

  // y = layer(x).   params: [num_params()], x: [batch, input], y: [batch, output]; all in the
  // backend's memory. batch may be 0. Scratch memory a layer needs (im2col columns, a cuDNN
  // workspace) belongs to the backend, which is one worker's.
  virtual absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                               float* y) = 0;

  // The training-phase forward pass, which Tower::ForwardBackward runs (Forward is the inference
  // phase: evaluation, prediction). The same arguments as Forward; the default is Forward, as
  // for every layer whose output does not depend on the phase (all but batch norm).
  virtual absl::Status ForwardTraining(Backend& backend, int64_t batch, const float* params,
                                       const float* x, float* y) {
    return Forward(backend, batch, params, x, y);
  }

  // Layers with statistics (num_stat_params() > 0): writes `weight` times the statistics of x
  // ([batch, input], backend memory) that the moving averages follow into stats
  // ([num_stat_params()], backend memory, the statistics' slots of the gradient). The tower
  // passes weight = the batch's share of the step's examples (1 in async mode, the tower's
  // share of the global batch in sync), so the sync mode's sum of the tower gradients holds the
  // example-weighted average of the towers' statistics. The default (no statistics) does nothing.
  virtual absl::Status BatchStatistics(Backend& /*backend*/, int64_t /*batch*/, const float* /*x*/,
                                       float /*weight*/, float* /*stats*/) {
    return absl::OkStatus();
  }

  // Back-propagates dy ([batch, output]) given the x and y of the matching Forward: overwrites
  // dparams ([num_params()], the gradient of the loss with respect to this layer's parameters)
  // and, when dx is not null, dx ([batch, input]). Layers with statistics leave the statistics'
  // slots (the last num_stat_params() of dparams) to BatchStatistics.
  virtual absl::Status Backward(Backend& backend, int64_t batch, const float* params,
                                const float* x, const float* y, const float* dy, float* dparams,
                                float* dx) = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_LAYER_H_
