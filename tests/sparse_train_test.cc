// The sparse trainer (sparse/sparse_train.h): one worker is sequential SGD bitwise in every
// mode, Hogwild! on disjoint supports is sequential SGD bitwise, sync averages tower gradients,
// backup without backup workers is sync bitwise and local_sgd averaging every step is sync up to
// float rounding, every mode learns the synthetic set, bad options are refused by name.
#include "sparse/sparse_train.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/splitmix64.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sparse/linear_loss.h"
#include "sparse/synthetic.h"
#include "tests/expect_error.h"

namespace hogwild::sparse {
namespace {

SparseDataset Synthetic(int64_t n, int64_t d, int nnz, uint64_t seed = 1) {
  absl::StatusOr<SyntheticData> out = GenerateRcv1Like(
      {.num_examples = n, .num_features = d, .mean_nnz = nnz, .noise_std = 0.1, .seed = seed});
  EXPECT_TRUE(out.ok()) << out.status();
  return std::move(out->data);
}

// Sequential minibatch SGD written from the definitions (linear_loss.h, SgdMomentumFn, the data
// order of sparse_train.h), with none of the trainer's code: batches of `batch` examples in
// the epoch's order, gradient sum_i (slope_i / batch) x_i accumulated example by example in
// float, then w_j <- sgd(w_j, g_j) on the touched coordinates.
std::vector<float> SequentialSgd(const SparseTrainOptions& o, const SparseDataset& data) {
  const int64_t n = data.num_examples();
  std::vector<float> w(data.num_features, 0.0f);
  std::vector<float> g(data.num_features, 0.0f);
  std::vector<int64_t> order(n);
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), int64_t{0});
    if (o.shuffle) {
      std::mt19937_64 rng(SplitMix64(o.seed) + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), rng);
    }
    const SgdMomentumFn sgd{
        .lr = static_cast<float>(o.lr * std::pow(static_cast<double>(o.lr_decay), epoch)),
        .momentum = 0.0f,
        .weight_decay = o.weight_decay};
    for (int64_t start = 0; start < n; start += o.batch_size) {
      const int64_t stop = std::min<int64_t>(n, start + o.batch_size);
      const float scale = 1.0f / static_cast<float>(stop - start);
      std::vector<int32_t> touched;
      for (int64_t q = start; q < stop; ++q) {
        const int64_t i = order[q];
        float margin = 0.0f;
        for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
          margin += w[data.indices[k]] * data.values[k];
        }
        const float c = LinearLoss(o.model, margin, data.labels[i]).slope * scale;
        for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
          const int32_t j = data.indices[k];
          if (std::find(touched.begin(), touched.end(), j) == touched.end()) touched.push_back(j);
          g[j] += c * data.values[k];
        }
      }
      float unused = 0.0f;
      for (int32_t j : touched) w[j] = sgd(w[j], g[j], unused);
      for (int32_t j : touched) g[j] = 0.0f;
    }
  }
  return w;
}

TEST(SparseTrain, OneWorkerIsSequentialSgdBitwiseInEveryMode) {
  const SparseDataset data = Synthetic(600, 400, 12);
  // cyclades applies a round's components largest first: tests/cyclades_test.cc.
  for (Mode mode : kPolicyModes) {
    for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
      for (int batch : {1, 7}) {
        for (float weight_decay : {0.0f, 0.001f}) {
          SCOPED_TRACE(::testing::Message() << ModeName(mode) << " " << LinearModelName(model)
                                            << " batch " << batch << " decay " << weight_decay);
          const SparseTrainOptions options{.model = model,
                                           .mode = mode,
                                           .num_workers = 1,
                                           .batch_size = batch,
                                           .epochs = 3,
                                           .lr = 0.5f,
                                           .lr_decay = 0.8f,
                                           .weight_decay = weight_decay,
                                           .seed = 5};
          absl::StatusOr<SparseTrainResult> result = TrainSparse(options, data, nullptr);
          ASSERT_TRUE(result.ok()) << result.status();
          EXPECT_EQ(result->weights, SequentialSgd(options, data));
          EXPECT_EQ(result->examples, 3 * 600);
          EXPECT_EQ(result->updates, 3 * ((600 + batch - 1) / batch));
        }
      }
    }
  }
}

TEST(SparseTrain, HogwildOnDisjointSupportsIsSequentialSgdBitwise) {
  // Worker 0's shard (the first half, in index order) uses features [0, 200), worker 1's
  // [200, 400): no coordinate is shared, so no update can be lost or reordered.
  SparseDataset data = Synthetic(1000, 200, 10, 3);
  const int64_t half = data.nnz();
  const int64_t rows = data.num_examples();
  for (int64_t i = 0; i < rows; ++i) {
    data.row_offsets.push_back(data.row_offsets[i + 1] + half);
    data.labels.push_back(-data.labels[i]);
  }
  for (int64_t k = 0; k < half; ++k) {
    data.indices.push_back(data.indices[k] + 200);
    data.values.push_back(data.values[k]);
  }
  data.num_features = 400;
  ASSERT_TRUE(ValidateSparseDataset(data).ok()) << ValidateSparseDataset(data);
  for (int batch : {1, 4}) {
    SparseTrainOptions options{.num_workers = 2,
                               .batch_size = batch,
                               .epochs = 4,
                               .lr = 0.5f,
                               .lr_decay = 0.9f,
                               .shuffle = false};
    absl::StatusOr<SparseTrainResult> hogwild = TrainSparse(options, data, nullptr);
    ASSERT_TRUE(hogwild.ok()) << hogwild.status();
    options.num_workers = 1;
    EXPECT_EQ(hogwild->weights, SequentialSgd(options, data)) << "batch " << batch;
  }
}

TEST(SparseTrain, SyncAveragesTheTowerGradientsOfTheGlobalBatch) {
  // W towers sum their parts of each global batch: the sequential minibatch result up to the
  // order of float additions.
  const SparseDataset data = Synthetic(900, 300, 10);
  for (int workers : {2, 3}) {
    SparseTrainOptions options{
        .mode = Mode::kSync, .num_workers = workers, .batch_size = 16, .epochs = 2, .lr = 0.5f};
    absl::StatusOr<SparseTrainResult> sync = TrainSparse(options, data, nullptr);
    ASSERT_TRUE(sync.ok()) << sync.status();
    const std::vector<float> sequential = SequentialSgd(options, data);
    double diff = 0.0, norm = 0.0;
    for (size_t j = 0; j < sequential.size(); ++j) {
      diff = std::max(diff, std::fabs(double{sync->weights[j]} - sequential[j]));
      norm = std::max(norm, std::fabs(double{sequential[j]}));
    }
    EXPECT_LT(diff, 1e-5 * norm) << workers << " workers";
    EXPECT_EQ(sync->updates, 2 * ((900 + 15) / 16));
  }
}

// The largest difference between two weight vectors, relative to the largest weight of `b`.
double RelativeDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, norm = 0.0;
  for (size_t j = 0; j < b.size(); ++j) {
    diff = std::max(diff, std::fabs(double{a[j]} - b[j]));
    norm = std::max(norm, std::fabs(double{b[j]}));
  }
  return diff / norm;
}

TEST(SparseTrain, BackupWithoutBackupWorkersIsSyncBitwise) {
  const SparseDataset data = Synthetic(900, 300, 10);
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    SparseTrainOptions options{
        .model = model, .mode = Mode::kSync, .num_workers = 3, .batch_size = 16, .epochs = 2};
    absl::StatusOr<SparseTrainResult> sync = TrainSparse(options, data, nullptr);
    ASSERT_TRUE(sync.ok()) << sync.status();
    options.mode = Mode::kBackup;
    options.mode_options.backup_workers = 0;
    absl::StatusOr<SparseTrainResult> backup = TrainSparse(options, data, nullptr);
    ASSERT_TRUE(backup.ok()) << backup.status();
    EXPECT_EQ(backup->weights, sync->weights) << LinearModelName(model);
    EXPECT_EQ(backup->updates, sync->updates);
  }
}

TEST(SparseTrain, LocalSgdAveragingEveryStepIsSyncUpToFloatRounding) {
  // Equal parts (600 examples, global batches of 12, 4 per worker): the average of the three
  // replicas' local steps is the sync step, the gradient sums associated differently.
  const SparseDataset data = Synthetic(600, 300, 10);
  SparseTrainOptions options{
      .mode = Mode::kSync, .num_workers = 3, .batch_size = 12, .epochs = 2, .lr = 0.5f};
  absl::StatusOr<SparseTrainResult> sync = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(sync.ok()) << sync.status();
  options.mode = Mode::kLocalSgd;
  options.mode_options.average_every = 1;
  absl::StatusOr<SparseTrainResult> local = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_LT(RelativeDifference(local->weights, sync->weights), 1e-5);
  EXPECT_EQ(local->updates, sync->updates);
  // Averaging less often is another algorithm: the replicas drift apart between averagings.
  options.mode_options.average_every = 4;
  absl::StatusOr<SparseTrainResult> rarely = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(rarely.ok()) << rarely.status();
  EXPECT_GT(RelativeDifference(rarely->weights, sync->weights), 1e-3);
}

// The log's communication columns from the sparse trainer: the epochs' policies' counts summed.
// Sync: one all-reduce of each worker's dense-sized gradient per step; local_sgd: one averaging
// per round, a round ending at every epoch's end (the policy is made per epoch: 50 steps per
// epoch in rounds of 4 are 13 averagings); async shares memory: nothing.
TEST(SparseTrain, TheEpochReportsCountTheExchangesOfEveryEpoch) {
  const SparseDataset data = Synthetic(600, 300, 10);
  SparseTrainOptions options{
      .mode = Mode::kSync, .num_workers = 3, .batch_size = 12, .epochs = 2, .lr = 0.5f};
  absl::StatusOr<SparseTrainResult> sync = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(sync.ok()) << sync.status();
  const CommunicationStats& c = sync->epochs.back().communication;
  EXPECT_EQ(c.exchanges, sync->updates);
  EXPECT_EQ(c.exchanges, 100);
  EXPECT_DOUBLE_EQ(c.bytes_per_worker, 100.0 * 300 * 4);
  EXPECT_FALSE(c.last_outer_step_norm.has_value());
  EXPECT_EQ(sync->epochs.front().communication.exchanges, 50);
  options.mode = Mode::kLocalSgd;
  options.mode_options.average_every = 4;
  absl::StatusOr<SparseTrainResult> local = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->epochs.back().communication.exchanges, 2 * 13);
  ASSERT_TRUE(local->epochs.back().communication.last_outer_step_norm.has_value());
  EXPECT_GT(*local->epochs.back().communication.last_outer_step_norm, 0.0);
  options.mode = Mode::kAsync;
  options.batch_size = 4;
  options.mode_options = {};
  absl::StatusOr<SparseTrainResult> async = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(async.ok()) << async.status();
  EXPECT_EQ(async->epochs.back().communication.exchanges, 0);
}

TEST(SparseTrain, SspWithBoundZeroAndTwoWorkersTrainsEveryExampleOnce) {
  // Uneven shards (7 examples over 2 workers): the worker that finishes first leaves the bound
  // (WorkerDone), so the other is never stranded.
  const SparseDataset data = Synthetic(7, 30, 3);
  SparseTrainOptions options{.mode = Mode::kSsp, .num_workers = 2, .epochs = 20};
  options.mode_options.staleness_bound = 0;
  absl::StatusOr<SparseTrainResult> result = TrainSparse(options, data, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->updates, 20 * 7);
}

TEST(SparseTrain, EveryModeLearnsTheSyntheticSetWithTwoWorkers) {
  const SparseDataset train = Synthetic(4000, 2000, 20, 1);
  for (Mode mode : kAllModes) {
    for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
      SCOPED_TRACE(::testing::Message() << ModeName(mode) << " " << LinearModelName(model));
      std::vector<int> epochs_seen;
      const SparseTrainOptions options{.model = model,
                                       .mode = mode,
                                       .num_workers = 2,
                                       .batch_size = mode == Mode::kCyclades ? 200
                                                     : SplitsGlobalBatch(mode) ? 4
                                                                               : 1,
                                       .epochs = 5,
                                       .lr = 0.5f,
                                       .lr_decay = 0.9f,
                                       .on_epoch = [&](const SparseEpochReport& r) {
                                         epochs_seen.push_back(r.epoch);
                                         return absl::OkStatus();
                                       }};
      absl::StatusOr<SparseTrainResult> result = TrainSparse(options, train, &train);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(epochs_seen, (std::vector<int>{1, 2, 3, 4, 5}));
      const SparseEpochReport& first = result->epochs.front();
      const SparseEpochReport& last = result->epochs.back();
      EXPECT_GT(last.train_accuracy, 0.85);
      EXPECT_LT(last.train_loss, first.train_loss);
      EXPECT_EQ(last.test_accuracy, last.train_accuracy);  // the same set
      EXPECT_FLOAT_EQ(last.lr, 0.5f * 0.9f * 0.9f * 0.9f * 0.9f);
    }
  }
}

TEST(SparseTrain, RoundRobinWithUnevenAndEmptyShardsTrainsEveryExampleOnce) {
  // 7 examples over 3 and over 9 workers (2 and 3 per shard; 9 leaves empty shards): a worker
  // leaving the rotation must never strand the others, and every example is one update.
  const SparseDataset data = Synthetic(7, 30, 3);
  for (int workers : {3, 9}) {
    for (int batch : {1, 2}) {
      // A batch larger than the largest shard (ceil(7 / 9) = 1) is refused, not cut.
      if (batch > (7 + workers - 1) / workers) continue;
      const SparseTrainOptions options{
          .mode = Mode::kRoundRobin, .num_workers = workers, .batch_size = batch, .epochs = 20};
      absl::StatusOr<SparseTrainResult> result = TrainSparse(options, data, nullptr);
      ASSERT_TRUE(result.ok()) << result.status();
      int64_t expected = 0;
      for (int w = 0; w < workers; ++w) {
        const int64_t shard = 7 * (w + 1) / workers - 7 * w / workers;
        expected += (shard + batch - 1) / batch;
      }
      EXPECT_EQ(result->updates, 20 * expected) << workers << " workers, batch " << batch;
    }
  }
}

TEST(SparseTrain, AnEpochCallbackErrorStopsTraining) {
  const SparseDataset data = Synthetic(100, 50, 5);
  int calls = 0;
  const SparseTrainOptions options{.epochs = 5, .on_epoch = [&](const SparseEpochReport&) {
                                     ++calls;
                                     return absl::CancelledError("stop");
                                   }};
  EXPECT_EQ(TrainSparse(options, data, nullptr).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
}

TEST(SparseTrain, BadOptionsAreRefusedByName) {
  const SparseDataset data = Synthetic(100, 50, 5);
  const auto refused = [&](SparseTrainOptions o, const std::string& name) {
    testing::ExpectError(TrainSparse(o, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
                         {name});
  };
  refused({.num_workers = 0}, "--workers=0");
  refused({.num_workers = 257}, "--workers=257");
  refused({.batch_size = 0}, "--batch_size=0");
  refused({.batch_size = 101},
          "--batch_size=101 is out of range [1, 100] (the training set's examples)");
  // A batch per worker larger than every worker's shard (34 of 100 examples over 3 workers) is
  // refused, not cut to the shard; in sync mode it is the global batch.
  for (Mode mode : {Mode::kAsync, Mode::kLocked, Mode::kRoundRobin, Mode::kSsp}) {
    testing::ExpectError(
        TrainSparse({.mode = mode, .num_workers = 3, .batch_size = 35}, data, nullptr).status(),
        absl::StatusCode::kInvalidArgument,
        {absl::StrFormat("--batch_size=35 is larger than a worker's share of the training set "
                         "(34 examples = 100 examples / 3 workers); in %s mode it is the batch "
                         "per worker, so it must be in [1, 34]",
                         ModeName(mode))});
    EXPECT_TRUE(
        TrainSparse({.mode = mode, .num_workers = 3, .batch_size = 34, .epochs = 1}, data, nullptr)
            .ok());
  }
  for (Mode mode : {Mode::kSync, Mode::kBackup, Mode::kLocalSgd}) {
    EXPECT_TRUE(
        TrainSparse({.mode = mode, .num_workers = 3, .batch_size = 35, .epochs = 1}, data, nullptr)
            .ok());
  }
  refused({.epochs = 0}, "--epochs=0");
  refused({.lr = 0.0f}, "--lr=0");
  refused({.lr = NAN}, "--lr");
  refused({.lr_decay = 1.5f}, "--lr_decay=1.5");
  refused({.weight_decay = -1.0f}, "--weight_decay=-1");
  SparseDataset wide = Synthetic(10, 60, 5);
  testing::ExpectError(TrainSparse({}, data, &wide).status(), absl::StatusCode::kInvalidArgument,
                       {"test set has 60 features", "50"});
  // The modes' options: the dense trainer's ranges, and only in the mode that reads them.
  const auto mode_refused = [&](Mode mode, ModeOptions mode_options, const std::string& why) {
    SparseTrainOptions o{.mode = mode, .num_workers = 2, .batch_size = 2};
    o.mode_options = mode_options;
    testing::ExpectError(TrainSparse(o, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
                         {why});
  };
  mode_refused(Mode::kSsp, {.staleness_bound = -1},
               "--staleness_bound=-1 is out of range [0, 1099511627776]");
  mode_refused(Mode::kBackup, {.backup_workers = 2},
               "--backup_workers=2 is out of range [0, 1] (fewer than the workers)");
  mode_refused(Mode::kLocalSgd, {.average_every = 0},
               "--average_every=0 is out of range [1, 1099511627776]");
  mode_refused(Mode::kAsync, {.staleness_bound = 5},
               "--staleness_bound=5 has no effect in async mode; it is for ssp mode (--mode=ssp)");
  mode_refused(Mode::kSync, {.backup_workers = 1},
               "--backup_workers=1 has no effect in sync mode; it is for backup mode "
               "(--mode=backup)");
  mode_refused(Mode::kSsp, {.average_every = 2},
               "--average_every=2 has no effect in ssp mode; it is for local_sgd mode "
               "(--mode=local_sgd)");
  // local_sgd splits each global batch into the workers' local batches: at least one each.
  testing::ExpectError(
      TrainSparse({.mode = Mode::kLocalSgd, .num_workers = 3, .batch_size = 2}, data, nullptr)
          .status(),
      absl::StatusCode::kInvalidArgument,
      {"--batch_size=2 is out of range [3, 100] in local_sgd mode (at least one example per "
       "worker: the global batch is split into the workers' local batches)"});
  EXPECT_EQ(*ParseMode("locked"), Mode::kLocked);
  EXPECT_EQ(*ParseMode("round_robin"), Mode::kRoundRobin);
  EXPECT_EQ(*ParseLinearModel("svm"), LinearModel::kHinge);
  testing::ExpectError(ParseLinearModel("mlp").status(), absl::StatusCode::kInvalidArgument,
                       {"--model=mlp", "logreg or svm"});
}

}  // namespace
}  // namespace hogwild::sparse
