// Predictions as CSV: a header `index,predicted_class,p0,...,p{K-1}`, then one row per example
// in dataset order, e.g. `0,9,1.2e-05,...`; probabilities are printed with 9 significant
// digits, which round-trip a float32 exactly.
#ifndef HOGWILD_TRAINER_PREDICT_PREDICTION_CSV_H_
#define HOGWILD_TRAINER_PREDICT_PREDICTION_CSV_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "trainer/predict/predictor.h"

namespace hogwild {

// Checks, before any work, that `path` may be written: its directory exists, it is not a
// directory, it does not exist unless `overwrite`, and a file can be created in its folder.
// `name` is the flag that gave the path, for messages. Errors: kInvalidArgument
// (CheckOutputFilePath's, or an existing path that is not a regular file: a device such as
// /dev/null or a pipe, which the atomic rename would replace, with or without `overwrite`),
// kAlreadyExists "<name>=<path> exists; pass --overwrite to replace it", kPermissionDenied
// "<name>=<path>: cannot create a file in <folder> (<strerror>); choose a folder you can write
// to". Creates and removes a probe file (.predictions.probe.XXXXXX) in the folder; thread-safe.
absl::Status CheckPredictionOutput(absl::string_view name, const std::string& path, bool overwrite);

// Writes the CSV to `out` (e.g. stdout). Errors: kInternal when a write fails (a full disk, a
// closed pipe), with strerror. Not thread-safe on one FILE.
absl::Status WritePredictionsCsv(const Predictions& predictions, std::FILE* out);

// Writes the CSV to `path` atomically (core/atomic_file.h: a temporary file of its own beside
// `path`, renamed over it), so a failed or interrupted write leaves no partial file (and an
// existing one untouched). Errors: CheckPredictionOutput's, then WriteFileAtomically's prefixed
// with "--output=".
absl::Status WritePredictionsFile(const Predictions& predictions, const std::string& path,
                                  bool overwrite);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_PREDICT_PREDICTION_CSV_H_
