// The sparse linear models of sparse/ (logistic regression, the linear SVM) on a SparseDataset
// as a Workload (workload.h), in the Hogwild! paper's setting (Niu et al., NIPS 2011): weights
// [D] start at zero; an example's gradient is slope(margin) * x on its support (sparse/
// linear_loss.h), accumulated in example order by sparse::SparseGradient, the same arithmetic
// as the sparse trainer's minibatch step.
//
// The regularizer is the workload's, part of each example's loss: example i adds
// (weight_decay / 2) * sum over j in its support of w_j^2 (the Hogwild! paper's split of the
// regularizer over the examples' supports, without its 1 / d_j weights), so a coordinate no
// example of the batch touches is never decayed and the gradient stays additive over examples
// and towers (sync with W towers equals one worker with the global batch). A batch's gradient on
// j is its data term plus weight_decay * w_j * (examples touching j) / denominator. With batch 1
// and SgdOptions::weight_decay = 0 the update is sparse/sparse_sgd.h's bitwise; the sparse
// trainer's minibatch step instead decays each touched coordinate once per update.
#ifndef HOGWILD_TRAINER_WORKLOADS_SPARSE_LINEAR_H_
#define HOGWILD_TRAINER_WORKLOADS_SPARSE_LINEAR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "sparse/linear_loss.h"
#include "sparse/sparse_dataset.h"
#include "trainer/workloads/workload.h"

namespace hogwild {

class SparseLinearWorkload final : public Workload {
 public:
  // `train` and `test` (may be null) must outlive the workload. Errors: kInvalidArgument from
  // sparse::ValidateSparseOptions (the data sets, a test set wider than the training set's D, a
  // weight_decay that is negative or not finite).
  static absl::StatusOr<std::unique_ptr<SparseLinearWorkload>> Create(
      sparse::LinearModel model, const sparse::SparseDataset* train,
      const sparse::SparseDataset* test, float weight_decay);

  WorkloadKind kind() const override { return WorkloadKind::kSparseLinear; }
  std::string name() const override;
  int64_t num_params() const override { return train_->num_features; }
  int64_t num_train_examples() const override { return train_->num_examples(); }
  bool has_test_set() const override { return test_ != nullptr; }
  void InitParams(uint64_t seed, absl::Span<float> params) const override;
  absl::StatusOr<std::unique_ptr<WorkerGradient>> CreateWorker(int64_t max_batch) const override;
  absl::StatusOr<EvalResult> Evaluate(absl::Span<const float> params, Split split) const override;
  CheckpointSignature Signature() const override;

 private:
  SparseLinearWorkload(sparse::LinearModel model, const sparse::SparseDataset* train,
                       const sparse::SparseDataset* test, float weight_decay)
      : model_(model), train_(train), test_(test), weight_decay_(weight_decay) {}

  const sparse::LinearModel model_;
  const sparse::SparseDataset* train_;
  const sparse::SparseDataset* test_;
  const float weight_decay_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WORKLOADS_SPARSE_LINEAR_H_
