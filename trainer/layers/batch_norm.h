// Batch normalization (Ioffe & Szegedy, ICML 2015) over channels: PyTorch's nn.BatchNorm2d for
// NCHW convolution outputs [B, C, H, W], nn.BatchNorm1d for dense activations [B, C].
//   params: gamma [C], beta [C], moving_mean [C], moving_var [C], float32 (PyTorch's state_dict
//           order: weight, bias, running_mean, running_var)
//   x, y:   [B, C, H, W] or [B, C]
// Training (ForwardTraining, run by Tower::ForwardBackward): y = gamma * (x - mean) /
// sqrt(var + eps) + beta with the mean and biased variance of *this batch*, per channel over
// B * H * W values. Under data parallelism every tower normalizes with its own batch (TF's
// per-tower batch norm; PyTorch's DataParallel without SyncBatchNorm): sync mode with W towers
// is therefore not the same computation as one worker with the whole global batch.
// Inference (Forward: evaluation, prediction): the same with moving_mean and moving_var.
// Backward: dgamma, dbeta and dx through the batch statistics (kernels/backend.h).
// Init: gamma 1, beta 0, moving_mean 0, moving_var 1 (PyTorch's).
//
// The moving statistics are entries of the flat parameter array that are not trained. We keep
// them there, rather than in a side buffer of each policy, so that everything that carries the
// parameters carries them with no change of format: the ParameterStore and its lock-free element
// access (async), the replicas of sync and local_sgd, checkpoints, the weights' EMA and the
// Python result. The contract that makes this work:
//   - Layer::num_stat_params() = 2C names them (the last 2C of the slice; Model::StatRanges
//     lists them, Train() copies the ranges to SgdOptions::moving_stats).
//   - In the gradient, their slots do not hold a gradient: Tower::ForwardBackward has
//     BatchStatistics write weight * (batch mean, unbiased batch variance) there, weight = the
//     tower's share of the step's examples (grad_scale * batch). Summed over the towers of a
//     sync step this is the example-weighted average of the towers' statistics; in async mode
//     it is the worker's own batch statistics.
//   - The update policies apply to those slots, instead of the optimizer, the moving average
//     p <- p + momentum * (s - p) (sync/moving_stats.h; momentum = SgdOptions::
//     moving_stats_momentum, PyTorch's convention, default 0.1 = TF's decay 0.9): sync and
//     backup once per step with the towers' average (the seed's per-tower update ops, averaged),
//     async and ssp by each worker with its own batch's statistics, lock-free through the
//     store's atomic element access like the parameters (concurrent updates of one statistic
//     may be lost, none is torn), local_sgd on each replica (averaged with the replicas). No
//     weight decay, no optimizer state, no learning rate; gradient clipping neither counts them
//     in the norm nor scales them (sync/optimizer_slots.h TrainedSumOfSquares, ScaleTrained).
// Thread-safety: the layer holds no per-call state (the backward pass recomputes the batch's
// statistics from x), so one instance serves every worker's tower.
#ifndef HOGWILD_TRAINER_LAYERS_BATCH_NORM_H_
#define HOGWILD_TRAINER_LAYERS_BATCH_NORM_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "kernels/batch_norm_shape.h"
#include "trainer/layers/layer.h"

namespace hogwild {

class BatchNorm final : public Layer {
 public:
  // shape: {C} (dense) or {C, H, W} (conv). eps > 0 (PyTorch's 1e-5 by default).
  // Errors: kInvalidArgument for another rank, a non-positive size or eps.
  static absl::StatusOr<std::unique_ptr<BatchNorm>> Create(const Shape& shape, float eps = 1e-5f);

  std::string name() const override;
  Shape input_shape() const override { return shape_; }
  Shape output_shape() const override { return shape_; }
  int64_t num_params() const override { return 4 * channels(); }
  int64_t num_bias_params() const override { return 2 * channels(); }  // gamma, beta
  int64_t num_stat_params() const override { return 2 * channels(); }  // moving mean, var
  void InitParams(std::mt19937_64& rng, absl::Span<float> params) const override;
  absl::Status Forward(Backend& backend, int64_t batch, const float* params, const float* x,
                       float* y) override;
  absl::Status ForwardTraining(Backend& backend, int64_t batch, const float* params, const float* x,
                               float* y) override;
  absl::Status BatchStatistics(Backend& backend, int64_t batch, const float* x, float weight,
                               float* stats) override;
  absl::Status Backward(Backend& backend, int64_t batch, const float* params, const float* x,
                        const float* y, const float* dy, float* dparams, float* dx) override;

 private:
  BatchNorm(Shape shape, BatchNormShape bn) : shape_(std::move(shape)), bn_(bn) {}
  int64_t channels() const { return bn_.channels; }
  BatchNormShape ShapeFor(int64_t batch) const;

  Shape shape_;
  BatchNormShape bn_;  // batch 0; set per call
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_LAYERS_BATCH_NORM_H_
