// Training a sparse linear model (logistic regression or linear SVM) on a SparseDataset with W
// worker threads, in the Hogwild! paper's setting (Niu, Recht, Ré, Wright, NIPS 2011): weights
// in a ParameterStore, examples touching only their non-zeros (sparse/sparse_sgd.h).
//
// Modes: every mode of core/mode.h, each the update policy of sync/ (sync/update_policy.h) run
// by the worker loop of sparse/policy_workers.h, which says how each mode splits the data:
//   async  (Hogwild!): each worker takes its contiguous shard of the epoch's order and, per
//          batch of `batch_size` examples, reads the weights on the batch's support, computes the
//          gradient and updates those coordinates, with no lock (batch 1: SparseSgdStep on the
//          live weights, the paper's Algorithm 1). Lost updates allowed, never a torn value.
//   locked, round_robin (the paper's baselines), ssp: async's data split under the policies of
//          sync/locked.h (one lock around every step), sync/round_robin.h (updates applied in
//          turn) and sync/stale_synchronous.h (a worker at most staleness_bound steps ahead).
//   sync   (tower averaging), backup (sync without the slowest backup_workers gradients of each
//          step): the epoch's order is cut into global batches of `batch_size`, each worker
//          the gradient of its contiguous part (scale 1 / global batch), summed in worker order
//          and applied once per step (sync/tower_average.h, sync/backup_sync.h).
//   local_sgd: sync's split, each worker stepping its own replica with the mean gradient of its
//          part, the replicas averaged every average_every steps (sync/local_sgd.h).
// With one worker every mode is sequential (minibatch) SGD, bitwise. Weight decay reaches the
// touched coordinates only, in every mode (sync/update_policy.h FinishSparseStep).
//
// Data order: epoch e visits a permutation of [0, N) drawn by std::shuffle with
// std::mt19937_64 seeded from SplitMix64(seed) + e (the identity when shuffle is false). The
// workers run in threads started for each epoch and joined at its end, where the model is
// evaluated (not counted in the training time) and checkpointed: every policy is fresh per
// epoch, so an epoch's end is a consistent cut in every mode. No staleness is recorded.
#ifndef HOGWILD_SPARSE_SPARSE_TRAIN_H_
#define HOGWILD_SPARSE_SPARSE_TRAIN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/mode.h"
#include "sparse/cyclades.h"
#include "sparse/linear_loss.h"
#include "sparse/policy_workers.h"
#include "sparse/sparse_checkpoint.h"
#include "sparse/sparse_dataset.h"
#include "sync/policy_factory.h"
#include "sync/update_policy.h"

namespace hogwild::sparse {

// The training set's identity in a checkpoint: "sparse training set" and the crc32 of its D,
// rows, indices, values and labels (sparse_checkpoint.h). O(N + Z).
DatasetId SparseDatasetId(const SparseDataset& train);

// "logreg" (logistic regression), "svm" (hinge); LinearModelName() is the inverse.
absl::StatusOr<LinearModel> ParseLinearModel(const std::string& name);

// One line per epoch, after its end.
struct SparseEpochReport {
  int epoch = 0;              // 1-based: epochs done
  float lr = 0.0f;            // the epoch's learning rate
  double train_time_s = 0.0;  // SGD time so far in this call (evaluations excluded)
  int64_t examples = 0;       // training examples processed so far, all workers
  int64_t updates = 0;        // updates applied so far (a step's update, whatever its batch)
  // The updates of this call's epochs (a resumed checkpoint's excluded): over train_time_s, the
  // update rate.
  int64_t run_updates = 0;
  double train_loss = 0.0;  // the model on the whole training set (EvaluateLinear)
  double train_accuracy = 0.0;
  std::optional<double> test_loss;  // with a test set
  std::optional<double> test_accuracy;
  // What the workers communicated so far in this call (the log's exchanges, bytes_per_worker and
  // outer_step_norm columns): the epochs' policies' CommunicationStats summed.
  CommunicationStats communication;
  // cyclades: the rounds' plans so far in this call (sparse/cyclades.h); zero in other modes.
  CycladesStats cyclades;
  // buckwild: the coordinate updates so far in this call clamped at the fixed-point model's
  // range (sparse/buckwild.h); a large share says --fixed_point_range is too small.
  int64_t saturated_updates = 0;
};

struct SparseTrainOptions {
  LinearModel model = LinearModel::kLogistic;
  Mode mode = Mode::kAsync;
  int num_workers = 1;  // W, in [1, 256]
  int batch_size = 1;   // per worker (async, locked, round_robin, ssp; in
                        // [1, ceil(N / W)]) or global (sync, backup; in [1, N];
                        // local_sgd: in [W, N]): ValidateSparseBatch
  // The options of ssp, backup and local_sgd (sync/policy_factory.h, the dense trainer's
  // defaults and ranges: ValidateSparseModeOptions); a non-default value in another mode is
  // refused.
  ModeOptions mode_options;
  int epochs = 5;             // in [1, 100000]
  float lr = 0.5f;            // > 0, finite
  float lr_decay = 1.0f;      // in (0, 1]: the paper's per-epoch decay
  float weight_decay = 0.0f;  // >= 0, finite; on touched coordinates only (sparse_sgd.h)
  uint64_t seed = 1;
  bool shuffle = true;  // false: every epoch in index order (tests)
  // Checkpoints after every epoch, written before on_epoch is called (sparse_checkpoint.h).
  SparseCheckpointOptions checkpoint;
  // Called on the calling thread after each epoch; an error stops training and is returned.
  std::function<absl::Status(const SparseEpochReport&)> on_epoch;
};

struct SparseTrainResult {
  std::vector<float> weights;             // [D] float32, the final model
  std::vector<SparseEpochReport> epochs;  // the epochs this call ran (after a resume: the rest)
  int resumed_epochs = 0;     // epochs done by the checkpoint this call resumed from, or 0
  double train_time_s = 0.0;  // SGD time of this call's epochs (thread start and join included)
  int64_t examples = 0;       // all epochs', the resumed ones included
  int64_t updates = 0;        // all epochs', the resumed ones included
  double examples_per_s() const { return train_time_s > 0 ? examples / train_time_s : 0.0; }
};

// Checks the data sets (test may be null): ValidateSparseDataset on each, and that the test
// set's features fit the training set's D. Errors: kInvalidArgument naming the broken rule.
absl::Status ValidateSparseData(const SparseDataset& train, const SparseDataset* test);

// Checks `options` against the data (the ranges above; the mode against the capabilities table,
// core/capabilities.h); kInvalidArgument naming the option, its value and the range. Also checks
// the data sets (ValidateSparseDataset) and that the test set's features fit the training set's D.
absl::Status ValidateSparseOptions(const SparseTrainOptions& options, const SparseDataset& train,
                                   const SparseDataset* test);

// The divergence guard of the sparse and matrix-factorization runs, applied after every epoch
// before it is checkpointed or reported: OK when every parameter ([P] float32) and the epoch's
// train and test losses (`loss_name`: "loss" or "RMSE") are finite; else the divergence error
// of trainer/finite_check.h at global step report.updates with the epoch's learning rate.
absl::Status CheckSparseEpochFinite(absl::Span<const float> params, const SparseEpochReport& report,
                                    absl::string_view loss_name);

// The epoch loop both sparse trainers run (this file's schedule and data order): epochs
// first_epoch .. loop.epochs - 1, each with its order of [0, loop.examples) (the identity,
// shuffled by std::shuffle with std::mt19937_64(SplitMix64(seed) + epoch) when shuffle) and its
// learning rate (lr * lr_decay^epoch in double, rounded to float). For each: `run_epoch(order,
// lr, epoch)` (epoch 0-based) starts and joins the workers (timed as training) and returns the updates applied so far
// (or an error, which ends the loop and is returned);
// then the report (examples and updates so far, `evaluate` fills its losses from `params` ([P],
// read after the join)), CheckSparseEpochFinite, the checkpoint (with loop.checkpoint_dir) and
// on_epoch. `totals` holds the run so far (a resumed run's counts) and receives each epoch's.
struct SparseEpochLoop {
  int epochs = 1;
  float lr = 0.0f;
  float lr_decay = 1.0f;
  uint64_t seed = 1;
  bool shuffle = true;
  int64_t examples = 0;  // N, the examples (rows, ratings) of an epoch
  std::string checkpoint_dir;
  CheckpointSignature signature;
  const char* loss_name = "loss";  // CheckSparseEpochFinite's: "loss" or "RMSE"
  std::function<absl::Status(const SparseEpochReport&)> on_epoch;
};
struct SparseRunTotals {
  double train_time_s = 0.0;
  int64_t examples = 0;
  int64_t updates = 0;
  int64_t resumed_updates = 0;  // the updates of the checkpoint resumed from (run_updates' base)
  SparseEpochStats stats;  // the epochs', summed (RunSparseEpoch)
  std::vector<SparseEpochReport> epochs;
};
absl::Status RunSparseEpochs(
    const SparseEpochLoop& loop, int first_epoch, absl::Span<const float> params,
    const std::function<absl::StatusOr<int64_t>(const std::vector<int64_t>& order, float lr,
                                                int epoch)>& run_epoch,
    const std::function<void(SparseEpochReport& report)>& evaluate, SparseRunTotals& totals);

// Trains from zero weights, or from the checkpoint in options.checkpoint.dir with
// options.checkpoint.resume (continuing with its next epoch; bitwise as the uninterrupted run
// wherever the mode is deterministic: one worker, sync, backup with 0 backup workers,
// local_sgd). `test` may be null. Errors:
// ValidateSparseOptions's; CheckSparseEpochFinite's (training diverged: the epoch is neither
// checkpointed nor reported); PrepareSparseCheckpoint's and WriteSparseCheckpoint's;
// kResourceExhausted when the weights ([D] floats) or the per-worker gradients (5 D bytes each,
// all but async batch 1) cannot be allocated; a policy's error; an on_epoch error.
// Thread-compatible: the data sets are only read, by the workers, for the duration of the call.
absl::StatusOr<SparseTrainResult> TrainSparse(const SparseTrainOptions& options,
                                              const SparseDataset& train,
                                              const SparseDataset* test);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_SPARSE_TRAIN_H_
