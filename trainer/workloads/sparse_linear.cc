#include "trainer/workloads/sparse_linear.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "sparse/sparse_sgd.h"
#include "sparse/sparse_train.h"

namespace hogwild {
namespace {

class SparseLinearWorker final : public WorkerGradient {
 public:
  SparseLinearWorker(sparse::LinearModel model, const sparse::SparseDataset* train,
                     float weight_decay, int64_t max_batch)
      : model_(model),
        train_(train),
        weight_decay_(weight_decay),
        max_batch_(max_batch),
        sum_(train->num_features),
        count_(static_cast<size_t>(train->num_features), 0) {}

  absl::StatusOr<double> Gradient(absl::Span<const float> params, WorkerBatch batch,
                                  absl::Span<float> grad) override {
    HOGWILD_RETURN_IF_ERROR(CheckGradientArgs("SparseLinearWorkload", train_->num_features,
                                              max_batch_, params, batch, grad));
    // The scale of sparse_train.h's minibatch step: 1 / the step's examples, per example.
    const float scale = batch.denominator > 0 ? 1.0f / static_cast<float>(batch.denominator) : 0.0f;
    double loss_sum = 0.0;
    for (int64_t i : batch.rows) {
      loss_sum += sparse::AddExample(model_, *train_, i, scale, params.data(), sum_);
      for (int32_t j : train_->row_indices(i)) ++count_[j];
    }
    std::fill(grad.begin(), grad.end(), 0.0f);
    for (int32_t j : sum_.touched()) {
      // Each example's regularizer term, weight_decay * w_j * scale, for the examples touching j.
      grad[j] = sum_.value(j) + weight_decay_ * params[j] * (static_cast<float>(count_[j]) * scale);
      count_[j] = 0;
    }
    sum_.Clear();
    return loss_sum;
  }

 private:
  const sparse::LinearModel model_;
  const sparse::SparseDataset* train_;
  const float weight_decay_;
  const int64_t max_batch_;
  SparseGradient sum_;          // [D] accumulator and the touched coordinates
  std::vector<int32_t> count_;  // [D] the batch's examples touching each coordinate
};

}  // namespace

absl::StatusOr<std::unique_ptr<SparseLinearWorkload>> SparseLinearWorkload::Create(
    sparse::LinearModel model, const sparse::SparseDataset* train,
    const sparse::SparseDataset* test, float weight_decay) {
  if (train == nullptr) return absl::InvalidArgumentError("SparseLinearWorkload: no training set");
  // The data and the weight decay by the sparse trainer's own checks (its other options are at
  // their defaults).
  HOGWILD_RETURN_IF_ERROR(
      sparse::ValidateSparseOptions({.model = model, .weight_decay = weight_decay}, *train, test));
  return std::unique_ptr<SparseLinearWorkload>(
      new SparseLinearWorkload(model, train, test, weight_decay));
}

std::string SparseLinearWorkload::name() const {
  return model_ == sparse::LinearModel::kHinge ? "sparse_svm" : "sparse_logreg";
}

void SparseLinearWorkload::InitParams(uint64_t /*seed*/, absl::Span<float> params) const {
  std::fill(params.begin(), params.end(), 0.0f);
}

absl::StatusOr<std::unique_ptr<WorkerGradient>> SparseLinearWorkload::CreateWorker(
    int64_t max_batch) const {
  return std::unique_ptr<WorkerGradient>(std::make_unique<SparseLinearWorker>(
      model_, train_, weight_decay_, std::max<int64_t>(1, max_batch)));
}

absl::StatusOr<EvalResult> SparseLinearWorkload::Evaluate(absl::Span<const float> params,
                                                          Split split) const {
  const sparse::SparseDataset* data = split == Split::kTrain ? train_ : test_;
  if (data == nullptr) {
    return absl::FailedPreconditionError("SparseLinearWorkload: no test set to evaluate on");
  }
  const sparse::LinearEvaluation e = sparse::EvaluateLinear(model_, params, *data);
  return EvalResult{.loss = e.mean_loss, .accuracy = e.accuracy, .examples = data->num_examples()};
}

CheckpointSignature SparseLinearWorkload::Signature() const {
  CheckpointSignature s;
  s.model_name = name();
  s.input_shape = {train_->num_features};
  s.num_classes = 2;
  s.num_params = train_->num_features;
  s.train_examples = train_->num_examples();
  s.dataset = sparse::SparseDatasetId(*train_);
  return s;
}

}  // namespace hogwild
