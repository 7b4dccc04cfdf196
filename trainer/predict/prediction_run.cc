#include "trainer/predict/prediction_run.h"

#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_state.h"
#include "trainer/data/mnist.h"
#include "trainer/finite_check.h"
#include "trainer/predict/checkpoint_model.h"

namespace hogwild {

absl::StatusOr<PredictRun> RunPrediction(const PredictOptions& options) {
  if (options.split != "test" && options.split != "train") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--split=%s is unknown; use test or train", options.split));
  }
  const std::string& dir = options.checkpoint_dir;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrFormat(
        "--checkpoint_dir=%s is not a directory; give the --checkpoint_dir of a training run",
        dir));
  }
  HOGWILD_ASSIGN_OR_RETURN(std::optional<Checkpoint> checkpoint, ReadLatestCheckpoint(dir));
  if (!checkpoint.has_value()) {
    return absl::NotFoundError(
        absl::StrFormat("--checkpoint_dir=%s holds no checkpoint (%s)", dir, kCheckpointFileName));
  }
  const CheckpointSignature& signature = checkpoint->signature;
  const std::string origin = CheckpointPath(dir);
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, ModelFromSignature(signature, origin));
  if (options.ema && checkpoint->ema.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "--weights=ema: %s has no moving average of the weights (its run had no --ema_decay); "
        "use --weights=raw",
        origin));
  }
  // The accuracy on another dataset is not the model's: a mistaken --dataset or --data_dir is
  // refused rather than reported as a result.
  constexpr char kOtherDatasetHint[] =
      "leave out --dataset and give the --data_dir of its training set, or pass "
      "--allow_other_dataset to predict on this one anyway";
  std::string dataset = options.dataset;
  if (!dataset.empty() && signature.dataset.has_value() && dataset != signature.dataset->name &&
      !options.allow_other_dataset) {
    return absl::FailedPreconditionError(absl::StrFormat("--dataset=%s: %s was trained on %s; %s",
                                                         dataset, origin, signature.dataset->name,
                                                         kOtherDatasetHint));
  }
  if (dataset.empty()) {
    if (!signature.dataset.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s does not name its dataset (format version %d); give --dataset",
                          origin, checkpoint->format_version));
    }
    dataset = signature.dataset->name;
  }
  HOGWILD_ASSIGN_OR_RETURN(const DatasetInfo info, LookupDataset(dataset));
  const std::string data_dir = options.data_dir.empty() ? info.default_dir : options.data_dir;
  // The training set as the run had it (its first train_examples examples) gives the
  // standardization statistics, so the test features are bitwise the trainer's.
  HOGWILD_ASSIGN_OR_RETURN(
      TrainTestSplits splits,
      LoadTrainTest(info, data_dir, signature.train_examples,
                    absl::StrFormat("%s: the checkpoint's train_examples", origin)));
  PredictRun run;
  const uint32_t fingerprint = signature.dataset.has_value() ? DatasetFingerprint(splits.train) : 0;
  if (signature.dataset.has_value() && fingerprint != signature.dataset->fingerprint) {
    if (!options.allow_other_dataset) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the %s training set in %s is not the one %s was trained on (fingerprint %#x, the "
          "checkpoint's %s %#x); %s",
          info.name, data_dir, origin, fingerprint, signature.dataset->name,
          signature.dataset->fingerprint, kOtherDatasetHint));
    }
    run.warning = absl::StrFormat(
        "the training set in %s is not the one %s was trained on (fingerprint %#x, the "
        "checkpoint's %s %#x): features are standardized with this one's statistics",
        data_dir, origin, fingerprint, signature.dataset->name, signature.dataset->fingerprint);
  }
  const Dataset& data = options.split == "test" ? splits.test : splits.train;
  const std::vector<float>& weights = options.ema ? checkpoint->ema : checkpoint->params;
  HOGWILD_ASSIGN_OR_RETURN(run.predictions, Predict(*model, weights, data));
  // Finite weights can still be large enough that the outputs overflow: no accuracy then.
  if (const absl::Status finite =
          CheckFinite(run.predictions.probabilities, "class probability", checkpoint->global_step);
      !finite.ok()) {
    return absl::Status(finite.code(), absl::StrCat(origin, ": ", finite.message()));
  }
  run.model = signature.model_name;
  run.dataset = info.name;
  run.global_step = checkpoint->global_step;
  return run;
}

}  // namespace hogwild
