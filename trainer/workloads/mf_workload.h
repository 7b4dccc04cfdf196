// Low-rank matrix factorization (sparse/matrix_factorization.h: prediction mu + p_u . q_i, loss
// 1/2 (prediction - r)^2 per rating) on Ratings as a Workload (workload.h): parameters
// [(U + I) * k], the user factors p then the item factors q, InitMfFactors's seeded start; a
// rating is a training example. The gradient of a batch of ratings is e * q_i on p_u and
// e * p_u on q_i (e = prediction - r, computed as the trainer's MfStep), scaled by
// 1 / denominator, plus each rating's regularizer (weight_decay / 2)(|p_u|^2 + |q_i|^2), so the
// rows no rating of the batch touches are never decayed and the gradient is additive over
// ratings and towers; one rating with SgdOptions::weight_decay = 0 is MfStep's update bitwise.
// Evaluate's loss is the RMSE (accuracy 0).
#ifndef HOGWILD_TRAINER_WORKLOADS_MF_WORKLOAD_H_
#define HOGWILD_TRAINER_WORKLOADS_MF_WORKLOAD_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "sparse/ratings.h"
#include "trainer/workloads/workload.h"

namespace hogwild {

class MfWorkload final : public Workload {
 public:
  // `train` and `test` (may be null; the same U and I as train) must outlive the workload.
  // Errors: kInvalidArgument from sparse::ValidateMfOptions (rank outside [1, 1024], weight_decay
  // negative or not finite) and sparse::ValidateMfRatings (no training ratings, a broken rating,
  // a test set of other U or I).
  static absl::StatusOr<std::unique_ptr<MfWorkload>> Create(int rank, const sparse::Ratings* train,
                                                            const sparse::Ratings* test,
                                                            float weight_decay);

  WorkloadKind kind() const override { return WorkloadKind::kMatrixFactorization; }
  std::string name() const override { return "mf"; }
  int64_t num_params() const override { return (train_->num_users + train_->num_items) * rank_; }
  int64_t num_train_examples() const override { return train_->size(); }
  bool has_test_set() const override { return test_ != nullptr; }
  void InitParams(uint64_t seed, absl::Span<float> params) const override;
  absl::StatusOr<std::unique_ptr<WorkerGradient>> CreateWorker(int64_t max_batch) const override;
  absl::StatusOr<EvalResult> Evaluate(absl::Span<const float> params, Split split) const override;
  CheckpointSignature Signature() const override;

  float mean() const { return mean_; }

 private:
  MfWorkload(int rank, const sparse::Ratings* train, const sparse::Ratings* test,
             float weight_decay, float mean)
      : rank_(rank), train_(train), test_(test), weight_decay_(weight_decay), mean_(mean) {}

  const int rank_;
  const sparse::Ratings* train_;
  const sparse::Ratings* test_;
  const float weight_decay_;
  const float mean_;  // mu, MeanRating(train)
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WORKLOADS_MF_WORKLOAD_H_
