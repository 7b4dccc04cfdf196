#include "sparse/matrix_factorization.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/mode.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"
#include "kernels/cpu/shared_element.h"
#include "kernels/functors.h"
#include "sparse/policy_workers.h"
#include "sync/parameter_store.h"
#include "sync/sparse_gradient.h"

namespace hogwild::sparse {
namespace {

absl::Status OutOfRange(const char* name, double value, const char* range) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%g is out of range %s", name, value, range));
}

}  // namespace

absl::Status ValidateMfOptions(const MfOptions& o) {
  if (o.rank < 1 || o.rank > 1024) return OutOfRange("rank", o.rank, "[1, 1024]");
  HOGWILD_RETURN_IF_ERROR(
      CheckSupported(WorkloadKind::kMatrixFactorization, o.mode, Substrate::kThreads, "--mode"));
  if (o.num_workers < 1 || o.num_workers > 256)
    return OutOfRange("workers", o.num_workers, "[1, 256]");
  HOGWILD_RETURN_IF_ERROR(ValidateSparseModeOptions(o.mode, o.mode_options, o.num_workers));
  if (o.epochs < 1 || o.epochs > 100000) return OutOfRange("epochs", o.epochs, "[1, 100000]");
  if (!(o.lr > 0.0f) || !std::isfinite(o.lr)) return OutOfRange("lr", o.lr, "(0, float32 max]");
  if (!(o.lr_decay > 0.0f && o.lr_decay <= 1.0f))
    return OutOfRange("lr_decay", o.lr_decay, "(0, 1]");
  if (!(o.weight_decay >= 0.0f) || !std::isfinite(o.weight_decay)) {
    return OutOfRange("weight_decay", o.weight_decay, "[0, float32 max]");
  }
  return absl::OkStatus();
}

absl::Status ValidateMfRatings(const Ratings& train, const Ratings* test) {
  if (train.size() < 1)
    return absl::InvalidArgumentError("matrix factorization: no training ratings");
  HOGWILD_RETURN_IF_ERROR(ValidateRatings(train, "training ratings"));
  if (test != nullptr) HOGWILD_RETURN_IF_ERROR(ValidateRatings(*test, "test ratings"));
  if (test != nullptr && (test->num_users != train.num_users ||
                          test->num_items != train.num_items || test->size() < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "matrix factorization: the test set has %d users, %d items and %d ratings; expected the "
        "training set's %d users and %d items (SplitRatings) and at least one rating",
        test->num_users, test->num_items, test->size(), train.num_users, train.num_items));
  }
  return absl::OkStatus();
}

absl::Status ValidateMfRun(const MfOptions& o, const Ratings& train, const Ratings* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateMfOptions(o));
  HOGWILD_RETURN_IF_ERROR(ValidateMfRatings(train, test));
  return ValidateSparseBatch(o.mode, o.batch_size, train.size(), o.num_workers, "ratings");
}

namespace {

// One rating's step on the shared factors; `scratch` [2k] is the worker's. `sgd` by value: the
// stores into the factors could alias a referenced functor and force reloads.
inline void MfStep(const SgdMomentumFn sgd, int k, float mean, float* p, float* q, float rating,
                   float* scratch) {
  float* pv = scratch;
  float* qv = scratch + k;
  float prediction = mean;
  for (int f = 0; f < k; ++f) {
    pv[f] = cpu::SharedLoad(p + f);
    qv[f] = cpu::SharedLoad(q + f);
  }
  for (int f = 0; f < k; ++f) prediction += pv[f] * qv[f];
  const float e = prediction - rating;
  float unused_velocity = 0.0f;
  for (int f = 0; f < k; ++f) {
    cpu::SharedSgdElement(sgd, e * qv[f], unused_velocity, p + f);
    cpu::SharedSgdElement(sgd, e * pv[f], unused_velocity, q + f);
  }
}

// Matrix factorization's ratings for the worker loop (policy_workers.h): a rating's gradient on
// p_u and q_i (MfStep's arithmetic: e * q_i and e * p_u of the values read, here times the
// batch's scale) and, for async batch 1, MfStep itself. Each worker's copy has its own scratch.
class MfExamples {
 public:
  MfExamples(const Ratings* train, int rank, float mean)
      : train_(train), k_(rank), mean_(mean), scratch_(2 * static_cast<size_t>(rank)) {}

  void AddExample(int64_t r, float scale, const float* params, SparseGradient& grad) {
    const int64_t p = UserRow(r);
    const int64_t q = ItemRow(r);
    float* pv = scratch_.data();
    float* qv = pv + k_;
    float prediction = mean_;
    for (int f = 0; f < k_; ++f) {
      pv[f] = cpu::SharedLoad(params + p + f);
      qv[f] = cpu::SharedLoad(params + q + f);
    }
    for (int f = 0; f < k_; ++f) prediction += pv[f] * qv[f];
    // Scale 1 (batch 1) leaves e, and so MfStep's gradients, bitwise as they are.
    const float c = (prediction - train_->values[r]) * scale;
    for (int f = 0; f < k_; ++f) {
      grad.Accumulate(static_cast<int32_t>(p + f), c * qv[f]);
      grad.Accumulate(static_cast<int32_t>(q + f), c * pv[f]);
    }
  }
  void FusedStep(const SgdMomentumFn& sgd, int64_t r, float* shared) {
    MfStep(sgd, k_, mean_, shared + UserRow(r), shared + ItemRow(r), train_->values[r],
           scratch_.data());
  }
  void Prefetch(const int64_t* /*order*/, int64_t /*k*/, int64_t /*end*/) const {}
  // CYCLADES: a rating's coordinates are its user's and its item's factor rows.
  template <typename F>
  void ForEachCoordinate(int64_t r, F&& f) const {
    f(int64_t{train_->users[r]});
    f(train_->num_users + train_->items[r]);
  }
  int64_t num_coordinates() const { return train_->num_users + train_->num_items; }

 private:
  int64_t UserRow(int64_t r) const { return static_cast<int64_t>(train_->users[r]) * k_; }
  int64_t ItemRow(int64_t r) const { return (train_->num_users + train_->items[r]) * k_; }

  const Ratings* train_;
  int k_;
  float mean_;
  std::vector<float> scratch_;  // [2k]: p_u then q_i as read
};

// The run's identity in a checkpoint (sparse_checkpoint.h's table).
CheckpointSignature MfSignature(const MfOptions& o, const Ratings& train) {
  CheckpointSignature s;
  s.model_name = "mf";
  s.input_shape = {train.num_users, train.num_items};
  s.num_classes = 0;
  s.layers = {absl::StrCat("mode=", ModeName(o.mode)), absl::StrCat("shuffle=", o.shuffle ? 1 : 0),
              absl::StrCat("rank=", o.rank)};
  if (std::string layer = ModeOptionsLayer(o.mode, o.mode_options); !layer.empty()) {
    s.layers.push_back(std::move(layer));
  }
  s.num_params = (train.num_users + train.num_items) * o.rank;
  s.mode = Mode::kAsync;
  s.num_workers = o.num_workers;
  s.batch_size = o.batch_size;
  s.seed = o.seed;
  s.train_examples = train.size();
  s.dataset = RatingsDatasetId(train);
  s.optimizer = "sgd";
  return s;
}

}  // namespace

DatasetId RatingsDatasetId(const Ratings& train) {
  uint32_t crc = ExtendFingerprint(0, train.users.data(), train.users.size() * 4);
  crc = ExtendFingerprint(crc, train.items.data(), train.items.size() * 4);
  crc = ExtendFingerprint(crc, train.values.data(), train.values.size() * 4);
  return DatasetId{.name = "ratings training split", .fingerprint = crc};
}

void InitMfFactors(uint64_t seed, absl::Span<float> factors) {
  for (size_t j = 0; j < factors.size(); ++j) {
    const uint64_t bits = SplitMix64(SplitMix64(seed) ^ static_cast<uint64_t>(j));
    factors[j] =
        static_cast<float>((static_cast<double>(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0) * 0.1);
  }
}

float MeanRating(const Ratings& ratings) {
  double sum = 0.0;
  for (float v : ratings.values) sum += v;
  return static_cast<float>(sum / ratings.size());
}

double MfRmse(float mean, absl::Span<const float> factors, int rank, int64_t num_users,
              const Ratings& ratings) {
  double sum = 0.0;
  for (int64_t r = 0; r < ratings.size(); ++r) {
    const float* p = factors.data() + static_cast<int64_t>(ratings.users[r]) * rank;
    const float* q = factors.data() + (num_users + ratings.items[r]) * rank;
    double prediction = mean;
    for (int f = 0; f < rank; ++f) prediction += static_cast<double>(p[f]) * q[f];
    const double e = prediction - ratings.values[r];
    sum += e * e;
  }
  return std::sqrt(sum / ratings.size());
}

double GlobalMeanRmse(float mean, const Ratings& ratings) {
  double sum = 0.0;
  for (float v : ratings.values) sum += (static_cast<double>(mean) - v) * (mean - v);
  return std::sqrt(sum / ratings.size());
}

absl::StatusOr<MfResult> TrainMatrixFactorization(const MfOptions& options, const Ratings& train,
                                                  const Ratings* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateMfRun(options, train, test));
  const int k = options.rank;
  const int64_t num_params = (train.num_users + train.num_items) * k;
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<ParameterStore> store,
                           ParameterStore::Create(num_params));
  float* shared = store->unsafe_values().data();
  InitMfFactors(options.seed, store->unsafe_values());
  const SparseWorkerPlan plan = PlanOf(options);
  HOGWILD_ASSIGN_OR_RETURN(const std::vector<std::unique_ptr<SparseGradient>> gradients,
                           AllocateSparseGradients(plan, num_params));
  const std::string& checkpoint_dir = options.checkpoint.dir;
  const CheckpointSignature signature =
      checkpoint_dir.empty() ? CheckpointSignature{} : MfSignature(options, train);
  HOGWILD_ASSIGN_OR_RETURN(std::optional<SparseResumePoint> resume,
                           PrepareSparseCheckpoint(options.checkpoint, signature, options.epochs));
  MfResult result;
  SparseRunTotals totals;
  if (resume) {
    // CheckSignature matched num_params, so the sizes agree.
    std::copy(resume->params.begin(), resume->params.end(), shared);
    result.resumed_epochs = static_cast<int>(resume->epochs_done);
    totals.examples = resume->epochs_done * train.size();
    totals.updates = totals.resumed_updates = resume->updates;
  }
  result.mean = MeanRating(train);
  const float mean = result.mean;
  std::vector<float> view;
  const SparseEpochLoop loop{.epochs = options.epochs,
                             .lr = options.lr,
                             .lr_decay = options.lr_decay,
                             .seed = options.seed,
                             .shuffle = options.shuffle,
                             .examples = train.size(),
                             .checkpoint_dir = checkpoint_dir,
                             .signature = signature,
                             .loss_name = "RMSE",
                             .on_epoch = options.on_epoch};
  const MfExamples ratings(&train, k, mean);
  const int64_t epoch_updates = SparseEpochUpdates(plan, train.size());
  auto run_epoch = [&](const std::vector<int64_t>& order, float lr,
                       int epoch) -> absl::StatusOr<int64_t> {
    HOGWILD_RETURN_IF_ERROR(RunSparseEpoch(plan, ratings, *store, order, lr, epoch, gradients,
                                           &totals.stats));
    return totals.updates + epoch_updates;
  };
  // The join ordered every worker's writes before the evaluation's plain reads.
  auto evaluate = [&](SparseEpochReport& report) {
    view.assign(shared, shared + num_params);
    report.train_loss = MfRmse(mean, view, k, train.num_users, train);
    if (test != nullptr) report.test_loss = MfRmse(mean, view, k, train.num_users, *test);
  };
  HOGWILD_RETURN_IF_ERROR(RunSparseEpochs(loop, result.resumed_epochs, store->unsafe_values(),
                                          run_epoch, evaluate, totals));
  result.epochs = std::move(totals.epochs);
  result.train_time_s = totals.train_time_s;
  result.updates = totals.updates;
  result.factors.assign(shared, shared + num_params);
  return result;
}

}  // namespace hogwild::sparse
