// Checkpoints of the sparse runs (sparse/sparse_train.h, sparse/matrix_factorization.h), taken
// at epoch boundaries in the dense trainer's file format and atomic write
// (trainer/checkpoint/checkpoint.h: `<dir>/checkpoint.hwckpt`, written to a temporary file,
// fsync'ed and renamed, so a crash leaves the previous or the new checkpoint, never a partial
// one).
//
// What is saved after each epoch: the parameters ([P] float32: the weights [D], or the factors
// [(U + I) * k]), the epochs done and the updates applied. Nothing else is needed to continue
// bitwise where the run would have gone on: an epoch's data order is drawn from (seed, epoch)
// and its step size is lr * lr_decay^epoch (sparse_train.h), and the sparse optimizer (SGD
// without momentum) has no state. The SGD time is not saved: after a resume it counts this
// process's epochs only.
//
// How a sparse run fills the dense format's signature (CheckpointSignature):
//   model_name      "sparse_logreg", "sparse_svm" or "mf"
//   input_shape     {D} (linear) or {U, I} (mf);  num_classes 2 (linear) or 0 (mf)
//   layers          the run's other settings, e.g. {"mode=locked", "shuffle=1"} (+ "rank=16")
//   num_params      P;  mode: sync for --mode=sync, else async (the sparse mode is in layers)
//   num_workers, batch_size (mf: 1), seed, train_examples (N, or the training ratings R)
//   dataset         a name and the zlib crc32 of the training arrays (SparseDataFingerprint)
//   optimizer       "sgd"
// and its state: global_step = updates, epoch = epochs done, next_step = [W] × epochs done (the
// next epoch of every worker), no optimizer state, no moving average. The step size and weight
// decay are not checked, as in the dense trainer: a resume may change them.
//
// Thread-safety: the functions are reentrant; one run owns its checkpoint directory.
#ifndef HOGWILD_SPARSE_SPARSE_CHECKPOINT_H_
#define HOGWILD_SPARSE_SPARSE_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "trainer/checkpoint/checkpoint.h"

namespace hogwild::sparse {

// The checkpoint settings of a sparse run (the `//sparse:train` flags of the same names).
struct SparseCheckpointOptions {
  std::string dir;         // empty: no checkpoints
  bool resume = false;     // continue from the checkpoint in `dir` when there is one
  bool overwrite = false;  // start afresh and replace `dir`'s checkpoint at the first save
};

// Where a resumed run continues.
struct SparseResumePoint {
  int64_t epochs_done = 0;    // epochs completed; the run continues with epoch epochs_done + 1
  int64_t updates = 0;        // updates applied so far
  std::vector<float> params;  // [P] float32
};

// Folds `bytes` bytes at `data` into a zlib crc32 (start from 0): the fingerprint of a training
// set's arrays, so that another set of the same size is told apart. Pure.
uint32_t ExtendFingerprint(uint32_t crc, const void* data, size_t bytes);

// Called before training: checks that `options.dir` (when not empty) is a writable directory
// (CheckCheckpointDirWritable) and returns the point to resume from, or std::nullopt to start
// from the beginning (no directory given, no checkpoint in it, or `options.overwrite`).
// `expected` is the run's signature (file comment), `epochs` its --epochs.
// Errors (one line each, naming the directory and the flag to use):
//   kFailedPrecondition: a checkpoint exists but neither resume nor overwrite is set; a damaged
//     checkpoint with resume; a signature that differs (naming the first differing setting);
//     a checkpoint with epochs done >= `epochs` (nothing left to train);
//   kInvalidArgument: resume and overwrite together; CheckCheckpointDirWritable's errors.
absl::StatusOr<std::optional<SparseResumePoint>> PrepareSparseCheckpoint(
    const SparseCheckpointOptions& options, const CheckpointSignature& expected, int epochs);

// Writes the state after `epochs_done` epochs into `dir` atomically (WriteCheckpoint), with
// `signature` (the run's, file comment) and `num_workers` next steps. `params`: [P] float32.
// Errors: WriteCheckpoint's (kInvalidArgument for a non-finite parameter: the previous
// checkpoint is kept; kInternal for I/O errors).
absl::Status WriteSparseCheckpoint(const std::string& dir, const CheckpointSignature& signature,
                                   int64_t epochs_done, int64_t updates,
                                   absl::Span<const float> params);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_SPARSE_CHECKPOINT_H_
