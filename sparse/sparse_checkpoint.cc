#include "sparse/sparse_checkpoint.h"

#include <zlib.h>

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace hogwild::sparse {

uint32_t ExtendFingerprint(uint32_t crc, const void* data, size_t bytes) {
  return static_cast<uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), bytes));
}

absl::StatusOr<std::optional<SparseResumePoint>> PrepareSparseCheckpoint(
    const SparseCheckpointOptions& options, const CheckpointSignature& expected, int epochs) {
  const std::string& dir = options.dir;
  if (dir.empty()) {
    if (options.resume || options.overwrite) {
      return absl::InvalidArgumentError(
          "--resume and --overwrite_checkpoint need --checkpoint_dir");
    }
    return std::optional<SparseResumePoint>();
  }
  if (options.resume && options.overwrite) {
    return absl::InvalidArgumentError(
        "--resume and --overwrite_checkpoint contradict each other: choose one");
  }
  HOGWILD_RETURN_IF_ERROR(CheckCheckpointDirWritable(dir));
  absl::StatusOr<std::optional<Checkpoint>> found = ReadLatestCheckpoint(dir);
  if (options.overwrite) return std::optional<SparseResumePoint>();
  if (!found.ok()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "--checkpoint_dir=%s holds a damaged checkpoint (%s); use --overwrite_checkpoint to "
        "start over and replace it, or another --checkpoint_dir",
        dir, found.status().message()));
  }
  if (!found->has_value()) return std::optional<SparseResumePoint>();
  Checkpoint& checkpoint = **found;
  if (!options.resume) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "--checkpoint_dir=%s already holds a checkpoint after epoch %d; use --resume to continue "
        "from it, or --overwrite_checkpoint to start over and replace it",
        dir, checkpoint.epoch));
  }
  const std::string path = CheckpointPath(dir);
  // The sparse settings first: CheckSignature's hint for `layers` speaks of dense layers.
  if (checkpoint.signature.model_name == expected.model_name &&
      checkpoint.signature.layers != expected.layers) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: cannot resume: the settings differ: the checkpoint has %s, this run %s; resume with "
        "the checkpoint's flags or use another --checkpoint_dir",
        path, absl::StrJoin(checkpoint.signature.layers, " "),
        absl::StrJoin(expected.layers, " ")));
  }
  HOGWILD_RETURN_IF_ERROR(CheckSignature(expected, checkpoint.signature, path));
  if (checkpoint.epoch >= epochs) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: nothing left to train: the checkpoint has %d epochs done and --epochs=%d; raise "
        "--epochs to continue",
        path, checkpoint.epoch, epochs));
  }
  return std::optional<SparseResumePoint>(
      SparseResumePoint{.epochs_done = checkpoint.epoch,
                        .updates = checkpoint.global_step,
                        .params = std::move(checkpoint.params)});
}

absl::Status WriteSparseCheckpoint(const std::string& dir, const CheckpointSignature& signature,
                                   int64_t epochs_done, int64_t updates,
                                   absl::Span<const float> params) {
  Checkpoint checkpoint;
  checkpoint.signature = signature;
  checkpoint.global_step = updates;
  checkpoint.epoch = epochs_done;
  checkpoint.next_step.assign(signature.num_workers, epochs_done);
  checkpoint.params.assign(params.begin(), params.end());
  return WriteCheckpoint(dir, checkpoint);
}

}  // namespace hogwild::sparse
