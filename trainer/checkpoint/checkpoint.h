// Training checkpoints: a versioned binary file that holds everything needed to continue a run
// exactly where it stopped, written so that a crash at any moment leaves a loadable checkpoint.
//
// File layout (little-endian; format version 8):
//
//   offset  size  field
//        0     8  magic "HWCKPT\r\n" (the \r\n catches text-mode mangling, as PNG's magic does)
//        8     4  u32 format version (kCheckpointVersion)
//       12     4  u32 header size in bytes (32)
//       16     8  u64 payload size in bytes
//       24     4  u32 zlib crc32 of the payload
//       28     4  u32 zlib crc32 of bytes [0, 28) of the header
//       32     …  payload:
//                   signature: str model_name, u32 n + n×i64 input_shape, i64 num_classes,
//                     u32 n + n×str layers, i64 num_params, str mode, i32 num_workers,
//                     i64 batch_size, u64 seed, i64 train_examples,
//                     u8 has_dataset (0 or 1), and if 1: str dataset_name,
//                     u32 dataset_fingerprint                 (version >= 2)
//                     str optimizer                          (version >= 3)
//                     u8 has_constants (0 or 1), and if 1: 7×f32 momentum, beta1, beta2,
//                     alpha, eps, weight_decay, ema_decay    (version >= 4)
//                     i32 num_ranks R                        (version >= 5; else 1)
//                     3×i64 staleness_bound, backup_workers, average_every
//                                                            (version >= 6; else 0)
//                     f32 outer_lr, f32 outer_momentum, u8 outer_nesterov
//                                                            (version >= 7; else 1, 0, 0)
//                     i64 delayed_nesterov, u8 dynamic_local_updates, i32 fragments,
//                     i64 overlap_steps, f32 mix_alpha       (version >= 8; else 0, 0, 1, 0, 0)
//                   state: i64 global_step, i64 epoch, u32 R·W + R·W×i64 next_step,
//                     u64 P + P×f32 params, u32 n + n×(u64 P + P×f32) optimizer_state,
//                     u32 m + m×u64 optimizer_steps,         (version >= 3)
//                     u64 E + E×f32 ema (E = 0 or P)         (version >= 3)
//                     u32 b + b×(u64 P + P×f32) mode buffers, u32 c + c×i64 mode counters,
//                     u32 t + t×f64 mode seconds             (version >= 8; else none)
//                 where str = u32 length + bytes.
//
// Versions: 2 added the dataset (name and fingerprint of the train split) to the signature; 3
// the optimizer's name (kernels/optimizer_name.h), the step counts of Adam's bias correction and
// the weights' moving average
// (version 1 and 2 files read as "sgd", whose state is the momentum buffers, without counts); 4
// the optimizer's constants and the EMA's decay (OptimizerConstants; older files have none, and a
// resume of them cannot check the constants); 5 the rank count of a job of several processes
// (trainer/cluster.h), whose checkpoint holds the data position of every worker of every rank;
// 6 the option of the mode that shapes its state (ssp's staleness_bound, backup's backup_workers,
// local_sgd's average_every), when ssp, backup and local_sgd runs began to write checkpoints
// (older files are of async and sync runs, which have no such option, and read as 0); 7
// local_sgd's outer optimizer (sync/outer_optimizer.h), whose momentum is one more state buffer
// (older files read as plain averaging, the only local_sgd before it); 8 the state a policy
// keeps beyond the optimizer's (sync/mode_state.h: async_local_sgd's replicas, anchors, rounds
// and outer state; Streaming DiLoCo's replicas and local steps), when both began to write
// checkpoints, with their options in the signature (async_local_sgd's average_every, outer
// optimizer, delayed_nesterov and dynamic_local_updates; local_sgd's fragments, overlap_steps
// and mix_alpha; older files have none of it and read as the defaults).
// Version 1 files are still read (the migration): their signature has no dataset
// (CheckpointSignature::dataset is std::nullopt), so a resume cannot check it; Train() resumes
// them with a one-line warning, and its next save writes version 2 with the dataset. (Train()
// always records the dataset; has_dataset = 0 exists so that every signature round-trips.) A newer
// version is refused by number ("written by a newer hogwild").
//
// The RNG state: the data order is the only randomness after initialization, and BatchPlan
// reseeds its generator from (seed, epoch) at every epoch, so (seed, next_step) *is* the exact
// generator state; the initialization RNG is used once, before step 0, and is not needed again.
//
// Atomicity (WriteCheckpoint, through core/atomic_file.h): the bytes go to a temporary file
// created exclusively in `<dir>` (`.checkpoint.hwckpt.tmp.XXXXXX`, so no file of the user's is
// ever truncated), which is fsync'ed, renamed over `<dir>/checkpoint.hwckpt`, and then the
// directory is fsync'ed. rename(2) replaces
// the name atomically, so a reader (or a restarted run after a crash, SIGKILL included) sees
// either the previous complete checkpoint or the new complete one, never a partial file. The
// fsyncs extend this to power loss on file systems that honour them (ext4, xfs).
//
// Thread-safety: all functions are reentrant; concurrent writers to one directory are not
// supported (one training run owns its checkpoint directory).
#ifndef HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_H_
#define HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/mode.h"
#include "sync/mode_state.h"
#include "sync/outer_optimizer.h"
#include "sync/streaming.h"

namespace hogwild {

inline constexpr uint32_t kCheckpointVersion = 8;
// The oldest format version ParseCheckpoint still reads.
inline constexpr uint32_t kOldestCheckpointVersion = 1;
inline constexpr char kCheckpointFileName[] = "checkpoint.hwckpt";

// The training set a checkpoint was trained on: its name (Dataset::name, e.g. "fashion_mnist")
// and a fingerprint of its content (DatasetFingerprint() in checkpoint_state.h: zlib crc32 of
// the features and labels as given to Train()), so another dataset of the same shape and size,
// or the same one with different files, is told apart.
struct DatasetId {
  std::string name;
  uint32_t fingerprint = 0;

  bool operator==(const DatasetId&) const = default;
};

// The constants of a run's update rule that a resume must not change (SgdOptions and
// TrainerOptions::ema_decay; eps as in effect, the optimizer's default for 0): the state in the
// checkpoint was built with them.
struct OptimizerConstants {
  float momentum = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float alpha = 0.99f;
  float eps = 0.0f;
  float weight_decay = 0.0f;
  float ema_decay = 0.0f;

  bool operator==(const OptimizerConstants&) const = default;
};

// What a checkpoint must match to be resumed: the model (name, input shape, classes, layers,
// parameter count), the training mode, rank and worker counts (the optimizer state and data
// positions are per worker), what fixes the data order (batch size, seed, training-set
// size) and the training set itself. The number of epochs may differ: a run can be resumed
// with more epochs.
struct CheckpointSignature {
  std::string model_name;            // "logreg", "mlp"
  std::vector<int64_t> input_shape;  // per example, e.g. {1, 28, 28}
  int64_t num_classes = 0;
  std::vector<std::string> layers;  // Layer::name() of each layer, e.g. "dense 784->256"
  int64_t num_params = 0;           // P
  Mode mode = Mode::kAsync;         // stored as its ModeName ("async", "sync", "ssp", ...)
  int32_t num_workers = 0;          // W, per rank
  int64_t batch_size = 0;
  uint64_t seed = 0;
  int64_t train_examples = 0;  // N
  // Always set by Train() (MakeSignature); std::nullopt in a version-1 file (written before
  // the dataset was recorded) or a hand-made signature, where CheckSignature cannot compare it.
  std::optional<DatasetId> dataset;
  // OptimizerName of the run's optimizer ("sgd", "adam", ...): its state is in the checkpoint.
  std::string optimizer = "sgd";
  // Always set by Train(); std::nullopt in a file of version 3 or older (or a hand-made
  // signature), where CheckSignature cannot compare them.
  std::optional<OptimizerConstants> constants;
  // R: the processes of the job (trainer/cluster.h), 1 for a run of one process. A job's
  // checkpoint holds the whole job's state, so it resumes only with the same R.
  int32_t num_ranks = 1;
  // The option of the mode, which shaped the state (TrainerOptions of the same names), set in
  // its mode only and 0 in the others (and in files of version 5 or older): ssp's
  // staleness_bound (the clocks were kept within it), backup's backup_workers (which gradients
  // made the updates), local_sgd's average_every (where the rounds, and so the cuts, fall).
  int64_t staleness_bound = 0;
  int64_t backup_workers = 0;
  int64_t average_every = 0;
  // local_sgd's and async_local_sgd's outer optimizer (plain averaging in the other modes and
  // in files of version 6 or older; async_local_sgd's average_every above is its H): its
  // momentum buffer is part of the state, and its values shaped the parameters.
  OuterOptimizer outer;
  // async_local_sgd's delayed Nesterov period N and dynamic local updates (0 and false in the
  // other modes and in files of version 7 or older; sync/async_local_sgd.h).
  int64_t delayed_nesterov = 0;
  bool dynamic_local_updates = false;
  // local_sgd's Streaming DiLoCo options (sync/streaming.h; the defaults in the other modes and
  // in files of version 7 or older): they place the exchanges the replicas are between.
  StreamingOptions streaming;
};

struct Checkpoint {
  CheckpointSignature signature;
  int64_t global_step = 0;  // updates applied to the parameters (the store's version)
  int64_t epoch = 0;        // epochs completed by every worker (informational)
  // [R·W]: the index, in worker w's BatchPlan sequence, of the next batch it will train on,
  // rank-major (the job's worker r·W + w; [W] for one process).
  std::vector<int64_t> next_step;
  std::vector<float> params;  // [P]
  // The optimizer-state buffers, each [P] (sync/update_policy.h PolicyState): owners x slots,
  // owner-major; owners 1 (sync; async with shared state) or W (async per worker), slots 0 to 2
  // (none for SGD without momentum, momentum, Adam's two moments).
  std::vector<std::vector<float>> optimizer_state;
  // Adam and AdamW: the step count of each owner; else empty.
  std::vector<uint64_t> optimizer_steps;
  // [P] the weights' moving average (TrainerOptions::ema_decay), or empty: none.
  std::vector<float> ema;
  // The policy's own state (PolicyState::mode_state, sync/mode_state.h): every buffer [P].
  // Empty in the modes that keep none and in files of version 7 or older.
  ModeState mode_state;
  // The format version of the file it was read from, and the one SerializeCheckpoint writes:
  // kCheckpointVersion for every checkpoint this build captures; 1 for an old file (whose
  // signature has no dataset). Writing version 1 exists for the migration's tests.
  uint32_t format_version = kCheckpointVersion;
};

// The file's bytes (header + payload) in `checkpoint.format_version`, which must be in
// [kOldestCheckpointVersion, kCheckpointVersion] (a programmer error otherwise; version 1
// drops signature.dataset). Pure.
std::string SerializeCheckpoint(const Checkpoint& checkpoint);

// Parses and checks a checkpoint held in memory; `origin` names it in error messages.
// Errors (kDataLoss for damaged bytes, kInvalidArgument for well-formed but unusable content,
// kUnimplemented for a newer format version; one line naming `origin` and the field): wrong
// magic, header or payload checksum mismatch, truncated or trailing bytes, a count larger than
// the bytes that remain (checked before anything is allocated), sizes that disagree with each
// other (R·W next steps, P params, 0/1/2/R·W/2R·W optimizer_state, 0/1/W optimizer_steps), an
// unknown mode, negative steps, a non-finite parameter or EMA value. Pure function, thread-safe;
// this is the fuzzing entry point.
absl::StatusOr<Checkpoint> ParseCheckpoint(absl::string_view bytes, absl::string_view origin);

// OK when the checkpoint's parameters and EMA are all finite; else the divergence error
// (trainer/finite_check.h) naming the first value that is not. WriteCheckpoint and
// ParseCheckpoint both apply it. Pure.
absl::Status CheckCheckpointFinite(const Checkpoint& checkpoint);

// OK when `found` (a checkpoint's signature) matches `expected` (the run about to resume);
// otherwise kFailedPrecondition naming the first field that differs and both values, e.g.
// "…: model differs: checkpoint has mlp, this run mlp… ; use another --checkpoint_dir", or
// "…: dataset differs: the checkpoint has fashion_mnist (fingerprint 0x…), this run mnist (…)".
// The dataset is compared only when both signatures have one (not for a version-1 file); so are
// the optimizer's constants (not for a file of version 3 or older): "--adam_beta1 differs: the
// checkpoint has 0.9, this run 0.8; ...", naming the flag; and so is the mode's option, in its
// mode: "--average_every differs: the checkpoint has 3, this run 4; ...", and local_sgd's outer
// optimizer: "--outer_momentum differs: the checkpoint has 0.9, this run 0; ..." A momentum or EMA
// decay of 0 on one side only is left to the state checks (UpdatePolicy::RestoreState, Train()),
// which say that the state is missing.
absl::Status CheckSignature(const CheckpointSignature& expected, const CheckpointSignature& found,
                            absl::string_view origin);

// `dir`/checkpoint.hwckpt.
std::string CheckpointPath(const std::string& dir);

// Checks, before any work is done, that checkpoints can be written into `dir`: creates it (and
// missing parents) if needed, then creates, writes, fsyncs and removes a uniquely named probe
// file in it. A directory it created stays (the run would create it at its first save anyway).
// Errors, each naming `dir` and the OS reason: kInvalidArgument when `dir` is empty, is not a
// directory (a regular file) or cannot be created (e.g. under /proc); kPermissionDenied when
// files cannot be created in it (EACCES, EPERM, EROFS); kInternal for other I/O errors (ENOSPC,
// EIO). Thread-safe (the probe's name is unique per call).
absl::Status CheckCheckpointDirWritable(const std::string& dir);

// Writes `checkpoint` atomically into `dir` (created if missing), replacing the previous one
// only once the new one is complete and on disk (see the file comment).
// Errors: kInvalidArgument if `dir` is not a directory or the checkpoint has a non-finite
// parameter or EMA value (CheckCheckpointFinite: a diverged state is never saved over a good
// one); kInternal for I/O errors (EIO, …) or kResourceExhausted (ENOSPC) with the path and
// strerror. On error the previous checkpoint is untouched.
absl::Status WriteCheckpoint(const std::string& dir, const Checkpoint& checkpoint);

// Reads and parses one checkpoint file.
// Errors: kNotFound (missing), kInvalidArgument (a directory, empty), kPermissionDenied
// (unreadable), or any ParseCheckpoint error; each message names the path.
absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path);

// The checkpoint in `dir`, or std::nullopt when the directory or the file does not exist.
// A file that exists but is damaged is an error, never silently skipped.
absl::StatusOr<std::optional<Checkpoint>> ReadLatestCheckpoint(const std::string& dir);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_H_
