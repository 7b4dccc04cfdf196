#include "sparse/sparse_train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/mode.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"
#include "kernels/functors.h"
#include "sparse/buckwild.h"
#include "sparse/policy_workers.h"
#include "sparse/sparse_sgd.h"
#include "sync/parameter_store.h"
#include "trainer/finite_check.h"

namespace hogwild::sparse {
namespace {

absl::Status OutOfRange(const char* name, double value, const char* range) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%g is out of range %s", name, value, range));
}

// The sparse linear workload's examples for the worker loop (policy_workers.h): the gradient of
// an example (AddExample) and, for async batch 1, the paper's fused step.
class LinearExamples {
 public:
  LinearExamples(LinearModel model, const SparseDataset* data) : model_(model), data_(data) {}

  void AddExample(int64_t i, float scale, const float* params, SparseGradient& grad) const {
    sparse::AddExample(model_, *data_, i, scale, params, grad);
  }
  void FusedStep(const SgdMomentumFn& sgd, int64_t i, float* shared) const {
    SparseSgdStep(model_, sgd, *data_, i, shared);
  }
  template <typename T>
  void FixedPointStep(const FixedPointFormat& format, float lr, float weight_decay, int64_t i,
                      T* fixed, StochasticRounder& rounder, int64_t& saturated) const {
    FixedPointSgdStep(model_, format, lr, weight_decay, *data_, i, fixed, rounder, saturated);
  }
  // CYCLADES: an example's coordinates are its features.
  template <typename F>
  void ForEachCoordinate(int64_t i, F&& f) const {
    for (int32_t c : data_->row_indices(i)) f(c);
  }
  int64_t num_coordinates() const { return data_->num_features; }
  // The rows are visited in a random order, so the next row's first cache lines are a memory
  // miss the hardware prefetcher cannot foresee; ask for them one step ahead. Two steps ahead
  // for the row offset, one for the row itself (which needs the offset). Always inlined: a
  // function of nothing but loads and prefetches is deemed pure by GCC, and its calls, whose
  // result is unused, deleted.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Prefetch(const int64_t* order, int64_t k, int64_t end) const {
    const int64_t* offsets = data_->row_offsets.data();
    if (k + 2 < end) __builtin_prefetch(offsets + order[k + 2]);
    if (k + 1 < end) {
      // The whole row: its lines are needed at once by the margin, faster than the hardware
      // prefetcher ramps up.
      const int64_t row = order[k + 1];
      for (int64_t z = offsets[row]; z < offsets[row + 1]; z += 16) {
        __builtin_prefetch(data_->indices.data() + z);
        __builtin_prefetch(data_->values.data() + z);
      }
    }
  }

 private:
  LinearModel model_;
  const SparseDataset* data_;
};

// The run's identity in a checkpoint (sparse_checkpoint.h's table).
CheckpointSignature LinearSignature(const SparseTrainOptions& o, const SparseDataset& train) {
  CheckpointSignature s;
  s.model_name = o.model == LinearModel::kHinge ? "sparse_svm" : "sparse_logreg";
  s.input_shape = {train.num_features};
  s.num_classes = 2;
  s.layers = {absl::StrCat("mode=", ModeName(o.mode)), absl::StrCat("shuffle=", o.shuffle ? 1 : 0)};
  if (std::string layer = ModeOptionsLayer(o.mode, o.mode_options); !layer.empty()) {
    s.layers.push_back(std::move(layer));
  }
  s.num_params = train.num_features;
  s.mode = o.mode == Mode::kSync ? Mode::kSync : Mode::kAsync;
  s.num_workers = o.num_workers;
  s.batch_size = o.batch_size;
  s.seed = o.seed;
  s.train_examples = train.num_examples();
  s.dataset = SparseDatasetId(train);
  s.optimizer = "sgd";
  return s;
}

}  // namespace

DatasetId SparseDatasetId(const SparseDataset& train) {
  uint32_t crc = ExtendFingerprint(0, &train.num_features, sizeof(train.num_features));
  crc = ExtendFingerprint(crc, train.row_offsets.data(), train.row_offsets.size() * 8);
  crc = ExtendFingerprint(crc, train.indices.data(), train.indices.size() * 4);
  crc = ExtendFingerprint(crc, train.values.data(), train.values.size() * 4);
  crc = ExtendFingerprint(crc, train.labels.data(), train.labels.size() * 4);
  return DatasetId{.name = "sparse training set", .fingerprint = crc};
}

absl::StatusOr<LinearModel> ParseLinearModel(const std::string& name) {
  if (name == "logreg") return LinearModel::kLogistic;
  if (name == "svm") return LinearModel::kHinge;
  return absl::InvalidArgumentError(
      absl::StrFormat("--model=%s is not a sparse model: logreg or svm", name));
}

absl::Status ValidateSparseData(const SparseDataset& train, const SparseDataset* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateSparseDataset(train));
  if (test != nullptr) {
    HOGWILD_RETURN_IF_ERROR(ValidateSparseDataset(*test));
    if (test->num_features > train.num_features) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the test set has %d features, the training set %d: read both with --num_features",
          test->num_features, train.num_features));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSparseOptions(const SparseTrainOptions& options, const SparseDataset& train,
                                   const SparseDataset* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateSparseData(train, test));
  HOGWILD_RETURN_IF_ERROR(
      CheckSupported(WorkloadKind::kSparseLinear, options.mode, Substrate::kThreads, "--mode"));
  if (options.num_workers < 1 || options.num_workers > 256) {
    return OutOfRange("workers", options.num_workers, "[1, 256]");
  }
  HOGWILD_RETURN_IF_ERROR(ValidateSparseBatch(
      options.mode, options.batch_size, train.num_examples(), options.num_workers, "examples"));
  HOGWILD_RETURN_IF_ERROR(
      ValidateSparseModeOptions(options.mode, options.mode_options, options.num_workers));
  if (options.epochs < 1 || options.epochs > 100000) {
    return OutOfRange("epochs", options.epochs, "[1, 100000]");
  }
  if (!(options.lr > 0.0f) || !std::isfinite(options.lr)) {
    return OutOfRange("lr", options.lr, "(0, float32 max]");
  }
  if (!(options.lr_decay > 0.0f && options.lr_decay <= 1.0f)) {
    return OutOfRange("lr_decay", options.lr_decay, "(0, 1]");
  }
  if (!(options.weight_decay >= 0.0f) || !std::isfinite(options.weight_decay)) {
    return OutOfRange("weight_decay", options.weight_decay, "[0, float32 max]");
  }
  return absl::OkStatus();
}

absl::Status CheckSparseEpochFinite(absl::Span<const float> params, const SparseEpochReport& report,
                                    absl::string_view loss_name) {
  HOGWILD_RETURN_IF_ERROR(
      CheckFinite(params, "parameter", report.updates, report.lr, kSparseDivergenceRemedy));
  // Finite weights can still be large enough that the predictions overflow.
  auto loss = [&](absl::string_view split, double value) {
    return std::isfinite(value) ? absl::OkStatus()
                                : DivergedError(absl::StrFormat("the %s %s is %s", split, loss_name,
                                                                FormatNonFinite(value)),
                                                report.updates, report.lr, kSparseDivergenceRemedy);
  };
  HOGWILD_RETURN_IF_ERROR(loss("train", report.train_loss));
  return report.test_loss ? loss("test", *report.test_loss) : absl::OkStatus();
}

absl::Status RunSparseEpochs(
    const SparseEpochLoop& loop, int first_epoch, absl::Span<const float> params,
    const std::function<absl::StatusOr<int64_t>(const std::vector<int64_t>& order, float lr,
                                                int epoch)>& run_epoch,
    const std::function<void(SparseEpochReport& report)>& evaluate, SparseRunTotals& totals) {
  std::vector<int64_t> order(static_cast<size_t>(loop.examples));
  for (int epoch = first_epoch; epoch < loop.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), int64_t{0});
    if (loop.shuffle) {
      std::mt19937_64 rng(SplitMix64(loop.seed) + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), rng);
    }
    const float lr = static_cast<float>(static_cast<double>(loop.lr) *
                                        std::pow(static_cast<double>(loop.lr_decay), epoch));
    const auto start = std::chrono::steady_clock::now();
    HOGWILD_ASSIGN_OR_RETURN(totals.updates, run_epoch(order, lr, epoch));
    totals.train_time_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totals.examples += loop.examples;
    SparseEpochReport report{.epoch = epoch + 1,
                             .lr = lr,
                             .train_time_s = totals.train_time_s,
                             .examples = totals.examples,
                             .updates = totals.updates,
                             .run_updates = totals.updates - totals.resumed_updates,
                             .communication = totals.stats.communication,
                             .cyclades = totals.stats.cyclades,
                             .saturated_updates = totals.stats.saturated_updates};
    evaluate(report);
    HOGWILD_RETURN_IF_ERROR(CheckSparseEpochFinite(params, report, loop.loss_name));
    totals.epochs.push_back(report);
    if (!loop.checkpoint_dir.empty()) {
      HOGWILD_RETURN_IF_ERROR(WriteSparseCheckpoint(loop.checkpoint_dir, loop.signature, epoch + 1,
                                                    totals.updates, params));
    }
    if (loop.on_epoch) HOGWILD_RETURN_IF_ERROR(loop.on_epoch(report));
  }
  return absl::OkStatus();
}

absl::StatusOr<SparseTrainResult> TrainSparse(const SparseTrainOptions& options,
                                              const SparseDataset& train,
                                              const SparseDataset* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateSparseOptions(options, train, test));
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<ParameterStore> store,
                           ParameterStore::Create(train.num_features));
  const SparseWorkerPlan plan = PlanOf(options);
  HOGWILD_ASSIGN_OR_RETURN(const std::vector<std::unique_ptr<SparseGradient>> gradients,
                           AllocateSparseGradients(plan, train.num_features));
  const std::string& checkpoint_dir = options.checkpoint.dir;
  const CheckpointSignature signature =
      checkpoint_dir.empty() ? CheckpointSignature{} : LinearSignature(options, train);
  HOGWILD_ASSIGN_OR_RETURN(std::optional<SparseResumePoint> resume,
                           PrepareSparseCheckpoint(options.checkpoint, signature, options.epochs));
  SparseTrainResult result;
  SparseRunTotals totals;
  if (resume) {
    // CheckSignature matched num_params = D, so the sizes agree.
    std::copy(resume->params.begin(), resume->params.end(), store->unsafe_values().begin());
    result.resumed_epochs = static_cast<int>(resume->epochs_done);
    totals.examples = resume->epochs_done * train.num_examples();
    totals.updates = totals.resumed_updates = resume->updates;
  }
  const SparseEpochLoop loop{.epochs = options.epochs,
                             .lr = options.lr,
                             .lr_decay = options.lr_decay,
                             .seed = options.seed,
                             .shuffle = options.shuffle,
                             .examples = train.num_examples(),
                             .checkpoint_dir = checkpoint_dir,
                             .signature = signature,
                             .loss_name = "loss",
                             .on_epoch = options.on_epoch};
  const LinearExamples examples(options.model, &train);
  const int64_t epoch_updates = SparseEpochUpdates(plan, train.num_examples());
  auto run_epoch = [&](const std::vector<int64_t>& order, float lr,
                       int epoch) -> absl::StatusOr<int64_t> {
    HOGWILD_RETURN_IF_ERROR(RunSparseEpoch(plan, examples, *store, order, lr, epoch, gradients,
                                           &totals.stats));
    return totals.updates + epoch_updates;
  };
  // The join ordered every worker's writes before the evaluation's plain reads.
  auto evaluate = [&](SparseEpochReport& report) {
    const LinearEvaluation on_train = EvaluateLinear(options.model, store->unsafe_values(), train);
    report.train_loss = on_train.mean_loss;
    report.train_accuracy = on_train.accuracy;
    if (test != nullptr) {
      const LinearEvaluation on_test = EvaluateLinear(options.model, store->unsafe_values(), *test);
      report.test_loss = on_test.mean_loss;
      report.test_accuracy = on_test.accuracy;
    }
  };
  HOGWILD_RETURN_IF_ERROR(RunSparseEpochs(loop, result.resumed_epochs, store->unsafe_values(),
                                          run_epoch, evaluate, totals));
  result.epochs = std::move(totals.epochs);
  result.train_time_s = totals.train_time_s;
  result.examples = totals.examples;
  result.updates = totals.updates;
  const auto values = store->unsafe_values();
  result.weights.assign(values.begin(), values.end());
  return result;
}

}  // namespace hogwild::sparse
