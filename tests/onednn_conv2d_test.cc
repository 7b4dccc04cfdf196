// The oneDNN convolution kernels (kernels/cpu/onednn_conv2d.h) against the float64 direct
// convolution and against the im2col + GEMM kernels (CpuConvKernel::kIm2col), on the cnn model's
// two conv shapes and an odd strided one; that they start no thread (pinned to the caller); that
// a plan per batch size is kept apart; and that two backends on two threads agree with one.
// (tests/conv2d_test.cc runs the layer's finite-difference checks on the default, oneDNN. The
// first conv's filter gradient, C = 1, is im2col + GEMM on both backends by design.)
#include "kernels/cpu/onednn_conv2d.h"

#include <dirent.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/conv_reference.h"

namespace hogwild {
namespace {

using testing::RandomValues;
using testing::ReferenceConv2d;
using testing::ToFloat;

// The three passes' outputs of one backend on fixed random data.
struct Outputs {
  std::vector<float> y, dx, dw, db;
};

Outputs RunAll(Backend& backend, const Conv2dShape& s) {
  const std::vector<float> x = ToFloat(RandomValues(s.batch * s.in_size(), 11)),
                           w = ToFloat(RandomValues(s.filter_size(), 12)),
                           b = ToFloat(RandomValues(s.out_channels, 13)),
                           dy = ToFloat(RandomValues(s.batch * s.out_size(), 14));
  Outputs o{
      std::vector<float>(dy.size(), std::nanf("")), std::vector<float>(x.size(), std::nanf("")),
      std::vector<float>(w.size(), std::nanf("")), std::vector<float>(b.size(), std::nanf(""))};
  EXPECT_TRUE(backend.Conv2dForward(s, x.data(), w.data(), b.data(), o.y.data()).ok());
  EXPECT_TRUE(backend.Conv2dBackwardData(s, w.data(), dy.data(), o.dx.data()).ok());
  EXPECT_TRUE(backend.Conv2dBackwardFilter(s, x.data(), dy.data(), o.dw.data(), o.db.data()).ok());
  return o;
}

// |a - b| <= tol * (1 + |b|) elementwise (sums of up to C*KH*KW*N*OH*OW products of N(0,1)).
void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, double tol,
                 const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], tol * (1.0 + std::fabs(b[i]))) << what << " element " << i;
  }
}

Conv2dShape Cnn1(int64_t batch) {
  return {.batch = batch,
          .in_channels = 1,
          .in_height = 28,
          .in_width = 28,
          .out_channels = 32,
          .kernel_height = 5,
          .kernel_width = 5,
          .pad_height = 2,
          .pad_width = 2};
}
Conv2dShape Cnn2(int64_t batch) {
  return {.batch = batch,
          .in_channels = 32,
          .in_height = 14,
          .in_width = 14,
          .out_channels = 64,
          .kernel_height = 5,
          .kernel_width = 5,
          .pad_height = 2,
          .pad_width = 2};
}
// Strides that leave input rows unread (OH's floor), a non-square kernel, C not a multiple of 8.
Conv2dShape OddStrided() {
  return {.batch = 3,
          .in_channels = 3,
          .in_height = 10,
          .in_width = 9,
          .out_channels = 5,
          .kernel_height = 3,
          .kernel_width = 2,
          .stride_height = 2,
          .stride_width = 3,
          .pad_height = 1,
          .pad_width = 0};
}

TEST(OnednnConv2d, ForwardMatchesFloat64DirectConvolution) {
  for (const Conv2dShape& s : {Cnn1(2), Cnn2(2), OddStrided()}) {
    const std::vector<double> x = RandomValues(s.batch * s.in_size(), 11),
                              w = RandomValues(s.filter_size(), 12),
                              b = RandomValues(s.out_channels, 13);
    CpuBackend backend(CpuConvKernel::kOnednn);
    std::vector<float> y(s.batch * s.out_size(), std::nanf(""));
    ASSERT_TRUE(
        backend.Conv2dForward(s, ToFloat(x).data(), ToFloat(w).data(), ToFloat(b).data(), y.data())
            .ok());
    const std::vector<double> ref = ReferenceConv2d(s, x, w, b);
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_NEAR(y[i], ref[i], 1e-4 * (1.0 + std::fabs(ref[i])))
          << "C=" << s.in_channels << " " << i;
    }
  }
}

TEST(OnednnConv2d, AllPassesMatchIm2colKernels) {
  for (const Conv2dShape& s : {Cnn1(3), Cnn2(3), OddStrided()}) {
    CpuBackend onednn(CpuConvKernel::kOnednn), im2col(CpuConvKernel::kIm2col);
    const Outputs a = RunAll(onednn, s), b = RunAll(im2col, s);
    SCOPED_TRACE(::testing::Message() << "C=" << s.in_channels << " F=" << s.out_channels);
    ExpectClose(a.y, b.y, 1e-4, "y");
    ExpectClose(a.dx, b.dx, 1e-4, "dx");
    ExpectClose(a.dw, b.dw, 1e-4, "dw");
    ExpectClose(a.db, b.db, 1e-4, "db");
  }
}

// The layer's combined pass (dy converted once where both passes share its layout: Cnn2) gives
// the separate passes' dx, dw and db bit for bit, with and without dx.
TEST(OnednnConv2d, CombinedBackwardEqualsTheSeparatePassesBitwise) {
  for (const Conv2dShape& s : {Cnn1(3), Cnn2(3), OddStrided()}) {
    CpuBackend onednn(CpuConvKernel::kOnednn);
    const Outputs separate = RunAll(onednn, s);
    const std::vector<float> x = ToFloat(RandomValues(s.batch * s.in_size(), 11)),
                             w = ToFloat(RandomValues(s.filter_size(), 12)),
                             dy = ToFloat(RandomValues(s.batch * s.out_size(), 14));
    for (const bool with_dx : {true, false}) {
      std::vector<float> dx(x.size(), std::nanf("")), dw(w.size(), std::nanf("")),
          db(s.out_channels, std::nanf(""));
      ASSERT_TRUE(onednn
                      .Conv2dBackward(s, x.data(), w.data(), dy.data(),
                                      with_dx ? dx.data() : nullptr, dw.data(), db.data())
                      .ok());
      SCOPED_TRACE(::testing::Message() << "C=" << s.in_channels << " with_dx=" << with_dx);
      EXPECT_EQ(dw, separate.dw);
      EXPECT_EQ(db, separate.db);
      if (with_dx) {
        EXPECT_EQ(dx, separate.dx);
      } else {
        EXPECT_TRUE(std::isnan(dx[0]));  // untouched
      }
    }
  }
}

TEST(OnednnConv2d, EachBatchSizeGetsItsOwnPlan) {
  CpuBackend onednn(CpuConvKernel::kOnednn), im2col(CpuConvKernel::kIm2col);
  for (int64_t batch : {4, 1, 4}) {
    const Outputs a = RunAll(onednn, Cnn2(batch)), b = RunAll(im2col, Cnn2(batch));
    ExpectClose(a.y, b.y, 1e-4, "y");
    ExpectClose(a.dw, b.dw, 1e-4, "dw");
  }
}

int ThreadCount() {
  int n = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

// Without the pin, libgomp would start a team of (cores - 1) threads on the first convolution of
// each calling thread and keep it while that thread lives; so count on a fresh thread, before and
// after its convolutions (on a 1-core machine there is no team to see, so the test says so).
TEST(OnednnConv2d, RunsOnTheCallingThreadOnly) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: no team to detect";
  int before = 0, after = 0;
  std::thread worker([&] {
    before = ThreadCount();
    CpuBackend onednn(CpuConvKernel::kOnednn);
    RunAll(onednn, Cnn2(8));
    after = ThreadCount();
  });
  worker.join();
  ASSERT_GT(before, 0) << "no /proc/self/task";
  EXPECT_EQ(after, before);
}

TEST(OnednnConv2d, TwoBackendsOnTwoThreadsMatchOne) {
  CpuBackend serial(CpuConvKernel::kOnednn);
  const Outputs want = RunAll(serial, Cnn2(4));
  Outputs got[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&got, t] {
      CpuBackend backend(CpuConvKernel::kOnednn);
      for (int rep = 0; rep < 3; ++rep) got[t] = RunAll(backend, Cnn2(4));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Outputs& o : got) {
    EXPECT_EQ(o.y, want.y);
    EXPECT_EQ(o.dx, want.dx);
    EXPECT_EQ(o.dw, want.dw);
    EXPECT_EQ(o.db, want.db);
  }
}

TEST(OnednnConv2d, EmptyBatchZeroesTheFilterGradient) {
  CpuBackend onednn(CpuConvKernel::kOnednn);
  const Conv2dShape s = Cnn2(0);
  std::vector<float> dw(s.filter_size(), std::nanf("")), db(s.out_channels, std::nanf(""));
  ASSERT_TRUE(onednn.Conv2dBackwardFilter(s, nullptr, nullptr, dw.data(), db.data()).ok());
  for (float v : dw) ASSERT_EQ(v, 0.0f);
  for (float v : db) ASSERT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace hogwild
