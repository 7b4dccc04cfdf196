// The MaxPool2d layer on the CPU backend against float64 references: forward against the direct
// window maximum; backward against central finite differences of the float64 reference of
// L = sum(r * y), on inputs whose values are at least 4 * eps apart so no maximum changes under
// the perturbation. Non-overlapping, overlapping, padded, strided and non-square cases; the
// tie rule; the shape errors.
#include "trainer/layers/max_pool2d.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/conv_reference.h"
#include "trainer/layers/relu.h"

namespace hogwild {
namespace {

using testing::Dot;
using testing::RandomValues;
using testing::ReferenceMaxPool2d;
using testing::ToFloat;

struct PoolCase {
  std::string name;
  int64_t batch, channels, height, width, window, stride, pad;
};

std::ostream& operator<<(std::ostream& os, const PoolCase& c) { return os << c.name; }

// A permutation of k * 0.01 (k = 0, 1, ...) minus an offset: distinct values 0.01 apart, exact
// enough in float32 for the comparisons below.
std::vector<double> DistinctValues(int64_t n, uint64_t seed) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
  for (double& d : v) d = static_cast<float>(d * 0.01 - 0.005 * n);
  return v;
}

class MaxPool2dLayerTest : public ::testing::TestWithParam<PoolCase> {
 protected:
  void SetUp() override {
    const PoolCase& c = GetParam();
    auto layer = MaxPool2d::Create({.channels = c.channels,
                                    .in_height = c.height,
                                    .in_width = c.width,
                                    .window = c.window,
                                    .stride = c.stride,
                                    .pad = c.pad});
    ASSERT_TRUE(layer.ok()) << layer.status();
    layer_ = std::move(*layer);
    shape_ = Pool2dShape{.batch = c.batch,
                         .channels = c.channels,
                         .in_height = c.height,
                         .in_width = c.width,
                         .window_height = c.window,
                         .window_width = c.window,
                         .stride_height = c.stride,
                         .stride_width = c.stride,
                         .pad_height = c.pad,
                         .pad_width = c.pad};
    x_ = DistinctValues(c.batch * shape_.in_size(), 1);
  }

  std::unique_ptr<MaxPool2d> layer_;
  Pool2dShape shape_;
  std::vector<double> x_;
  CpuBackend backend_;
};

TEST_P(MaxPool2dLayerTest, ForwardIsTheWindowMaximum) {
  std::vector<float> y(shape_.batch * shape_.out_size(), std::nanf(""));
  ASSERT_TRUE(layer_->Forward(backend_, shape_.batch, nullptr, ToFloat(x_).data(), y.data()).ok());
  const std::vector<double> ref = ReferenceMaxPool2d(shape_, x_);
  ASSERT_EQ(y.size(), ref.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], static_cast<float>(ref[i])) << i;
}

TEST_P(MaxPool2dLayerTest, BackwardMatchesFiniteDifferencesOfFloat64Reference) {
  const std::vector<double> r = RandomValues(shape_.batch * shape_.out_size(), 3);
  const std::vector<float> xf = ToFloat(x_), rf = ToFloat(r);
  std::vector<float> y(r.size()), dx(x_.size(), std::nanf(""));
  ASSERT_TRUE(layer_->Forward(backend_, shape_.batch, nullptr, xf.data(), y.data()).ok());
  ASSERT_TRUE(layer_
                  ->Backward(backend_, shape_.batch, nullptr, xf.data(), y.data(), rf.data(),
                             nullptr, dx.data())
                  .ok());
  constexpr double kEps = 1e-3;  // values are 1e-2 apart: no window's maximum moves
  std::vector<double> x = x_;
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + kEps;
    const double up = Dot(r, ReferenceMaxPool2d(shape_, x));
    x[i] = keep - kEps;
    const double down = Dot(r, ReferenceMaxPool2d(shape_, x));
    x[i] = keep;
    // Overlapping windows add up to window^2 float32 values of r.
    ASSERT_NEAR(dx[i], (up - down) / (2 * kEps), 1e-5) << "dx[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MaxPool2dLayerTest,
    ::testing::Values(PoolCase{"w2_s2_lenet", 2, 3, 6, 6, 2, 2, 0},
                      PoolCase{"w2_s2_four_lanes_and_a_tail", 2, 3, 10, 18, 2, 2, 0},
                      PoolCase{"w2_s2_lanes_odd_height_and_width", 1, 2, 9, 19, 2, 2, 0},
                      PoolCase{"non_square_odd_floor", 2, 2, 7, 5, 2, 2, 0},
                      PoolCase{"overlapping_w3_s1", 1, 2, 5, 6, 3, 1, 0},
                      PoolCase{"padded_w3_s2_p1_non_square", 2, 2, 7, 4, 3, 2, 1},
                      PoolCase{"stride_larger_than_window", 1, 1, 9, 8, 2, 3, 0}),
    [](const ::testing::TestParamInfo<PoolCase>& info) { return info.param.name; });

TEST(CpuMaxPool2d, TiesGoToTheFirstMaximumInRowMajorOrder) {
  const Pool2dShape s{.batch = 1,
                      .channels = 1,
                      .in_height = 4,
                      .in_width = 4,
                      .window_height = 2,
                      .window_width = 2,
                      .stride_height = 2,
                      .stride_width = 2};
  CpuBackend backend;
  const std::vector<float> x(16, 1.0f), dy = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> y(4), dx(16, std::nanf(""));
  ASSERT_TRUE(backend.MaxPool2dForward(s, x.data(), y.data()).ok());
  ASSERT_TRUE(backend.MaxPool2dBackward(s, x.data(), y.data(), dy.data(), dx.data()).ok());
  const std::vector<float> expected = {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0};
  EXPECT_EQ(dx, expected);
}

// The 2x2 stride-2 pool's rule on every window of {0, 1, -inf, NaN}^4 (256 windows, 4 lanes at a
// time and one at a time, an odd last row and column in no window) against the rule written out:
// the maximum starts at -inf and moves on a strict `>` in row-major order; the gradient goes to
// the element that last moved it, to the first element when none did.
TEST(CpuMaxPool2d, PairPoolFollowsTheRuleOnEveryTieAndNanPattern) {
  constexpr int64_t kWindowsPerRow = 7, kWindows = 256;
  constexpr int64_t kRows = (kWindows + kWindowsPerRow - 1) / kWindowsPerRow;
  const Pool2dShape s{.batch = 1,
                      .channels = 1,
                      .in_height = 2 * kRows + 1,
                      .in_width = 2 * kWindowsPerRow + 1,
                      .window_height = 2,
                      .window_width = 2,
                      .stride_height = 2,
                      .stride_width = 2};
  const float kValues[4] = {0.0f, 1.0f, -std::numeric_limits<float>::infinity(), std::nanf("")};
  std::vector<float> x(s.in_size(), 5.0f), dy(s.out_size()), expected_y(s.out_size()),
      expected_dx(s.in_size(), 0.0f);
  for (int64_t o = 0; o < s.out_size(); ++o) {
    const int64_t pattern = o % kWindows;
    const int64_t oh = o / kWindowsPerRow, ow = o % kWindowsPerRow;
    const int64_t at[4] = {2 * oh * s.in_width + 2 * ow, 2 * oh * s.in_width + 2 * ow + 1,
                           (2 * oh + 1) * s.in_width + 2 * ow,
                           (2 * oh + 1) * s.in_width + 2 * ow + 1};
    float best = -std::numeric_limits<float>::infinity();
    int64_t best_k = 0;
    for (int64_t k = 0; k < 4; ++k) {
      const float v = kValues[(pattern >> (2 * k)) & 3];
      x[at[k]] = v;
      if (v > best) best = v, best_k = k;
    }
    dy[o] = static_cast<float>(o + 1);
    expected_y[o] = best;
    expected_dx[at[best_k]] = dy[o];
  }
  CpuBackend backend;
  std::vector<float> y(s.out_size(), std::nanf("")), dx(s.in_size(), std::nanf(""));
  ASSERT_TRUE(backend.MaxPool2dForward(s, x.data(), y.data()).ok());
  ASSERT_TRUE(backend.MaxPool2dBackward(s, x.data(), y.data(), dy.data(), dx.data()).ok());
  EXPECT_EQ(y, expected_y);
  EXPECT_EQ(dx, expected_dx);
}

// The CNN computes ReLU + max-pool as max-pool + ReLU (trainer/model/model.cc): both orders give
// the same y and dx bit for bit, on values with many negatives, zeros and ties, for the 2x2
// stride-2 pool and a general (overlapping, padded) one.
TEST(CpuMaxPool2d, ReluThenPoolEqualsPoolThenReluBitwise) {
  for (const int64_t window : {2, 3}) {
    const int64_t stride = 2, pad = window == 3 ? 1 : 0;
    auto pool = MaxPool2d::Create({.channels = 3,
                                   .in_height = 10,
                                   .in_width = 14,
                                   .window = window,
                                   .stride = stride,
                                   .pad = pad});
    ASSERT_TRUE(pool.ok()) << pool.status();
    const Shape in = (*pool)->input_shape(), out = (*pool)->output_shape();
    Relu relu_in(in), relu_out(out);
    constexpr int64_t kBatch = 2;
    const int64_t n_in = kBatch * NumElements(in), n_out = kBatch * NumElements(out);
    // Quarters of 0.5 in [-2, 2]: a third of the windows all negative, ties everywhere.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> quarter(-8, 8);
    std::vector<float> x(n_in), dy(n_out);
    for (float& v : x) v = 0.25f * static_cast<float>(quarter(rng));
    for (float& v : dy) v = static_cast<float>(quarter(rng)) + 0.5f;
    CpuBackend backend;
    // ReLU, then pool.
    std::vector<float> r(n_in), y1(n_out), dr(n_in), dx1(n_in);
    ASSERT_TRUE(relu_in.Forward(backend, kBatch, nullptr, x.data(), r.data()).ok());
    ASSERT_TRUE((*pool)->Forward(backend, kBatch, nullptr, r.data(), y1.data()).ok());
    ASSERT_TRUE(
        (*pool)
            ->Backward(backend, kBatch, nullptr, r.data(), y1.data(), dy.data(), nullptr, dr.data())
            .ok());
    ASSERT_TRUE(
        relu_in
            .Backward(backend, kBatch, nullptr, x.data(), r.data(), dr.data(), nullptr, dx1.data())
            .ok());
    // Pool, then ReLU.
    std::vector<float> p(n_out), y2(n_out), dp(n_out), dx2(n_in);
    ASSERT_TRUE((*pool)->Forward(backend, kBatch, nullptr, x.data(), p.data()).ok());
    ASSERT_TRUE(relu_out.Forward(backend, kBatch, nullptr, p.data(), y2.data()).ok());
    ASSERT_TRUE(
        relu_out
            .Backward(backend, kBatch, nullptr, p.data(), y2.data(), dy.data(), nullptr, dp.data())
            .ok());
    ASSERT_TRUE(
        (*pool)
            ->Backward(backend, kBatch, nullptr, x.data(), p.data(), dp.data(), nullptr, dx2.data())
            .ok());
    EXPECT_EQ(y1, y2) << "window " << window;
    EXPECT_EQ(dx1, dx2) << "window " << window;
    // Not vacuous: some gradient flows, and some windows are all negative.
    EXPECT_GT(std::count_if(dx1.begin(), dx1.end(), [](float v) { return v != 0.0f; }), 0);
    EXPECT_GT(std::count(y1.begin(), y1.end(), 0.0f), 0);
  }
}

TEST(CpuMaxPool2d, BadShapesAreInvalidArgumentNamingTheValue) {
  CpuBackend backend;
  Pool2dShape s{.batch = 1,
                .channels = 1,
                .in_height = 4,
                .in_width = 4,
                .window_height = 2,
                .window_width = 2,
                .stride_height = 2,
                .stride_width = 2,
                .pad_height = 2};
  float dummy = 0.0f;
  absl::Status st = backend.MaxPool2dForward(s, &dummy, &dummy);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("pad_height = 2"), std::string::npos) << st;
  EXPECT_EQ(MaxPool2d::Create({.channels = 1, .in_height = 1, .in_width = 1, .window = 2})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hogwild
