// The CUDA backend's convolution and max-pooling ops (cuDNN) against the CPU backend (im2col +
// OpenBLAS, itself checked against float64 references in conv2d_test / max_pool2d_test), on
// random data with stride, padding and non-square cases; outputs are poisoned with NaN first so
// an element cuDNN fails to write fails the test. Then the whole cnn model's forward and backward
// pass (Tower) on both backends. Tolerances: float32 sums in a different order (cuDNN's
// algorithms vs GEMM), scaled by the length of each sum. Pooling is exact (a copy of the max).
//
// Every test skips with "no CUDA device: <reason>" where there is no GPU.
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/devices.h"
#include "tests/gpu_vs_cpu_fixture.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

using testing::ExpectAllNear;
using testing::kNaN;
using testing::RandomFloats;

class CudnnConvTest : public testing::GpuVsCpuTest {};

std::vector<Conv2dShape> ConvCases() {
  return {
      // The cnn model's two convolutions, batch 16.
      {.batch = 16, .in_channels = 1, .in_height = 28, .in_width = 28, .out_channels = 32,
       .kernel_height = 5, .kernel_width = 5, .pad_height = 2, .pad_width = 2},
      {.batch = 16, .in_channels = 32, .in_height = 14, .in_width = 14, .out_channels = 64,
       .kernel_height = 5, .kernel_width = 5, .pad_height = 2, .pad_width = 2},
      // Non-square input and kernel, unequal strides and pads.
      {.batch = 3, .in_channels = 3, .in_height = 9, .in_width = 7, .out_channels = 4,
       .kernel_height = 3, .kernel_width = 2, .stride_height = 2, .stride_width = 1,
       .pad_height = 1, .pad_width = 0},
      // 1x1, and a single example.
      {.batch = 1, .in_channels = 5, .in_height = 4, .in_width = 6, .out_channels = 3,
       .kernel_height = 1, .kernel_width = 1},
  };
}

TEST_F(CudnnConvTest, ConvolutionPassesMatchCpuBackend) {
  for (const Conv2dShape& s : ConvCases()) {
    SCOPED_TRACE(::testing::Message() << "C=" << s.in_channels << " H=" << s.in_height
                                      << " W=" << s.in_width << " F=" << s.out_channels);
    const size_t nx = s.batch * s.in_size(), ny = s.batch * s.out_size();
    const std::vector<float> x = RandomFloats(nx, 1), w = RandomFloats(s.filter_size(), 2),
                             b = RandomFloats(s.out_channels, 3), dy = RandomFloats(ny, 4);
    std::vector<float> y(ny), dx(nx), dw(s.filter_size()), db(s.out_channels);
    ASSERT_TRUE(cpu_.Conv2dForward(s, x.data(), w.data(), b.data(), y.data()).ok());
    ASSERT_TRUE(cpu_.Conv2dBackwardData(s, w.data(), dy.data(), dx.data()).ok());
    ASSERT_TRUE(cpu_.Conv2dBackwardFilter(s, x.data(), dy.data(), dw.data(), db.data()).ok());

    float *x_d = Upload(x), *w_d = Upload(w), *b_d = Upload(b), *dy_d = Upload(dy);
    float *y_d = Poisoned(ny), *dx_d = Poisoned(nx), *dw_d = Poisoned(dw.size()),
          *db_d = Poisoned(db.size());
    ASSERT_TRUE(gpu_->Conv2dForward(s, x_d, w_d, b_d, y_d).ok());
    ASSERT_TRUE(gpu_->Conv2dBackwardData(s, w_d, dy_d, dx_d).ok());
    ASSERT_TRUE(gpu_->Conv2dBackwardFilter(s, x_d, dy_d, dw_d, db_d).ok());
    const double fwd_terms = s.in_channels * s.kernel_height * s.kernel_width;
    const double filter_terms = s.batch * s.out_height() * s.out_width();
    ExpectAllNear(Download(y_d, ny), y, 1e-6 * fwd_terms + 1e-6, "y");
    ExpectAllNear(Download(dx_d, nx), dx, 1e-6 * s.out_channels * s.kernel_height * s.kernel_width,
                  "dx");
    ExpectAllNear(Download(dw_d, dw.size()), dw, 1e-6 * filter_terms, "dw");
    ExpectAllNear(Download(db_d, db.size()), db, 1e-6 * filter_terms, "db");
  }
}

TEST_F(CudnnConvTest, EmptyBatchZeroesTheFilterGradient) {
  const Conv2dShape s{.batch = 0, .in_channels = 2, .in_height = 5, .in_width = 5,
                      .out_channels = 3, .kernel_height = 3, .kernel_width = 3};
  float *dw_d = Poisoned(s.filter_size()), *db_d = Poisoned(3);
  ASSERT_TRUE(gpu_->Conv2dBackwardFilter(s, nullptr, nullptr, dw_d, db_d).ok());
  for (float v : Download(dw_d, s.filter_size())) ASSERT_EQ(v, 0.0f);
  for (float v : Download(db_d, 3)) ASSERT_EQ(v, 0.0f);
}

TEST_F(CudnnConvTest, MaxPoolingMatchesCpuBackendExactly) {
  const std::vector<Pool2dShape> cases = {
      {.batch = 8, .channels = 32, .in_height = 28, .in_width = 28, .window_height = 2,
       .window_width = 2, .stride_height = 2, .stride_width = 2},
      {.batch = 2, .channels = 3, .in_height = 7, .in_width = 5, .window_height = 3,
       .window_width = 3, .stride_height = 2, .stride_width = 2, .pad_height = 1, .pad_width = 1},
      {.batch = 1, .channels = 2, .in_height = 6, .in_width = 9, .window_height = 3,
       .window_width = 2, .stride_height = 1, .stride_width = 2},
  };
  for (const Pool2dShape& s : cases) {
    const size_t nx = s.batch * s.in_size(), ny = s.batch * s.out_size();
    // Random floats: ties (where the two backends may pick different maxima) have probability ~0.
    const std::vector<float> x = RandomFloats(nx, 5), dy = RandomFloats(ny, 6);
    std::vector<float> y(ny), dx(nx);
    ASSERT_TRUE(cpu_.MaxPool2dForward(s, x.data(), y.data()).ok());
    ASSERT_TRUE(cpu_.MaxPool2dBackward(s, x.data(), y.data(), dy.data(), dx.data()).ok());
    float *x_d = Upload(x), *dy_d = Upload(dy), *y_d = Poisoned(ny), *dx_d = Poisoned(nx);
    ASSERT_TRUE(gpu_->MaxPool2dForward(s, x_d, y_d).ok());
    ASSERT_TRUE(gpu_->MaxPool2dBackward(s, x_d, y_d, dy_d, dx_d).ok());
    ExpectAllNear(Download(y_d, ny), y, 0.0, "y");
    // Overlapping windows sum gradients, possibly in another order.
    ExpectAllNear(Download(dx_d, nx), dx, 1e-6, "dx");
  }
}

// The whole cnn model (conv, ReLU, pooling, flatten, dense, softmax cross-entropy) through the
// Tower on both backends: same loss, same gradient.
TEST_F(CudnnConvTest, CnnTowerMatchesCpuBackend) {
  auto model = Model::Create(ModelSpec{.name = "cnn", .input_shape = {1, 28, 28}});
  ASSERT_TRUE(model.ok()) << model.status();
  const int64_t batch = 8, p = (*model)->num_params();
  std::vector<float> params(p);
  (*model)->InitParams(3, absl::MakeSpan(params));
  const std::vector<float> features = RandomFloats(batch * 784, 7);
  std::vector<int32_t> labels(batch);
  for (int64_t i = 0; i < batch; ++i) labels[i] = static_cast<int32_t>(i % 10);

  auto cpu_tower = Tower::Create(model->get(), &cpu_, batch);
  ASSERT_TRUE(cpu_tower.ok());
  std::vector<float> cpu_grad(p);
  auto cpu_loss = (*cpu_tower)->ForwardBackward(params.data(), batch, features.data(),
                                                labels.data(), 1.0f / batch, cpu_grad.data());
  ASSERT_TRUE(cpu_loss.ok()) << cpu_loss.status();

  auto gpu_tower = Tower::Create(model->get(), gpu_.get(), batch);
  ASSERT_TRUE(gpu_tower.ok());
  float* params_d = Upload(params);
  float* features_d = Upload(features);
  absl::StatusOr<void*> labels_d = gpu_->Allocate(batch * sizeof(int32_t));
  ASSERT_TRUE(labels_d.ok());
  allocations_.push_back(*labels_d);
  ASSERT_TRUE(gpu_->CopyToDevice(*labels_d, labels.data(), batch * sizeof(int32_t)).ok());
  float* grad_d = Poisoned(p);
  auto gpu_loss = (*gpu_tower)->ForwardBackward(params_d, batch, features_d,
                                                static_cast<const int32_t*>(*labels_d),
                                                1.0f / batch, grad_d);
  ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
  EXPECT_NEAR(*gpu_loss, *cpu_loss, 1e-4 * batch);
  ExpectAllNear(Download(grad_d, p), cpu_grad, 1e-4, "grad");
}

}  // namespace
}  // namespace hogwild
