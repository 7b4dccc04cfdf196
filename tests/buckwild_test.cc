// Buckwild! (sparse/buckwild.h): the stochastic rounding is unbiased (the mean of 2^20 draws
// within 5 standard errors plus the draw grid's 2^-24 of y, for values of both signs, below one
// step and beyond it), the fixed-point conversion round-trips exactly and saturates (the weights
// being delta * q), one step equals a double-precision reference drawing the same numbers, the
// model trains on the synthetic set to within a stated gap of float32 SGD (16 bits: 0.002 in
// log-loss, 8 bits: 0.02), with 2 workers too, a resume continues a run bitwise, and bad options are refused by name.
#include "sparse/buckwild.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sparse/linear_loss.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "tests/expect_error.h"
#include "tests/sparse_resume.h"

namespace hogwild::sparse {
namespace {

TEST(StochasticRounder, RoundingIsUnbiasedAndLandsOnANeighbour) {
  constexpr int kDraws = 1 << 20;
  for (const float y : {0.3f, -0.3f, 2.75f, -1.999f, 1e-4f, -5.5f, 7.0f, 0.5f}) {
    StochasticRounder rounder(/*seed=*/11, /*stream=*/3);
    const double lower = std::floor(static_cast<double>(y));
    double sum = 0.0;
    for (int n = 0; n < kDraws; ++n) {
      const float r = rounder.Round(y);
      ASSERT_TRUE(r == lower || r == lower + 1.0) << y << " rounded to " << r;
      sum += r;
    }
    const double f = y - lower;
    const double bound = 5.0 * std::sqrt(f * (1.0 - f) / kDraws) + 0x1p-24;
    EXPECT_NEAR(sum / kDraws, y, bound) << "y = " << y;
  }
}

TEST(StochasticRounder, StreamsDiffer) {
  StochasticRounder a(1, 0), b(1, 1), c(2, 0);
  int same_ab = 0, same_ac = 0;
  for (int n = 0; n < 1000; ++n) {
    const float ua = a.Uniform();
    same_ab += ua == b.Uniform();
    same_ac += ua == c.Uniform();
  }
  EXPECT_LT(same_ab, 5);
  EXPECT_LT(same_ac, 5);
}

TEST(FixedPoint, ConversionRoundTripsAndSaturates) {
  for (const FixedPointFormat format : {FixedPointFormat{.bits = 8, .range = 8.0f},
                                        FixedPointFormat{.bits = 8, .range = 3.0f},
                                        FixedPointFormat{.bits = 16, .range = 0.7f}}) {
    const int lo = -(1 << (format.bits - 1)), hi = (1 << (format.bits - 1)) - 1;
    std::mt19937 rng(5);
    std::vector<int16_t> q(1000);
    for (int16_t& v : q) v = static_cast<int16_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
    q[0] = static_cast<int16_t>(lo);
    q[1] = static_cast<int16_t>(hi);
    std::vector<float> w(q.size());
    std::vector<int16_t> back(q.size());
    if (format.bits == 8) {
      std::vector<int8_t> q8(q.begin(), q.end()), back8(q.size());
      FromFixedPoint<int8_t>(format, q8.data(), absl::MakeSpan(w));
      ToFixedPoint<int8_t>(format, w, back8.data());
      back.assign(back8.begin(), back8.end());
    } else {
      FromFixedPoint<int16_t>(format, q.data(), absl::MakeSpan(w));
      ToFixedPoint<int16_t>(format, w, back.data());
    }
    EXPECT_EQ(back, q) << format.bits << " bits, range " << format.range;
    // Each weight is delta * q rounded to float32 (exact when delta is a power of two).
    for (size_t j = 0; j < q.size(); ++j) {
      ASSERT_EQ(w[j], static_cast<float>(static_cast<double>(format.step()) * q[j]));
    }
    EXPECT_FLOAT_EQ(w[0], -format.range);
  }
  // Beyond the range: clamped, both ways.
  const FixedPointFormat format{.bits = 8, .range = 8.0f};
  const std::vector<float> far = {100.0f, -100.0f, 7.99f, -8.0f};
  std::vector<int8_t> q(far.size());
  ToFixedPoint<int8_t>(format, far, q.data());
  EXPECT_EQ(q, (std::vector<int8_t>{127, -128, 127, -128}));
  EXPECT_EQ(SaturatingAdd<int8_t>(126, 5.0f), 127);
  EXPECT_EQ(SaturatingAdd<int8_t>(-127, -3.0f), -128);
  EXPECT_EQ(SaturatingAdd<int16_t>(32000, 1000.0f), 32767);
  EXPECT_EQ(SaturatingAdd<int16_t>(5, -2.0f), 3);
}

SparseDataset Synthetic(int64_t n, int64_t d, int nnz) {
  absl::StatusOr<SyntheticData> out = GenerateRcv1Like(
      {.num_examples = n, .num_features = d, .mean_nnz = nnz, .noise_std = 0.1, .seed = 3});
  EXPECT_TRUE(out.ok()) << out.status();
  return std::move(out->data);
}

// One step against the definition in double: q_j + floor(y_j) + [u_j < y_j - floor(y_j)],
// y_j = -lr (s x_j + wd delta q_j) / delta, saturated, with the same draws u_j.
template <typename T>
void CheckOneStep(LinearModel model, int bits) {
  const SparseDataset data = Synthetic(20, 40, 6);
  const FixedPointFormat format{.bits = bits, .range = 2.0f};
  const float lr = bits == 8 ? 8.0f : 0.8f, wd = 0.05f;  // 8 bits: steps that reach the ends
  std::vector<T> q(40);
  std::mt19937 rng(9);
  // 8 bits: anywhere in the range, so that some steps saturate.
  const int spread = bits == 8 ? 127 : 20;
  for (T& v : q) v = static_cast<T>(std::uniform_int_distribution<int>(-spread, spread)(rng));
  int64_t saturated = 0, expected_saturated = 0;
  for (int64_t i = 0; i < 20; ++i) {
    std::vector<T> expected = q;
    const double delta = format.step();
    double margin = 0.0;
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      margin += delta * q[data.indices[k]] * data.values[k];
    }
    const float slope = LinearLoss(model, static_cast<float>(margin), data.labels[i]).slope;
    StochasticRounder draws(4, static_cast<uint64_t>(i));
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      const int32_t j = data.indices[k];
      const double y = -lr * (slope * static_cast<double>(data.values[k]) + wd * delta * q[j]) /
                       delta;
      const double lower = std::floor(y);
      const double r = lower + (draws.Uniform() < y - lower ? 1.0 : 0.0);
      const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
      expected_saturated += q[j] + r < lo || q[j] + r > hi;
      expected[j] = static_cast<T>(std::clamp<double>(q[j] + r, lo, hi));
    }
    StochasticRounder rounder(4, static_cast<uint64_t>(i));
    FixedPointSgdStep<T>(model, format, lr, wd, data, i, q.data(), rounder, saturated);
    ASSERT_EQ(q, expected) << LinearModelName(model) << ", " << bits << " bits, example " << i;
    ASSERT_EQ(saturated, expected_saturated);
  }
  if (bits == 8) {
    EXPECT_GT(saturated, 0) << "the step's saturation went untested";
  }
}

TEST(FixedPointSgdStep, EqualsTheDefinitionInDouble) {
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    CheckOneStep<int8_t>(model, 8);
    CheckOneStep<int16_t>(model, 16);
  }
}

double FinalLoss(const SparseTrainOptions& o, const SparseDataset& data) {
  absl::StatusOr<SparseTrainResult> r = TrainSparse(o, data, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->epochs.back().train_loss : 1e9;
}

TEST(Buckwild, TrainsToWithinAStatedGapOfFloat) {
  const SparseDataset data = Synthetic(20000, 5000, 40);
  for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
    const SparseTrainOptions base{.model = model, .num_workers = 1, .epochs = 4};
    const double float_loss = FinalLoss(base, data);
    for (const int bits : {16, 8}) {
      for (const int workers : {1, 2}) {
        SparseTrainOptions o = base;
        o.mode = Mode::kBuckwild;
        o.num_workers = workers;
        o.mode_options.fixed_point_bits = bits;
        const double loss = FinalLoss(o, data);
        // 16 bits is float's result within noise; 8 bits pays for its step of 1/16.
        EXPECT_NEAR(loss, float_loss, bits == 16 ? 0.002 : 0.02)
            << LinearModelName(model) << ", " << bits << " bits, " << workers << " workers";
        // The rounding noise may help or hurt a little, but the run must have learnt.
        EXPECT_LT(loss, 0.8 * FinalLoss({.model = model, .num_workers = 1, .epochs = 1,
                                         .lr = 1e-6f},
                                        data));
      }
    }
  }
}

TEST(Buckwild, ReportsTheUpdatesItSaturates) {
  const SparseDataset data = Synthetic(3000, 800, 20);
  SparseTrainOptions o{.mode = Mode::kBuckwild, .num_workers = 1, .epochs = 2};
  absl::StatusOr<SparseTrainResult> roomy = TrainSparse(o, data, nullptr);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  o.mode_options.fixed_point_range = 0.25f;  // below the weights this set learns
  absl::StatusOr<SparseTrainResult> cramped = TrainSparse(o, data, nullptr);
  ASSERT_TRUE(cramped.ok()) << cramped.status();
  EXPECT_EQ(roomy->epochs.back().saturated_updates, 0);
  EXPECT_GT(cramped->epochs.back().saturated_updates, cramped->epochs.front().saturated_updates);
  EXPECT_GT(cramped->epochs.front().saturated_updates, 0);
  // Every weight within the range: the clamped ones at its ends.
  for (float w : cramped->weights) ASSERT_LE(std::fabs(w), 0.25f);
}

TEST(Buckwild, OneWorkerIsDeterministicAndResumesBitwise) {
  const SparseDataset data = Synthetic(3000, 800, 20);
  SparseTrainOptions o{.mode = Mode::kBuckwild, .num_workers = 1, .epochs = 4, .lr_decay = 0.8f};
  o.mode_options.fixed_point_range = 4.0f;
  absl::StatusOr<SparseTrainResult> straight = TrainSparse(o, data, nullptr);
  ASSERT_TRUE(straight.ok()) << straight.status();
  absl::StatusOr<SparseTrainResult> again = TrainSparse(o, data, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->weights, straight->weights);
  const SparseTrainOptions rest = testing::ExpectResumeIsBitwise(
      o, data, /*first_epochs=*/2, ::testing::TempDir() + "/buckwild_resume");
  // Another width is another run: refused, naming both.
  SparseTrainOptions wider = rest;
  wider.mode_options.fixed_point_bits = 16;
  testing::ExpectError(TrainSparse(wider, data, nullptr).status(),
                       absl::StatusCode::kFailedPrecondition,
                       {"the checkpoint has", "fixed_point_bits=8", "this run", "fixed_point_bits=16"});
}

TEST(Buckwild, RefusesBadOptionsByName) {
  const SparseDataset data = Synthetic(100, 50, 5);
  SparseTrainOptions o{.mode = Mode::kBuckwild, .num_workers = 2, .batch_size = 2};
  testing::ExpectError(TrainSparse(o, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
                       {"--batch_size=2: buckwild mode steps one example at a time"});
  o.batch_size = 1;
  o.mode_options.fixed_point_bits = 12;
  testing::ExpectError(TrainSparse(o, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
                       {"--fixed_point_bits=12 is not a model width of buckwild mode: 8 or 16"});
  o.mode_options.fixed_point_bits = 8;
  for (const float range : {0.0f, -1.0f, std::nanf(""), 1e6f}) {
    o.mode_options.fixed_point_range = range;
    testing::ExpectError(TrainSparse(o, data, nullptr).status(),
                         absl::StatusCode::kInvalidArgument,
                         {"--fixed_point_range=", "is out of range (0, 65536]"});
  }
  SparseTrainOptions async{.mode = Mode::kAsync};
  async.mode_options.fixed_point_bits = 16;
  testing::ExpectError(TrainSparse(async, data, nullptr).status(),
                       absl::StatusCode::kInvalidArgument,
                       {"(--fixed_point_bits, --fixed_point_range) has no effect in async mode; "
                        "it is for buckwild mode"});
}

}  // namespace
}  // namespace hogwild::sparse
