#include "trainer/workloads/dense_workload.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/checkpoint/checkpoint_state.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

class DenseWorker final : public WorkerGradient {
 public:
  DenseWorker(const Model* model, const Dataset* train, int64_t max_batch)
      : model_(model),
        train_(train),
        max_batch_(max_batch),
        features_(static_cast<size_t>(max_batch * train->feature_dim())),
        labels_(static_cast<size_t>(max_batch)) {}

  absl::Status Init() {
    HOGWILD_ASSIGN_OR_RETURN(tower_, Tower::Create(model_, &backend_, max_batch_));
    return absl::OkStatus();
  }

  absl::StatusOr<double> Gradient(absl::Span<const float> params, WorkerBatch batch,
                                  absl::Span<float> grad) override {
    HOGWILD_RETURN_IF_ERROR(
        CheckGradientArgs("DenseWorkload", model_->num_params(), max_batch_, params, batch, grad));
    const auto b = static_cast<int64_t>(batch.rows.size());
    const int64_t d = train_->feature_dim();
    for (int64_t i = 0; i < b; ++i) {
      std::copy_n(train_->features.data() + batch.rows[i] * d, d, features_.data() + i * d);
      labels_[i] = train_->labels[batch.rows[i]];
    }
    const float grad_scale = batch.denominator > 0 ? 1.0f / batch.denominator : 0.0f;
    return tower_->ForwardBackward(params.data(), b, features_.data(), labels_.data(), grad_scale,
                                   grad.data());
  }

 private:
  const Model* model_;
  const Dataset* train_;
  const int64_t max_batch_;
  CpuBackend backend_;
  std::unique_ptr<Tower> tower_;
  std::vector<float> features_;  // [max_batch, D]
  std::vector<int32_t> labels_;  // [max_batch]
};

}  // namespace

absl::StatusOr<std::unique_ptr<DenseWorkload>> DenseWorkload::Create(ModelSpec spec,
                                                                     const Dataset* train,
                                                                     const Dataset* test) {
  if (train == nullptr || train->size() == 0) {
    return absl::InvalidArgumentError("DenseWorkload: the training set is empty");
  }
  spec.input_shape = train->example_shape;
  spec.num_classes = train->num_classes;
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Create(spec));
  return std::unique_ptr<DenseWorkload>(new DenseWorkload(std::move(model), train, test));
}

void DenseWorkload::InitParams(uint64_t seed, absl::Span<float> params) const {
  model_->InitParams(seed, params);
}

absl::StatusOr<std::unique_ptr<WorkerGradient>> DenseWorkload::CreateWorker(
    int64_t max_batch) const {
  auto worker =
      std::make_unique<DenseWorker>(model_.get(), train_, std::max<int64_t>(1, max_batch));
  HOGWILD_RETURN_IF_ERROR(worker->Init());
  return std::unique_ptr<WorkerGradient>(std::move(worker));
}

absl::StatusOr<EvalResult> DenseWorkload::Evaluate(absl::Span<const float> params,
                                                   Split split) const {
  const Dataset* data = split == Split::kTrain ? train_ : test_;
  if (data == nullptr || data->size() == 0) {
    return absl::FailedPreconditionError("DenseWorkload: no test set to evaluate on");
  }
  // One evaluator per split, made on first use: its buffers and the backend's convolution engine
  // are reused by every later evaluation (the simulator's periodic ones).
  std::lock_guard<std::mutex> lock(eval_mu_);
  SplitEvaluator& e = evaluators_[split == Split::kTrain ? 0 : 1];
  if (e.evaluator == nullptr) {
    e.backend = std::make_unique<CpuBackend>();
    HOGWILD_ASSIGN_OR_RETURN(e.evaluator, Evaluator::Create(model_.get(), data, e.backend.get()));
  }
  return e.evaluator->Evaluate(params);
}

CheckpointSignature DenseWorkload::Signature() const { return ModelSignature(*model_, *train_); }

}  // namespace hogwild
