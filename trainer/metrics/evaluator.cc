#include "trainer/metrics/evaluator.h"

#include <algorithm>

#include "core/status_macros.h"
#include "kernels/functors.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(const Model* model,
                                                             const Dataset* dataset,
                                                             Backend* backend, int64_t batch) {
  std::unique_ptr<Evaluator> e(new Evaluator());
  e->model_ = model;
  e->dataset_ = dataset;
  e->backend_ = backend;
  e->batch_ = std::max<int64_t>(1, batch);
  HOGWILD_ASSIGN_OR_RETURN(e->tower_, Tower::Create(model, backend, e->batch_));
  HOGWILD_ASSIGN_OR_RETURN(e->params_, BackendBuffer<float>::Create(backend, model->num_params()));
  HOGWILD_ASSIGN_OR_RETURN(e->features_,
                           BackendBuffer<float>::Create(backend, e->batch_ * model->input_features()));
  e->logits_.resize(e->batch_ * model->num_classes());
  e->dlogits_.resize(model->num_classes());
  return e;
}

absl::StatusOr<EvalResult> Evaluator::Evaluate(absl::Span<const float> params,
                                               const std::atomic<bool>* cancelled) {
  HOGWILD_RETURN_IF_ERROR(backend_->CopyToDevice(params_.data(), params.data(), params_.bytes()));
  const int64_t n = dataset_->size();
  const int64_t dim = dataset_->feature_dim();
  const int64_t classes = model_->num_classes();
  double loss_sum = 0.0;
  int64_t correct = 0;
  for (int64_t lo = 0; lo < n; lo += batch_) {
    if (cancelled != nullptr && cancelled->load(std::memory_order_acquire)) {
      return absl::CancelledError("evaluation cancelled");
    }
    const int64_t b = std::min(batch_, n - lo);
    HOGWILD_RETURN_IF_ERROR(backend_->CopyToDevice(
        features_.data(), dataset_->features.data() + lo * dim, b * dim * sizeof(float)));
    HOGWILD_ASSIGN_OR_RETURN(const float* logits,
                             tower_->Forward(params_.data(), b, features_.data()));
    HOGWILD_RETURN_IF_ERROR(
        backend_->CopyToHost(logits_.data(), logits, b * classes * sizeof(float)));
    for (int64_t i = 0; i < b; ++i) {
      const float* row = logits_.data() + i * classes;
      const int64_t predicted = std::max_element(row, row + classes) - row;
      const int32_t label = dataset_->labels[lo + i];
      correct += predicted == label;
      // The same per-row loss the training step uses (kernels/functors.h), on the host.
      loss_sum += SoftmaxCrossEntropyRow(row, static_cast<int>(classes), label, 1.0f,
                                         dlogits_.data());
    }
  }
  EvalResult result;
  result.examples = n;
  result.loss = n > 0 ? loss_sum / static_cast<double>(n) : 0.0;
  result.accuracy = n > 0 ? static_cast<double>(correct) / static_cast<double>(n) : 0.0;
  return result;
}

}  // namespace hogwild
