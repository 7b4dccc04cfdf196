// The Conv2d layer on the CPU backend (its default kernels, oneDNN) against float64 references:
// - forward against the direct 7-loop convolution on random data;
// - backward against central finite differences of the float64 reference of the scalar
//   L = sum(r * y) for a random r, so dL/dy = r: every dW and db element, and every dx element;
// for padding, stride, non-square inputs, several channels and a 1x1 kernel. Also the backend
// ops with a non-square kernel, and the shape errors.
#include "trainer/layers/conv2d.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/conv_reference.h"

namespace hogwild {
namespace {

using testing::Dot;
using testing::RandomValues;
using testing::ReferenceConv2d;
using testing::ToFloat;

struct ConvCase {
  std::string name;
  int64_t batch, channels, height, width, filters, kernel, stride, pad;
};

std::ostream& operator<<(std::ostream& os, const ConvCase& c) { return os << c.name; }

class Conv2dLayerTest : public ::testing::TestWithParam<ConvCase> {
 protected:
  void SetUp() override {
    const ConvCase& c = GetParam();
    auto layer = Conv2d::Create({.in_channels = c.channels,
                                 .in_height = c.height,
                                 .in_width = c.width,
                                 .out_channels = c.filters,
                                 .kernel = c.kernel,
                                 .stride = c.stride,
                                 .pad = c.pad});
    ASSERT_TRUE(layer.ok()) << layer.status();
    layer_ = std::move(*layer);
    shape_ = Conv2dShape{.batch = c.batch,
                         .in_channels = c.channels,
                         .in_height = c.height,
                         .in_width = c.width,
                         .out_channels = c.filters,
                         .kernel_height = c.kernel,
                         .kernel_width = c.kernel,
                         .stride_height = c.stride,
                         .stride_width = c.stride,
                         .pad_height = c.pad,
                         .pad_width = c.pad};
    x_ = RandomValues(c.batch * shape_.in_size(), 1);
    params_ = RandomValues(layer_->num_params(), 2);
    w_.assign(params_.begin(), params_.begin() + shape_.filter_size());
    b_.assign(params_.begin() + shape_.filter_size(), params_.end());
  }

  std::unique_ptr<Conv2d> layer_;
  Conv2dShape shape_;
  std::vector<double> x_, params_, w_, b_;
  CpuBackend backend_;
};

TEST_P(Conv2dLayerTest, ForwardMatchesDirectFloat64Convolution) {
  const int64_t batch = shape_.batch;
  ASSERT_EQ(layer_->output_shape(),
            (Shape{shape_.out_channels, shape_.out_height(), shape_.out_width()}));
  std::vector<float> y(batch * shape_.out_size(), std::nanf(""));
  ASSERT_TRUE(
      layer_->Forward(backend_, batch, ToFloat(params_).data(), ToFloat(x_).data(), y.data()).ok());
  const std::vector<double> ref = ReferenceConv2d(shape_, x_, w_, b_);
  ASSERT_EQ(y.size(), ref.size());
  // float32 sums of C*KH*KW products of values in [-1, 1]: a few ulps of the sum's magnitude.
  const double tol = 1e-6 * (shape_.in_channels * shape_.kernel_height * shape_.kernel_width + 1);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], tol) << "y[" << i << "]";
}

TEST_P(Conv2dLayerTest, BackwardMatchesFiniteDifferencesOfFloat64Reference) {
  const int64_t batch = shape_.batch;
  const std::vector<double> r = RandomValues(batch * shape_.out_size(), 3);  // dL/dy
  std::vector<float> dparams(layer_->num_params(), std::nanf(""));
  std::vector<float> dx(x_.size(), std::nanf(""));
  const std::vector<float> xf = ToFloat(x_), pf = ToFloat(params_), rf = ToFloat(r);
  std::vector<float> y(r.size());
  ASSERT_TRUE(layer_->Forward(backend_, batch, pf.data(), xf.data(), y.data()).ok());
  ASSERT_TRUE(layer_
                  ->Backward(backend_, batch, pf.data(), xf.data(), y.data(), rf.data(),
                             dparams.data(), dx.data())
                  .ok());

  constexpr double kEps = 1e-3;
  auto loss = [&](const std::vector<double>& x, const std::vector<double>& w,
                  const std::vector<double>& b) {
    return Dot(r, ReferenceConv2d(shape_, x, w, b));
  };
  // Central differences in float64 are exact to ~1e-10 here (L is linear in each argument);
  // the tolerance covers the float32 sums of the layer's backward pass.
  const double tol = 2e-5 * (batch * shape_.out_height() * shape_.out_width() + 1);
  std::vector<double> w = w_, b = b_, x = x_;
  for (size_t i = 0; i < w.size(); ++i) {
    const double keep = w[i];
    w[i] = keep + kEps;
    const double up = loss(x, w, b);
    w[i] = keep - kEps;
    const double down = loss(x, w, b);
    w[i] = keep;
    ASSERT_NEAR(dparams[i], (up - down) / (2 * kEps), tol) << "dW[" << i << "]";
  }
  for (size_t i = 0; i < b.size(); ++i) {
    const double keep = b[i];
    b[i] = keep + kEps;
    const double up = loss(x, w, b);
    b[i] = keep - kEps;
    const double down = loss(x, w, b);
    b[i] = keep;
    ASSERT_NEAR(dparams[w.size() + i], (up - down) / (2 * kEps), tol) << "db[" << i << "]";
  }
  const double dx_tol = 2e-5 * (shape_.out_channels * shape_.kernel_height * shape_.kernel_width);
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + kEps;
    const double up = loss(x, w, b);
    x[i] = keep - kEps;
    const double down = loss(x, w, b);
    x[i] = keep;
    ASSERT_NEAR(dx[i], (up - down) / (2 * kEps), dx_tol) << "dx[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dLayerTest,
    ::testing::Values(ConvCase{"k3_same_padding", 2, 3, 6, 6, 4, 3, 1, 1},
                      ConvCase{"non_square_input_stride2_pad1", 2, 2, 7, 5, 3, 3, 2, 1},
                      ConvCase{"k5_pad2_lenet_like_non_square", 1, 2, 9, 6, 3, 5, 1, 2},
                      ConvCase{"stride3_no_pad_ragged", 3, 1, 8, 10, 2, 2, 3, 0},
                      ConvCase{"pad_larger_than_half_kernel", 1, 2, 4, 3, 2, 3, 2, 2},
                      ConvCase{"pointwise_1x1", 2, 5, 3, 4, 3, 1, 1, 0},
                      ConvCase{"batch_of_one_single_channel", 1, 1, 5, 5, 1, 3, 1, 0}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

// The backend ops themselves with KH != KW and unequal strides and pads (the layer only makes
// square kernels).
TEST(CpuConv2d, NonSquareKernelStridesAndPadsMatchReference) {
  const Conv2dShape s{.batch = 2,
                      .in_channels = 3,
                      .in_height = 7,
                      .in_width = 9,
                      .out_channels = 2,
                      .kernel_height = 3,
                      .kernel_width = 2,
                      .stride_height = 2,
                      .stride_width = 1,
                      .pad_height = 1,
                      .pad_width = 0};
  const std::vector<double> x = RandomValues(s.batch * s.in_size(), 4);
  const std::vector<double> w = RandomValues(s.filter_size(), 5);
  CpuBackend backend;
  std::vector<float> y(s.batch * s.out_size(), std::nanf(""));
  ASSERT_TRUE(
      backend.Conv2dForward(s, ToFloat(x).data(), ToFloat(w).data(), nullptr, y.data()).ok());
  const std::vector<double> ref = ReferenceConv2d(s, x, w, {});
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-5) << i;

  // Backward data is the adjoint of forward: <dy, conv(x)> == <conv^T(dy), x>.
  const std::vector<double> dy = RandomValues(y.size(), 6);
  std::vector<float> dx(x.size(), std::nanf(""));
  ASSERT_TRUE(backend.Conv2dBackwardData(s, ToFloat(w).data(), ToFloat(dy).data(), dx.data()).ok());
  std::vector<double> dxd(dx.begin(), dx.end());
  EXPECT_NEAR(Dot(dy, ref), Dot(dxd, x), 1e-4);
}

TEST(CpuConv2d, EmptyBatchZeroesTheFilterGradient) {
  const Conv2dShape s{.batch = 0,
                      .in_channels = 2,
                      .in_height = 4,
                      .in_width = 4,
                      .out_channels = 3,
                      .kernel_height = 3,
                      .kernel_width = 3};
  CpuBackend backend;
  std::vector<float> dw(s.filter_size(), std::nanf("")), db(3, std::nanf(""));
  ASSERT_TRUE(backend.Conv2dBackwardFilter(s, nullptr, nullptr, dw.data(), db.data()).ok());
  for (float v : dw) EXPECT_EQ(v, 0.0f);
  for (float v : db) EXPECT_EQ(v, 0.0f);
}

TEST(CpuConv2d, BadShapesAreInvalidArgumentNamingTheValue) {
  CpuBackend backend;
  Conv2dShape s{.batch = 1,
                .in_channels = 1,
                .in_height = 4,
                .in_width = 4,
                .out_channels = 1,
                .kernel_height = 7,
                .kernel_width = 3};
  float dummy = 0.0f;
  absl::Status st = backend.Conv2dForward(s, &dummy, &dummy, nullptr, &dummy);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("kernel 7x3"), std::string::npos) << st;
  s.kernel_height = 3;
  s.stride_width = 0;
  st = backend.Conv2dForward(s, &dummy, &dummy, nullptr, &dummy);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("stride_width = 0"), std::string::npos) << st;

  auto layer = Conv2d::Create(
      {.in_channels = 1, .in_height = 3, .in_width = 3, .out_channels = 2, .kernel = 5, .pad = 0});
  EXPECT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Conv2dLayer, InitIsPyTorchsUniformBound) {
  auto layer = Conv2d::Create({.in_channels = 32,
                               .in_height = 14,
                               .in_width = 14,
                               .out_channels = 64,
                               .kernel = 5,
                               .pad = 2});
  ASSERT_TRUE(layer.ok());
  ASSERT_EQ((*layer)->num_params(), 64 * 32 * 25 + 64);
  std::vector<float> p((*layer)->num_params());
  std::mt19937_64 rng(7);
  (*layer)->InitParams(rng, absl::MakeSpan(p));
  const float bound = 1.0f / std::sqrt(800.0f);
  float max_abs = 0.0f;
  for (float v : p) max_abs = std::max(max_abs, std::fabs(v));
  EXPECT_LE(max_abs, bound);
  EXPECT_GT(max_abs, 0.95f * bound);  // uses the whole range, not a smaller one
}

}  // namespace
}  // namespace hogwild
