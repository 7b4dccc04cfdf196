// Checkpoints of sparse runs (sparse/sparse_checkpoint.h): a run stopped after an epoch and
// resumed from its checkpoint ends bitwise where the uninterrupted run ends (the deterministic
// modes with 2 workers: sync, backup, local_sgd; the others with 1; logistic
// regression, SVM and matrix factorization), and a checkpoint
// that does not belong to the run is refused with one line naming what differs.
#include "sparse/sparse_checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "sparse/matrix_factorization.h"
#include "sparse/ratings.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "tests/expect_error.h"

namespace hogwild::sparse {
namespace {

using ::hogwild::testing::ExpectError;

SparseDataset Synthetic(int64_t n, uint64_t seed = 1) {
  absl::StatusOr<SyntheticData> out = GenerateRcv1Like(
      {.num_examples = n, .num_features = 300, .mean_nnz = 10, .noise_std = 0.1, .seed = seed});
  EXPECT_TRUE(out.ok()) << out.status();
  return std::move(out->data);
}

// A fresh, empty directory under the test's temporary directory.
std::string FreshDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

// Stops a run after `epochs` epochs, as a kill after the checkpoint's write would.
std::function<absl::Status(const SparseEpochReport&)> StopAfter(int epochs) {
  return [epochs](const SparseEpochReport& r) {
    return r.epoch >= epochs ? absl::CancelledError("stopped") : absl::OkStatus();
  };
}

TEST(SparseCheckpoint, ResumedLinearRunEqualsUninterruptedBitwise) {
  const SparseDataset data = Synthetic(500);
  struct Case {
    Mode mode;
    int workers;
    int batch;
    LinearModel model;
  };
  for (const Case& c : {Case{Mode::kSync, 2, 8, LinearModel::kLogistic},
                        Case{Mode::kSync, 2, 1, LinearModel::kHinge},
                        Case{Mode::kAsync, 1, 1, LinearModel::kLogistic},
                        Case{Mode::kLocked, 1, 3, LinearModel::kHinge},
                        Case{Mode::kRoundRobin, 1, 1, LinearModel::kLogistic},
                        Case{Mode::kSsp, 1, 2, LinearModel::kHinge},
                        Case{Mode::kBackup, 2, 8, LinearModel::kLogistic},
                        Case{Mode::kLocalSgd, 2, 8, LinearModel::kHinge}}) {
    SCOPED_TRACE(absl::StrFormat("%s, %d workers, batch %d, %s", ModeName(c.mode), c.workers,
                                 c.batch, LinearModelName(c.model)));
    SparseTrainOptions options{.model = c.model,
                               .mode = c.mode,
                               .num_workers = c.workers,
                               .batch_size = c.batch,
                               .epochs = 4,
                               .lr = 0.5f,
                               .lr_decay = 0.8f,
                               .seed = 7};
    absl::StatusOr<SparseTrainResult> whole = TrainSparse(options, data, nullptr);
    ASSERT_TRUE(whole.ok()) << whole.status();

    options.checkpoint.dir = FreshDir("linear");
    options.on_epoch = StopAfter(2);
    ASSERT_EQ(TrainSparse(options, data, nullptr).status().code(), absl::StatusCode::kCancelled);
    options.on_epoch = nullptr;
    options.checkpoint.resume = true;
    absl::StatusOr<SparseTrainResult> resumed = TrainSparse(options, data, nullptr);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->resumed_epochs, 2);
    ASSERT_EQ(resumed->epochs.size(), 2u);
    EXPECT_EQ(resumed->epochs.front().epoch, 3);
    EXPECT_EQ(resumed->epochs.front().lr, whole->epochs[2].lr);
    EXPECT_EQ(resumed->updates, whole->updates);
    EXPECT_EQ(resumed->examples, whole->examples);
    EXPECT_EQ(resumed->weights, whole->weights);  // bitwise: float ==, none is NaN
    EXPECT_EQ(resumed->epochs.back().train_loss, whole->epochs.back().train_loss);
  }
}

Ratings SmallRatings() {
  Ratings r{.num_users = 30, .num_items = 40};
  std::mt19937_64 rng(3);
  for (int u = 0; u < 30; ++u) {
    for (int i = 0; i < 40; ++i) {
      if (rng() % 3 != 0) continue;
      r.users.push_back(u);
      r.items.push_back(i);
      r.values.push_back(static_cast<float>(1 + (u * 7 + i * 3) % 5));
    }
  }
  return r;
}

TEST(SparseCheckpoint, ResumedMatrixFactorizationEqualsUninterruptedBitwise) {
  const Ratings ratings = SmallRatings();
  struct Case {
    Mode mode;
    int workers;
    int batch;
  };
  for (const Case& c : {Case{Mode::kAsync, 1, 1}, Case{Mode::kLocked, 1, 3},
                        Case{Mode::kSync, 2, 4}, Case{Mode::kLocalSgd, 2, 4}}) {
    SCOPED_TRACE(absl::StrFormat("%s, %d workers, batch %d", ModeName(c.mode), c.workers, c.batch));
    MfOptions options{.rank = 4,
                      .mode = c.mode,
                      .num_workers = c.workers,
                      .batch_size = c.batch,
                      .epochs = 5,
                      .lr_decay = 0.9f};
    absl::StatusOr<MfResult> whole = TrainMatrixFactorization(options, ratings, nullptr);
    ASSERT_TRUE(whole.ok()) << whole.status();

    options.checkpoint.dir = FreshDir("mf");
    options.on_epoch = StopAfter(3);
    ASSERT_EQ(TrainMatrixFactorization(options, ratings, nullptr).status().code(),
              absl::StatusCode::kCancelled);
    options.on_epoch = nullptr;
    options.checkpoint.resume = true;
    absl::StatusOr<MfResult> resumed = TrainMatrixFactorization(options, ratings, nullptr);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->resumed_epochs, 3);
    EXPECT_EQ(resumed->epochs.size(), 2u);
    EXPECT_EQ(resumed->updates, whole->updates);
    EXPECT_EQ(resumed->mean, whole->mean);
    EXPECT_EQ(resumed->factors, whole->factors);
  }
}

TEST(SparseCheckpoint, ACheckpointOfAnotherRunIsRefusedByName) {
  const SparseDataset data = Synthetic(200);
  SparseTrainOptions options{.mode = Mode::kSync, .num_workers = 2, .epochs = 2};
  options.checkpoint.dir = FreshDir("refusals");
  ASSERT_TRUE(TrainSparse(options, data, nullptr).ok());

  // The directory holds a checkpoint: neither --resume nor --overwrite_checkpoint.
  ExpectError(TrainSparse(options, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {options.checkpoint.dir, "after epoch 2", "--resume", "--overwrite_checkpoint"});
  options.checkpoint.resume = true;
  // All its epochs are done.
  ExpectError(TrainSparse(options, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {"nothing left to train", "--epochs=2"});
  options.epochs = 3;
  SparseTrainOptions other = options;
  other.mode = Mode::kLocked;
  ExpectError(TrainSparse(other, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {"mode=sync", "mode=locked"});
  other = options;
  other.model = LinearModel::kHinge;
  ExpectError(TrainSparse(other, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {"model differs", "sparse_logreg", "sparse_svm"});
  other = options;
  other.seed = 9;
  ExpectError(TrainSparse(other, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {"seed"});
  other = options;
  other.num_workers = 1;
  ExpectError(TrainSparse(other, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {"worker count", "--workers"});
  // Another data set of the same size and features: told apart by its fingerprint.
  ExpectError(TrainSparse(options, Synthetic(200, 2), nullptr).status(),
              absl::StatusCode::kFailedPrecondition, {"dataset differs", "fingerprint"});
  other = options;
  other.checkpoint.overwrite = true;
  ExpectError(TrainSparse(other, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
              {"--resume", "--overwrite_checkpoint"});
  // With the matching settings it continues from epoch 3.
  absl::StatusOr<SparseTrainResult> resumed = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_epochs, 2);
}

TEST(SparseCheckpoint, OverwriteStartsAfreshAndADamagedCheckpointIsNotSkipped) {
  const SparseDataset data = Synthetic(200);
  SparseTrainOptions options{.num_workers = 1, .epochs = 2};
  absl::StatusOr<SparseTrainResult> fresh = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  options.checkpoint.dir = FreshDir("overwrite");
  ASSERT_TRUE(TrainSparse(options, data, nullptr).ok());
  options.checkpoint.overwrite = true;
  absl::StatusOr<SparseTrainResult> again = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->resumed_epochs, 0);
  EXPECT_EQ(again->weights, fresh->weights);

  // Damage the file: --resume refuses it and says how to go on.
  const std::string path = CheckpointPath(options.checkpoint.dir);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  options.checkpoint.overwrite = false;
  options.checkpoint.resume = true;
  options.epochs = 3;
  ExpectError(TrainSparse(options, data, nullptr).status(), absl::StatusCode::kFailedPrecondition,
              {"damaged", "--overwrite_checkpoint"});
}

TEST(SparseCheckpoint, ADirectoryThatCannotHoldCheckpointsFailsBeforeTraining) {
  const SparseDataset data = Synthetic(100);
  const std::string file = FreshDir("a_file");
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fclose(f), 0);
  int epochs_run = 0;
  SparseTrainOptions options{.num_workers = 1, .epochs = 2};
  options.checkpoint.dir = file;
  options.on_epoch = [&](const SparseEpochReport&) {
    ++epochs_run;
    return absl::OkStatus();
  };
  ExpectError(TrainSparse(options, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
              {file, "not a directory"});
  EXPECT_EQ(epochs_run, 0);
  options.checkpoint = {.resume = true};
  ExpectError(TrainSparse(options, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
              {"--checkpoint_dir"});
}

}  // namespace
}  // namespace hogwild::sparse
