// Low-rank matrix factorization by per-rating SGD, the Hogwild! paper's matrix-completion
// workload (Niu et al., NIPS 2011, section 5: Netflix; here MovieLens, sparse/ratings.h):
//
//   prediction(u, i) = mu + p_u . q_i          mu: the training ratings' mean (fixed)
//   loss = 1/2 (prediction - r)^2 per rating,  L2 weight decay lambda on the factors touched
//
// Parameters: one ParameterStore of (U + I) * k floats, the user factors p [U, k] then the item
// factors q [I, k], initialized uniform in [-0.1, 0.1] from SplitMix64 of (seed, index). A step
// on rating (u, i, r) reads p_u and q_i (SharedLoad), computes e = prediction - r, and updates
// the 2k coordinates of p_u and q_i with SgdMomentumFn (momentum 0, weight decay lambda) on the
// gradients e * q_i and e * p_u of the values it read (SharedSgdElement): the contract of
// sync/parameter_store.h, and only the two rows the rating touches (the paper's Algorithm 1).
//
// Modes: every mode, as in sparse_train.h (the update policies of sync/ run by the worker loop
// of sparse/policy_workers.h), with the same data order (a permutation of the ratings per epoch;
// contiguous shards per worker, or global batches cut into the workers' parts in sync, backup
// and local_sgd) and the same step schedule (lr * lr_decay^epoch). A batch of b ratings is one
// update with the mean of their gradients, each computed from the factors as the step read
// them. Async with batch 1 is the step above on the live factors, as the paper's.
#ifndef HOGWILD_SPARSE_MATRIX_FACTORIZATION_H_
#define HOGWILD_SPARSE_MATRIX_FACTORIZATION_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sparse/ratings.h"
#include "sparse/sparse_checkpoint.h"
#include "sparse/sparse_train.h"
#include "sync/policy_factory.h"

namespace hogwild::sparse {

struct MfOptions {
  int rank = 16;             // k, in [1, 1024]
  Mode mode = Mode::kAsync;  // any mode of the capabilities table (core/capabilities.h)
  int num_workers = 1;       // in [1, 256]
  // Ratings per update: per worker (async, locked, round_robin, ssp; in [1, ceil(R / W)]) or
  // global (sync, backup; in [1, R]; local_sgd: in [W, R]): ValidateSparseBatch. 1 is the
  // paper's.
  int batch_size = 1;
  // The options of ssp, backup and local_sgd, as SparseTrainOptions::mode_options.
  ModeOptions mode_options;
  int epochs = 20;             // in [1, 100000]
  float lr = 0.02f;            // > 0, finite
  float lr_decay = 1.0f;       // in (0, 1]
  float weight_decay = 0.05f;  // lambda, >= 0, finite
  uint64_t seed = 1;
  bool shuffle = true;
  // Checkpoints after every epoch, written before on_epoch is called (sparse_checkpoint.h).
  SparseCheckpointOptions checkpoint;
  // After each epoch, on the calling thread: train_loss and test_loss are RMSEs (accuracies 0 /
  // absent). An error stops training and is returned.
  std::function<absl::Status(const SparseEpochReport&)> on_epoch;
};

struct MfResult {
  float mean = 0.0f;                      // mu
  std::vector<float> factors;             // [(U + I) * k]: p then q
  std::vector<SparseEpochReport> epochs;  // the epochs this call ran (after a resume: the rest)
  int resumed_epochs = 0;     // epochs done by the checkpoint this call resumed from, or 0
  double train_time_s = 0.0;  // SGD time of this call's epochs
  int64_t updates = 0;  // updates applied (batch 1: one per rating), the resumed epochs' included
};

// Checks the option ranges above but the batch's upper bound, which needs the ratings (checked
// by TrainMatrixFactorization with the data): the command calls it before reading the ratings.
// Errors: kInvalidArgument naming the flag, its value and the range (or the modes offered). Pure.
absl::Status ValidateMfOptions(const MfOptions& options);

// Checks the training and test ratings (test may be null): at least one training rating,
// ValidateRatings on each, and a test set with train's U and I and at least one rating.
// Errors: kInvalidArgument naming the set and the broken rule. O(R).
absl::Status ValidateMfRatings(const Ratings& train, const Ratings* test);

// Everything TrainMatrixFactorization checks before it trains: ValidateMfOptions,
// ValidateMfRatings and the batch against the training ratings (ValidateSparseBatch,
// sparse/policy_workers.h). The command calls it once the ratings are read, before it writes
// anything. Errors: theirs. O(R).
absl::Status ValidateMfRun(const MfOptions& options, const Ratings& train, const Ratings* test);

// RMSE of `factors` ([(U + I) * k], + mu) on `ratings`, in double. R >= 1.
double MfRmse(float mean, absl::Span<const float> factors, int rank, int64_t num_users,
              const Ratings& ratings);

// The seeded initialization above into `factors` ([(U + I) * k]): element j uniform in
// [-0.1, 0.1] from SplitMix64(SplitMix64(seed) ^ j). Pure.
void InitMfFactors(uint64_t seed, absl::Span<float> factors);

// mu: the mean of the ratings' values, accumulated in double, rounded to float. R >= 1.
float MeanRating(const Ratings& ratings);

// The training ratings' identity in a checkpoint: "ratings training split" and the crc32 of
// their users, items and values (sparse_checkpoint.h).
DatasetId RatingsDatasetId(const Ratings& train);

// RMSE of predicting `mean` for every rating: the baseline to beat.
double GlobalMeanRmse(float mean, const Ratings& ratings);

// Trains from the seeded initialization, or from the checkpoint in options.checkpoint.dir with
// options.checkpoint.resume (continuing with its next epoch; bitwise as the uninterrupted run
// wherever the mode is deterministic: one worker, sync, backup with 0 backup workers,
// local_sgd). `test` may be null (its U and I must equal train's: SplitRatings).
// Errors: kInvalidArgument naming the option out of range or mismatched sets, a policy's error,
// or
// CheckSparseEpochFinite's divergence error (the epoch is neither checkpointed nor reported);
// PrepareSparseCheckpoint's and WriteSparseCheckpoint's; kResourceExhausted when the factors
// cannot be allocated; an on_epoch error.
absl::StatusOr<MfResult> TrainMatrixFactorization(const MfOptions& options, const Ratings& train,
                                                  const Ratings* test);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_MATRIX_FACTORIZATION_H_
