// A Tower runs a Model's forward and backward passes on one worker's Backend: it owns the
// activation and gradient buffers for batches of up to `max_batch` examples, so the
// steady-state step allocates nothing. (The name is TensorFlow's: one replica of the model.)
//
// Thread-safety: one Tower per worker thread (like its Backend). The model is shared read-only.
#ifndef HOGWILD_TRAINER_MODEL_TOWER_H_
#define HOGWILD_TRAINER_MODEL_TOWER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/buffer.h"
#include "trainer/model/model.h"

namespace hogwild {

class Tower {
 public:
  // `model` and `backend` must outlive the tower. max_batch >= 1.
  static absl::StatusOr<std::unique_ptr<Tower>> Create(const Model* model, Backend* backend,
                                                       int64_t max_batch);

  // Forward (training phase: batch norm with the batch's statistics) and backward pass of
  // softmax cross-entropy on one batch.
  //   params:     [P] float32, backend memory
  //   features:   [batch, D] float32, backend memory; batch in [0, max_batch]
  //   labels:     [batch] int32, backend memory
  //   grad_scale: multiplies the gradient (1 / examples of the step's batch: see
  //               sync/update_policy.h)
  //   grad:       [P] float32 out, backend memory: grad_scale * d(sum of losses)/d(params);
  //               the slots of moving statistics (Model::StatRanges) hold grad_scale * batch
  //               times the batch's statistics instead (trainer/layers/batch_norm.h)
  // Returns the sum over the batch of the per-example loss (not scaled); a batch of 0 gives
  // loss 0 and a zero gradient. The result is read back to the host (synchronizes).
  absl::StatusOr<double> ForwardBackward(const float* params, int64_t batch, const float* features,
                                         const int32_t* labels, float grad_scale, float* grad);

  // Forward pass only, in the inference phase (batch norm with its moving statistics; the
  // training phase is ForwardBackward's). Returns the logits, [batch, K] in backend memory, valid
  // until the next call on this tower.
  absl::StatusOr<const float*> Forward(const float* params, int64_t batch, const float* features);

  int64_t max_batch() const { return max_batch_; }

 private:
  absl::StatusOr<const float*> RunForward(const float* params, int64_t batch, const float* features,
                                          bool training);

  Tower(const Model* model, Backend* backend, int64_t max_batch)
      : model_(model), backend_(backend), max_batch_(max_batch) {}

  const Model* model_;
  Backend* backend_;
  int64_t max_batch_;
  // activations_[i]: output of layer i, [max_batch, out_i].
  std::vector<BackendBuffer<float>> activations_;
  // Two ping-pong buffers for the activation gradients, [max_batch, max width].
  BackendBuffer<float> grad_a_, grad_b_;
  BackendBuffer<float> loss_sum_;  // [1]
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_MODEL_TOWER_H_
