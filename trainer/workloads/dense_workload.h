// The dense networks of trainer/model/ (logreg, mlp, cnn, cnn_bn) on an image Dataset as a
// Workload (workload.h): softmax cross-entropy, the model's seeded initialization, its bias and
// batch-norm statistics ranges. The gradient is the Tower's on a CPU backend, with the batch's
// rows gathered into a [B, D] buffer first (the arithmetic of the real CPU workers).
#ifndef HOGWILD_TRAINER_WORKLOADS_DENSE_WORKLOAD_H_
#define HOGWILD_TRAINER_WORKLOADS_DENSE_WORKLOAD_H_

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/data/dataset.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/model/model.h"
#include "trainer/workloads/workload.h"

namespace hogwild {

class DenseWorkload final : public Workload {
 public:
  // The model `spec` names (its input_shape and num_classes are taken from `train`) on `train`
  // and, when test is non-null and non-empty, `test`; both must outlive the workload. Errors:
  // Model::Create's (kInvalidArgument naming the model option); kInvalidArgument for an empty
  // training set.
  static absl::StatusOr<std::unique_ptr<DenseWorkload>> Create(ModelSpec spec, const Dataset* train,
                                                               const Dataset* test);

  WorkloadKind kind() const override { return WorkloadKind::kDense; }
  std::string name() const override { return model_->spec().name; }
  int64_t num_params() const override { return model_->num_params(); }
  int64_t num_train_examples() const override { return train_->size(); }
  bool has_test_set() const override { return test_ != nullptr && test_->size() > 0; }
  void InitParams(uint64_t seed, absl::Span<float> params) const override;
  absl::StatusOr<std::unique_ptr<WorkerGradient>> CreateWorker(int64_t max_batch) const override;
  absl::StatusOr<EvalResult> Evaluate(absl::Span<const float> params, Split split) const override;
  ParamRanges BiasRanges() const override { return model_->BiasRanges(); }
  ParamRanges StatRanges() const override { return model_->StatRanges(); }
  CheckpointSignature Signature() const override;

  const Model& model() const { return *model_; }

 private:
  DenseWorkload(std::unique_ptr<Model> model, const Dataset* train, const Dataset* test)
      : model_(std::move(model)), train_(train), test_(test) {}

  std::unique_ptr<Model> model_;
  const Dataset* train_;
  const Dataset* test_;
  // Evaluate's evaluators, [train, test], created on first use; eval_mu_ makes Evaluate
  // thread-safe (one evaluation at a time per workload).
  struct SplitEvaluator {
    std::unique_ptr<CpuBackend> backend;
    std::unique_ptr<Evaluator> evaluator;
  };
  mutable std::mutex eval_mu_;
  mutable SplitEvaluator evaluators_[2];
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WORKLOADS_DENSE_WORKLOAD_H_
