#include "trainer/model/tower.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<Tower>> Tower::Create(const Model* model, Backend* backend,
                                                     int64_t max_batch) {
  if (max_batch < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("max_batch must be >= 1, got %d", max_batch));
  }
  std::unique_ptr<Tower> tower(new Tower(model, backend, max_batch));
  int64_t widest = model->input_features();
  for (const auto& layer : model->layers()) {
    const int64_t width = NumElements(layer->output_shape());
    widest = std::max(widest, width);
    HOGWILD_ASSIGN_OR_RETURN(auto activation,
                             BackendBuffer<float>::Create(backend, max_batch * width));
    tower->activations_.push_back(std::move(activation));
  }
  HOGWILD_ASSIGN_OR_RETURN(tower->grad_a_,
                           BackendBuffer<float>::Create(backend, max_batch * widest));
  HOGWILD_ASSIGN_OR_RETURN(tower->grad_b_,
                           BackendBuffer<float>::Create(backend, max_batch * widest));
  HOGWILD_ASSIGN_OR_RETURN(tower->loss_sum_, BackendBuffer<float>::Create(backend, 1));
  return tower;
}

absl::StatusOr<const float*> Tower::Forward(const float* params, int64_t batch,
                                            const float* features) {
  return RunForward(params, batch, features, /*training=*/false);
}

absl::StatusOr<const float*> Tower::RunForward(const float* params, int64_t batch,
                                               const float* features, bool training) {
  if (batch < 0 || batch > max_batch_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("batch of %d examples exceeds the tower's %d", batch, max_batch_));
  }
  const auto& layers = model_->layers();
  const float* x = features;
  for (size_t i = 0; i < layers.size(); ++i) {
    float* y = activations_[i].data();
    const float* p = params + model_->param_offset(i);
    HOGWILD_RETURN_IF_ERROR(training ? layers[i]->ForwardTraining(*backend_, batch, p, x, y)
                                     : layers[i]->Forward(*backend_, batch, p, x, y));
    x = y;
  }
  return x;
}

absl::StatusOr<double> Tower::ForwardBackward(const float* params, int64_t batch,
                                              const float* features, const int32_t* labels,
                                              float grad_scale, float* grad) {
  HOGWILD_ASSIGN_OR_RETURN(const float* logits,
                           RunForward(params, batch, features, /*training=*/true));
  const auto& layers = model_->layers();
  float* dy = grad_a_.data();
  float* spare = grad_b_.data();
  HOGWILD_RETURN_IF_ERROR(backend_->SoftmaxCrossEntropy(batch, model_->num_classes(), logits,
                                                        labels, grad_scale, dy, loss_sum_.data()));
  for (size_t i = layers.size(); i-- > 0;) {
    const float* x = i == 0 ? features : activations_[i - 1].data();
    // The first layer's input gradient is never needed: skip that GEMM.
    float* dx = i == 0 ? nullptr : spare;
    HOGWILD_RETURN_IF_ERROR(layers[i]->Backward(*backend_, batch, params + model_->param_offset(i),
                                                x, activations_[i].data(), dy,
                                                grad + model_->param_offset(i), dx));
    std::swap(dy, spare);
    if (const int64_t stats = layers[i]->num_stat_params(); stats > 0) {
      // The statistics' slots get the batch's statistics weighted by its share of the step's
      // examples (trainer/layers/batch_norm.h), not a gradient.
      float* slots = grad + model_->param_offset(i) + layers[i]->num_params() - stats;
      HOGWILD_RETURN_IF_ERROR(layers[i]->BatchStatistics(
          *backend_, batch, x, grad_scale * static_cast<float>(batch), slots));
    }
  }
  float loss_sum = 0.0f;
  HOGWILD_RETURN_IF_ERROR(backend_->CopyToHost(&loss_sum, loss_sum_.data(), sizeof(float)));
  return static_cast<double>(loss_sum);
}

}  // namespace hogwild
