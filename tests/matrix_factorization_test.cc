// Ratings CSV and matrix factorization (sparse/ratings.h, sparse/matrix_factorization.h): the
// reader's syntax and refusals, one worker is sequential SGD bitwise, Hogwild! recovers a
// planted low-rank matrix, MovieLens test RMSE falls below the global-mean predictor's.
#include "sparse/matrix_factorization.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/splitmix64.h"
#include "core/text_lines.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sparse/ratings.h"
#include "tests/expect_error.h"

namespace hogwild::sparse {
namespace {

using ::hogwild::testing::ExpectError;

TEST(RatingsCsv, ParsesHeaderExtraFieldsBlankLinesAndRemapsIds) {
  absl::StatusOr<Ratings> r = ParseRatingsCsv(
      "\"userId\",\"movieId\",\"rating\"\r\n"
      "7,1029,3.5,1260759179\n"
      "\n"
      " 7 , 31 , 2\r\n"
      "12,1029,+4\n",
      "r.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->num_users, 2);
  EXPECT_EQ(r->num_items, 2);
  EXPECT_EQ(r->users, (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(r->items, (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(r->values, (std::vector<float>{3.5f, 2.0f, 4.0f}));
}

TEST(RatingsCsv, RefusalsNameTheLineAndTheReason) {
  ExpectError(ParseRatingsCsv("1,2,3\nx,2,3\n", "r.csv").status(),
              absl::StatusCode::kInvalidArgument, {"r.csv:2:", "user id 'x'"});
  ExpectError(ParseRatingsCsv("1,2,3\n1,2\n", "r.csv").status(), absl::StatusCode::kInvalidArgument,
              {"r.csv:2:", "expected user,item,rating"});
  ExpectError(ParseRatingsCsv("1,2.5,3\n", "r.csv").status(), absl::StatusCode::kInvalidArgument,
              {"r.csv:1:", "item id '2.5'"});
  ExpectError(ParseRatingsCsv("1,2,nan\n", "r.csv").status(), absl::StatusCode::kInvalidArgument,
              {"r.csv:1:", "rating 'nan'"});
  ExpectError(ParseRatingsCsv("userId,movieId,rating\n\n", "r.csv").status(),
              absl::StatusCode::kInvalidArgument, {"r.csv", "no ratings"});
  // A LIBSVM file is not taken for a header and a puzzling second line.
  ExpectError(ParseRatingsCsv("+1 3:0.5 7:1\n-1 2:1\n", "r.svm").status(),
              absl::StatusCode::kInvalidArgument, {"r.svm:1:", "looks like LIBSVM"});
  ExpectError(ReadRatingsFile("/nonexistent/ratings.csv").status(), absl::StatusCode::kNotFound,
              {"/nonexistent/ratings.csv"});
}

// Every text reader has the one line cap (core/text_lines.h), the LIBSVM reader's: a rating
// padded past it is refused, in memory and from a file, where the reader keeps at most the cap
// plus one byte of the line (a 300 MB line in a small gzip does not reach memory).
TEST(RatingsCsv, ALineLongerThanTheTextLineCapIsRefused) {
  const std::string text = "1,2,3\n1,3," + std::string(kMaxTextLineBytes, ' ') + "4\n";
  ExpectError(ParseRatingsCsv(text, "r.csv").status(), absl::StatusCode::kInvalidArgument,
              {"r.csv:2: line longer than 16777216 bytes"});
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "long_line.csv").string();
  std::ofstream(path) << text;
  ExpectError(ReadRatingsFile(path).status(), absl::StatusCode::kInvalidArgument,
              {path + ":2: line longer than 16777216 bytes"});
  std::ofstream(path) << "1,2,3\n1,3,4\n";
  EXPECT_TRUE(ReadRatingsFile(path).ok());
}

// U x I ratings of a planted rank-3 matrix plus noise, each pair kept with probability `density`.
Ratings Planted(int users, int items, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<float> a(users * 3), b(items * 3);
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  Ratings r;
  r.num_users = users;
  r.num_items = items;
  for (int u = 0; u < users; ++u) {
    for (int i = 0; i < items; ++i) {
      if (uniform(rng) >= density) continue;
      float v = 3.0f + 0.1f * normal(rng);
      for (int f = 0; f < 3; ++f) v += 0.6f * a[u * 3 + f] * b[i * 3 + f];
      r.users.push_back(u);
      r.items.push_back(i);
      r.values.push_back(v);
    }
  }
  return r;
}

// Sequential minibatch SGD on the factors written from the header's definitions (init, mean,
// order, step) with none of the trainer's code: batches of `batch` ratings in the epoch's order,
// each rating's gradient (e / batch) q_i and (e / batch) p_u from the factors as the batch began,
// summed rating by rating in float, then w_j <- sgd(w_j, g_j) on the touched coordinates.
// Batch 1: the paper's step.
std::vector<float> SequentialMf(const MfOptions& o, const Ratings& ratings, int batch) {
  const int k = o.rank;
  std::vector<float> w((ratings.num_users + ratings.num_items) * k);
  for (size_t j = 0; j < w.size(); ++j) {
    const uint64_t bits = SplitMix64(SplitMix64(o.seed) ^ j);
    w[j] = static_cast<float>((static_cast<double>(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0) * 0.1);
  }
  double sum = 0.0;
  for (float v : ratings.values) sum += v;
  const float mean = static_cast<float>(sum / ratings.size());
  std::vector<int64_t> order(ratings.size());
  std::vector<float> g(w.size(), 0.0f);
  std::vector<bool> touched(w.size(), false);
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), int64_t{0});
    std::mt19937_64 rng(SplitMix64(o.seed) + static_cast<uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), rng);
    const SgdMomentumFn exact{
        .lr = static_cast<float>(static_cast<double>(o.lr) *
                                 std::pow(static_cast<double>(o.lr_decay), epoch)),
        .momentum = 0.0f,
        .weight_decay = o.weight_decay};
    for (int64_t start = 0; start < ratings.size(); start += batch) {
      const int64_t stop = std::min<int64_t>(ratings.size(), start + batch);
      const float scale = 1.0f / static_cast<float>(stop - start);
      for (int64_t x = start; x < stop; ++x) {
        const int64_t r = order[x];
        const int64_t p = int64_t{ratings.users[r]} * k;
        const int64_t q = (ratings.num_users + ratings.items[r]) * k;
        float prediction = mean;
        for (int f = 0; f < k; ++f) prediction += w[p + f] * w[q + f];
        const float c = (prediction - ratings.values[r]) * scale;
        for (int f = 0; f < k; ++f) {
          g[p + f] += c * w[q + f];
          g[q + f] += c * w[p + f];
          touched[p + f] = touched[q + f] = true;
        }
      }
      float unused = 0.0f;
      for (size_t j = 0; j < w.size(); ++j) {
        if (touched[j]) w[j] = exact(w[j], g[j], unused);
        g[j] = 0.0f;
        touched[j] = false;
      }
    }
  }
  return w;
}

TEST(MatrixFactorization, OneWorkerIsSequentialSgdBitwise) {
  const Ratings ratings = Planted(40, 30, 0.3, 1);
  // cyclades applies a round's components largest first: tests/cyclades_test.cc.
  for (Mode mode : kPolicyModes) {
    for (int batch : {1, 5}) {
      SCOPED_TRACE(::testing::Message() << ModeName(mode) << " batch " << batch);
      const MfOptions options{.rank = 5,
                              .mode = mode,
                              .num_workers = 1,
                              .batch_size = batch,
                              .epochs = 3,
                              .lr = 0.03f,
                              .lr_decay = 0.9f,
                              .weight_decay = 0.02f,
                              .seed = 9};
      absl::StatusOr<MfResult> result = TrainMatrixFactorization(options, ratings, nullptr);
      ASSERT_TRUE(result.ok()) << result.status();
      double sum = 0.0;
      for (float v : ratings.values) sum += v;
      EXPECT_EQ(result->mean, static_cast<float>(sum / ratings.size()));
      EXPECT_EQ(result->factors, SequentialMf(options, ratings, batch));
      EXPECT_EQ(result->updates, 3 * ((ratings.size() + batch - 1) / batch));
    }
  }
}

// The largest difference between two factor vectors, relative to the largest factor of `b`.
double RelativeDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, norm = 0.0;
  for (size_t j = 0; j < b.size(); ++j) {
    diff = std::max(diff, std::fabs(double{a[j]} - b[j]));
    norm = std::max(norm, std::fabs(double{b[j]}));
  }
  return diff / norm;
}

// The first multiple of 12 ratings of a planted matrix: global batches of 12 split evenly over
// 1, 2, 3 or 4 workers.
Ratings EvenRatings() {
  Ratings r = Planted(40, 30, 0.3, 4);
  const size_t n = r.values.size() / 12 * 12;
  r.users.resize(n);
  r.items.resize(n);
  r.values.resize(n);
  return r;
}

TEST(MatrixFactorization, SyncWithThreeWorkersIsOneWorkerUpToFloatRounding) {
  const Ratings ratings = EvenRatings();
  MfOptions options{
      .rank = 4, .mode = Mode::kSync, .num_workers = 1, .batch_size = 12, .epochs = 3};
  absl::StatusOr<MfResult> one = TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(one.ok()) << one.status();
  options.num_workers = 3;
  absl::StatusOr<MfResult> three = TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_LT(RelativeDifference(three->factors, one->factors), 1e-5);
  EXPECT_EQ(three->updates, one->updates);
}

TEST(MatrixFactorization, BackupWithoutBackupWorkersIsSyncBitwise) {
  const Ratings ratings = EvenRatings();
  // No weight decay: sync decays the touched factors only, backup every factor.
  MfOptions options{.rank = 4,
                    .mode = Mode::kSync,
                    .num_workers = 3,
                    .batch_size = 12,
                    .epochs = 3,
                    .weight_decay = 0.0f};
  absl::StatusOr<MfResult> sync = TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(sync.ok()) << sync.status();
  options.mode = Mode::kBackup;
  absl::StatusOr<MfResult> backup = TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(backup.ok()) << backup.status();
  EXPECT_EQ(backup->factors, sync->factors);
}

TEST(MatrixFactorization, LocalSgdAveragingEveryStepIsSyncUpToFloatRounding) {
  const Ratings ratings = EvenRatings();
  MfOptions options{.rank = 4,
                    .mode = Mode::kSync,
                    .num_workers = 3,
                    .batch_size = 12,
                    .epochs = 3,
                    .weight_decay = 0.0f};
  absl::StatusOr<MfResult> sync = TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(sync.ok()) << sync.status();
  options.mode = Mode::kLocalSgd;
  options.mode_options.average_every = 1;
  absl::StatusOr<MfResult> local = TrainMatrixFactorization(options, ratings, nullptr);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_LT(RelativeDifference(local->factors, sync->factors), 1e-5);
}

TEST(MatrixFactorization, EveryModeRecoversAPlantedLowRankMatrix) {
  const RatingsSplit split = SplitRatings(Planted(300, 200, 0.3, 2), 1);
  ASSERT_GT(split.test.size(), 1000);
  for (Mode mode : kAllModes) {
    // buckwild's fixed-point model is the linear models' (its refusal: capabilities_matrix_test).
    if (!CheckSupported(WorkloadKind::kMatrixFactorization, mode, Substrate::kThreads).ok()) {
      continue;
    }
    // Async and locked take the paper's one rating per step. The modes that wait for each other
    // (a barrier, a turn or the staleness bound: a thread hand-over each) take 8 ratings per
    // worker per step (sync, backup, local_sgd: a global batch of 16), at 8 times the rate for
    // the mean of 8 ratings, and an eighth of the weight decay, which a step applies once to
    // each coordinate it touches.
    // cyclades applies each rating alone, in rounds of 64.
    const bool global = SplitsGlobalBatch(mode);
    const int per_worker =
        mode == Mode::kAsync || mode == Mode::kLocked || mode == Mode::kCyclades ? 1 : 8;
    const MfOptions options{.rank = 8,
                            .mode = mode,
                            .num_workers = 2,
                            .batch_size = mode == Mode::kCyclades ? 64
                                          : global                ? 2 * per_worker
                                                                  : per_worker,
                            .epochs = 20,
                            .lr = 0.02f * per_worker,
                            .weight_decay = 0.02f / per_worker};
    absl::StatusOr<MfResult> result = TrainMatrixFactorization(options, split.train, &split.test);
    ASSERT_TRUE(result.ok()) << result.status();
    const double baseline = GlobalMeanRmse(result->mean, split.test);
    const double rmse = *result->epochs.back().test_loss;
    EXPECT_LT(rmse, 0.5 * baseline) << ModeName(mode) << ": baseline " << baseline;
  }
}

TEST(MatrixFactorization, MovieLensTestRmseBeatsTheGlobalMean) {
  if (!std::filesystem::exists(kMovieLensPath)) {
    GTEST_SKIP() << kMovieLensPath << " is missing: run tools/setup.sh --movielens";
  }
  absl::StatusOr<Ratings> all = ReadRatingsFile(kMovieLensPath);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 100004);
  const RatingsSplit split = SplitRatings(*all, 1);
  const MfOptions options{
      .rank = 16, .num_workers = 2, .epochs = 10, .lr = 0.02f, .weight_decay = 0.05f};
  absl::StatusOr<MfResult> result = TrainMatrixFactorization(options, split.train, &split.test);
  ASSERT_TRUE(result.ok()) << result.status();
  const double baseline = GlobalMeanRmse(result->mean, split.test);
  const double rmse = *result->epochs.back().test_loss;
  std::printf("MovieLens: global mean RMSE %.4f, matrix factorization %.4f\n", baseline, rmse);
  EXPECT_LT(rmse, baseline - 0.05);
}

TEST(MatrixFactorization, BadOptionsAreRefusedByName) {
  const Ratings ratings = Planted(10, 10, 0.5, 3);
  ExpectError(TrainMatrixFactorization({.rank = 0}, ratings, nullptr).status(),
              absl::StatusCode::kInvalidArgument, {"--rank=0"});
  // The batch and the modes' options: the sparse linear trainer's rules (policy_workers.h).
  ExpectError(
      TrainMatrixFactorization({.batch_size = 0}, ratings, nullptr).status(),
      absl::StatusCode::kInvalidArgument,
      {absl::StrFormat("--batch_size=0 is out of range [1, %d] (the training set's ratings)",
                       ratings.size())});
  ExpectError(
      TrainMatrixFactorization({.mode = Mode::kLocked, .num_workers = 2, .batch_size = 30}, ratings,
                               nullptr)
          .status(),
      absl::StatusCode::kInvalidArgument,
      {absl::StrFormat("--batch_size=30 is larger than a worker's share of the training set (%d "
                       "ratings = %d ratings / 2 workers); in locked mode it is the batch per "
                       "worker, so it must be in [1, %d]",
                       (ratings.size() + 1) / 2, ratings.size(), (ratings.size() + 1) / 2)});
  ExpectError(TrainMatrixFactorization(
                  {.mode = Mode::kBackup, .num_workers = 2, .mode_options = {.backup_workers = 2}},
                  ratings, nullptr)
                  .status(),
              absl::StatusCode::kInvalidArgument,
              {"--backup_workers=2 is out of range [0, 1] (fewer than the workers)"});
  // Every mode runs: the table (core/capabilities.h) has no refusal for matrix factorization on
  // threads.
  EXPECT_TRUE(TrainMatrixFactorization({.mode = Mode::kSync, .epochs = 1}, ratings, nullptr).ok());
  ExpectError(TrainMatrixFactorization({.lr = -1.0f}, ratings, nullptr).status(),
              absl::StatusCode::kInvalidArgument, {"--lr=-1"});
  Ratings other = ratings;
  other.num_users = 11;
  ExpectError(TrainMatrixFactorization({}, ratings, &other).status(),
              absl::StatusCode::kInvalidArgument, {"11 users"});
}

// Ratings built by hand (the Python module's arrays) meet the CSV reader's rules: a rating that
// is not finite, or an index outside [0, U) or [0, I), is refused before training.
TEST(MatrixFactorization, RatingsBuiltByHandAreValidated) {
  const Ratings ratings = Planted(10, 10, 0.5, 3);
  for (const float bad : {NAN, INFINITY, -INFINITY}) {
    Ratings r = ratings;
    r.values[3] = bad;
    ExpectError(
        TrainMatrixFactorization({}, r, nullptr).status(), absl::StatusCode::kInvalidArgument,
        {absl::StrFormat("training ratings: rating 3 (user %d, item %d) is %g; every rating "
                         "must be a finite number",
                         r.users[3], r.items[3], bad)});
    ExpectError(TrainMatrixFactorization({}, ratings, &r).status(),
                absl::StatusCode::kInvalidArgument, {"test ratings: rating 3"});
  }
  Ratings r = ratings;
  r.items[1] = 10;
  ExpectError(TrainMatrixFactorization({}, r, nullptr).status(), absl::StatusCode::kInvalidArgument,
              {absl::StrFormat("training ratings: rating 1 has user %d and item 10; expected a "
                               "user in [0, 10) and an item in [0, 10)",
                               r.users[1])});
  r = ratings;
  r.values.pop_back();
  ExpectError(TrainMatrixFactorization({}, r, nullptr).status(), absl::StatusCode::kInvalidArgument,
              {"training ratings:", "one of each per rating"});
}

}  // namespace
}  // namespace hogwild::sparse
