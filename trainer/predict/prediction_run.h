// One prediction run as the `predict` command does it: read the checkpoint in a directory,
// rebuild its model, load the dataset it was trained on the way training did (the same
// training-set cut and standardization, so the features are bitwise those the trainer saw),
// and predict one split with the raw or the averaged (EMA) weights.
#ifndef HOGWILD_TRAINER_PREDICT_PREDICTION_RUN_H_
#define HOGWILD_TRAINER_PREDICT_PREDICTION_RUN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "trainer/predict/predictor.h"

namespace hogwild {

struct PredictOptions {
  std::string checkpoint_dir;  // holds checkpoint.hwckpt (trainer/checkpoint/checkpoint.h)
  std::string data_dir;        // the dataset's files; "": where tools/setup.sh installs it
  std::string dataset;         // "": the one the checkpoint names (required for version-1 files)
  bool ema = false;            // the weights' moving average instead of the raw weights
  std::string split = "test";  // "test", or "train": the examples the run trained on
  // Predict on a training set other than the checkpoint's (another dataset, or files whose
  // fingerprint differs): refused unless set, since the accuracy would not be the model's.
  bool allow_other_dataset = false;
};

struct PredictRun {
  Predictions predictions;
  std::string model;        // the checkpoint's model name
  std::string dataset;      // the dataset predicted on
  int64_t global_step = 0;  // the checkpoint's
  // Non-empty when allow_other_dataset let a training set other than the checkpoint's through
  // (its fingerprint differs), so the standardization statistics may differ from training's.
  std::string warning;
};

// Errors, one line each (flags named as the `predict` command spells them), and nothing done
// when any is found: kNotFound for a missing --checkpoint_dir, a directory without a
// checkpoint, or missing data files (the loader's message with the install hint);
// kInvalidArgument for --split other than test/train, an unknown dataset, a damaged checkpoint
// (ReadLatestCheckpoint's message), a model whose outputs are not finite (the divergence error,
// trainer/finite_check.h); kFailedPrecondition for --weights=ema from a checkpoint
// without an EMA, a dataset other than the checkpoint's without --allow_other_dataset, a model this
// build cannot rebuild identically (ModelFromSignature), data of another example shape or class
// count (Predict). Not thread-safe only in that it reads files that another process may be
// replacing (checkpoints are replaced atomically).
absl::StatusOr<PredictRun> RunPrediction(const PredictOptions& options);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_PREDICT_PREDICTION_RUN_H_
