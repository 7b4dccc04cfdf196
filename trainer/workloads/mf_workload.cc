#include "trainer/workloads/mf_workload.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "sparse/matrix_factorization.h"

namespace hogwild {
namespace {

class MfWorker final : public WorkerGradient {
 public:
  MfWorker(int rank, const sparse::Ratings* train, float weight_decay, float mean,
           int64_t max_batch)
      : rank_(rank),
        train_(train),
        weight_decay_(weight_decay),
        mean_(mean),
        max_batch_(max_batch) {}

  absl::StatusOr<double> Gradient(absl::Span<const float> params, WorkerBatch batch,
                                  absl::Span<float> grad) override {
    const int k = rank_;
    HOGWILD_RETURN_IF_ERROR(CheckGradientArgs("MfWorkload",
                                              (train_->num_users + train_->num_items) * k,
                                              max_batch_, params, batch, grad));
    std::fill(grad.begin(), grad.end(), 0.0f);
    const float scale = batch.denominator > 0 ? 1.0f / static_cast<float>(batch.denominator) : 0.0f;
    double loss_sum = 0.0;
    for (int64_t r : batch.rows) {
      const int64_t u = train_->users[r];
      const int64_t i = train_->num_users + train_->items[r];
      const float* pu = params.data() + u * k;
      const float* qi = params.data() + i * k;
      float prediction = mean_;
      for (int f = 0; f < k; ++f) prediction += pu[f] * qi[f];
      const float e = prediction - train_->values[r];
      loss_sum += 0.5 * static_cast<double>(e) * e;
      const float c = e * scale;
      for (int f = 0; f < k; ++f) {
        // The data term, then the rating's regularizer term (weight_decay / 2)(|p_u|^2 + |q_i|^2).
        grad[u * k + f] += c * qi[f];
        grad[u * k + f] += weight_decay_ * pu[f] * scale;
        grad[i * k + f] += c * pu[f];
        grad[i * k + f] += weight_decay_ * qi[f] * scale;
      }
    }
    return loss_sum;
  }

 private:
  const int rank_;
  const sparse::Ratings* train_;
  const float weight_decay_;
  const float mean_;
  const int64_t max_batch_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MfWorkload>> MfWorkload::Create(int rank,
                                                               const sparse::Ratings* train,
                                                               const sparse::Ratings* test,
                                                               float weight_decay) {
  // The factorization trainer's ranges, checked by its own validator.
  HOGWILD_RETURN_IF_ERROR(sparse::ValidateMfOptions({.rank = rank, .weight_decay = weight_decay}));
  if (train == nullptr) return absl::InvalidArgumentError("MfWorkload: no training ratings");
  HOGWILD_RETURN_IF_ERROR(sparse::ValidateMfRatings(*train, test));
  return std::unique_ptr<MfWorkload>(
      new MfWorkload(rank, train, test, weight_decay, sparse::MeanRating(*train)));
}

void MfWorkload::InitParams(uint64_t seed, absl::Span<float> params) const {
  sparse::InitMfFactors(seed, params);
}

absl::StatusOr<std::unique_ptr<WorkerGradient>> MfWorkload::CreateWorker(int64_t max_batch) const {
  return std::unique_ptr<WorkerGradient>(std::make_unique<MfWorker>(
      rank_, train_, weight_decay_, mean_, std::max<int64_t>(1, max_batch)));
}

absl::StatusOr<EvalResult> MfWorkload::Evaluate(absl::Span<const float> params, Split split) const {
  const sparse::Ratings* data = split == Split::kTrain ? train_ : test_;
  if (data == nullptr) {
    return absl::FailedPreconditionError("MfWorkload: no test set to evaluate on");
  }
  return EvalResult{.loss = sparse::MfRmse(mean_, params, rank_, train_->num_users, *data),
                    .accuracy = 0.0,
                    .examples = data->size()};
}

CheckpointSignature MfWorkload::Signature() const {
  CheckpointSignature s;
  s.model_name = "mf";
  s.input_shape = {train_->num_users, train_->num_items};
  s.num_classes = 0;
  s.layers = {absl::StrCat("rank=", rank_)};
  s.num_params = num_params();
  s.train_examples = train_->size();
  s.dataset = sparse::RatingsDatasetId(*train_);
  return s;
}

}  // namespace hogwild
