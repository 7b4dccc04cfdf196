#include "sparse/matrix_factorization.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/mode.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"
#include "kernels/cpu/shared_element.h"
#include "kernels/functors.h"
#include "sync/parameter_store.h"

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

namespace {

absl::Status Validate(const MfOptions& o, const Ratings& train, const Ratings* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateMfOptions(o));
  return ValidateMfRatings(train, test);
}

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

// The run's identity in a checkpoint (sparse_checkpoint.h's table).
CheckpointSignature MfSignature(const MfOptions& o, const Ratings& train) {
  CheckpointSignature s;
  s.model_name = "mf";
  s.input_shape = {train.num_users, train.num_items};
  s.num_classes = 0;
  s.layers = {absl::StrCat("mode=", ModeName(o.mode)), absl::StrCat("shuffle=", o.shuffle ? 1 : 0),
              absl::StrCat("rank=", o.rank)};
  s.num_params = (train.num_users + train.num_items) * o.rank;
  s.mode = Mode::kAsync;
  s.num_workers = o.num_workers;
  s.batch_size = 1;
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
  HOGWILD_RETURN_IF_ERROR(Validate(options, train, test));
  const int k = options.rank;
  const int64_t num_params = (train.num_users + train.num_items) * k;
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<ParameterStore> store,
                           ParameterStore::Create(num_params));
  float* shared = store->unsafe_values().data();
  InitMfFactors(options.seed, store->unsafe_values());
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
    totals.examples = totals.updates = totals.resumed_updates = resume->updates;
  }
  result.mean = MeanRating(train);
  const float mean = result.mean;
  std::mutex lock;
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
  auto run_epoch = [&](const std::vector<int64_t>& order, float lr) {
    const SgdMomentumFn sgd{.lr = lr, .momentum = 0.0f, .weight_decay = options.weight_decay};
    const int num_workers = options.num_workers;
    const bool locked = options.mode == Mode::kLocked;
    {
      std::vector<std::jthread> workers;
      for (int w = 0; w < num_workers; ++w) {
        workers.emplace_back([&, w] {
          std::vector<float> scratch(2 * k);
          const int64_t n = train.size();
          for (int64_t x = n * w / num_workers; x < n * (w + 1) / num_workers; ++x) {
            const int64_t r = order[x];
            float* p = shared + static_cast<int64_t>(train.users[r]) * k;
            float* q = shared + (train.num_users + train.items[r]) * k;
            std::unique_lock<std::mutex> guard(lock, std::defer_lock);
            if (locked) guard.lock();
            MfStep(sgd, k, mean, p, q, train.values[r], scratch.data());
          }
        });
      }
    }  // joined: every write is ordered before the evaluation's plain reads
    return totals.updates + train.size();  // one update per rating
  };
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
