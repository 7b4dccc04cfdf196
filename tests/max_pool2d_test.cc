// The MaxPool2d layer on the CPU backend against float64 references: forward against the direct
// window maximum; backward against central finite differences of the float64 reference of
// L = sum(r * y), on inputs whose values are at least 4 * eps apart so no maximum changes under
// the perturbation. Non-overlapping, overlapping, padded, strided and non-square cases; the
// tie rule; the shape errors.
#include "trainer/layers/max_pool2d.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/conv_reference.h"

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
