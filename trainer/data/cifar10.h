// The CIFAR-10 binary format (https://www.cs.toronto.edu/~kriz/cifar.html, "binary version",
// the data of TensorFlow's multi-GPU CIFAR-10 example):
//   <dir>/data_batch_1.bin ... data_batch_5.bin   training set, 10,000 records each
//   <dir>/test_batch.bin                          test set, 10,000 records
// Each record is 3073 bytes: 1 label byte in [0, 9], then the 32x32x3 image's 3072 pixel bytes,
// channel-major (1024 red, 1024 green, 1024 blue, each row-major). Examples are
// [3, 32, 32] float32 pixels x / 255, as the MNIST loader's (then standardized by Normalize()).
#ifndef HOGWILD_TRAINER_DATA_CIFAR10_H_
#define HOGWILD_TRAINER_DATA_CIFAR10_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/data/dataset.h"

namespace hogwild {

inline constexpr int64_t kCifar10RecordBytes = 1 + 3 * 32 * 32;

// Appends the records in `bytes` (one file's content) to `out`, whose example_shape must be
// {3, 32, 32} and num_classes 10 (a programmer error otherwise). `origin` names the file.
// Errors (kInvalidArgument, one line naming `origin` and the record's number, from 0): a
// truncated last record ("record 7 is truncated: 100 of 3073 bytes"), a label above 9; an empty
// file. On error `out` is unchanged. Pure; the fuzzing entry point.
absl::Status ParseCifar10Records(absl::string_view bytes, absl::string_view origin, Dataset& out);

// One split: "train" (data_batch_1..5.bin, in order) or "test" (test_batch.bin), named
// "cifar10". Errors: kNotFound naming the first missing file (and where the data comes from);
// kInvalidArgument for an unknown split, a `dir` that is a file, unreadable files or
// ParseCifar10Records' errors. Thread-safe.
absl::StatusOr<Dataset> LoadCifar10Split(const std::string& dir, const std::string& split);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_CIFAR10_H_
