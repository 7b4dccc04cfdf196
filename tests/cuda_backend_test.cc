// Every CudaBackend op against the CpuBackend on random inputs, with the output buffers poisoned
// (NaN) before each run so that an element the GPU fails to write is caught. Tolerances are
// stated per op: exact where both backends run the same single rounding (ReLU, bias add,
// accumulate, fill); otherwise bounds that cover a different summation order (GEMM, column sums)
// or a few-ulp difference between the device's and glibc's expf/logf (softmax) or FMA
// contraction on the device (SGD).
//
// The tests of the fixture skip with the reason when there is no CUDA device; the status
// conversion and device-count tests run everywhere.
#include "kernels/cuda/cuda_backend.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/devices.h"
#include "tests/gpu_vs_cpu_fixture.h"

namespace hogwild {
namespace {

using testing::ExpectAllNear;
using testing::kNaN;
using testing::RandomFloats;

// ---- Runs without a GPU ---------------------------------------------------------------------

TEST(CudaDeviceCount, ReturnsCountOrFailedPreconditionWithReason) {
  const absl::StatusOr<int> count = CudaDeviceCount();
  if (count.ok()) {
    EXPECT_GE(*count, 1);
  } else {
    EXPECT_EQ(count.status().code(), absl::StatusCode::kFailedPrecondition) << count.status();
    EXPECT_NE(count.status().message().find("cudaGetDeviceCount"), std::string::npos)
        << count.status();
  }
}

TEST(CudaBackendCreate, RejectsMissingDeviceWithReason) {
  const absl::StatusOr<int> count = CudaDeviceCount();
  const absl::StatusOr<std::unique_ptr<CudaBackend>> backend = CudaBackend::Create(1 << 20);
  ASSERT_FALSE(backend.ok());
  if (count.ok()) {
    EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(backend.status().message().find("1048576"), std::string::npos) << backend.status();
  } else {
    // No GPU here: the same reason as CudaDeviceCount gives.
    EXPECT_EQ(backend.status(), count.status());
  }
}

TEST(CudaStatus, OutOfMemoryIsResourceExhaustedNamingCallAndPlace) {
  const absl::Status s =
      CudaResultToStatus(cudaErrorMemoryAllocation, "cudaMalloc(&p, bytes)", "x/y.cc", 42);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  for (const char* part :
       {"cudaMalloc(&p, bytes)", "x/y.cc:42", "cudaErrorMemoryAllocation", "cuda:"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " not in " << s;
  }
}

TEST(CudaStatus, MapsEachLibraryCodeToAStatusCode) {
  EXPECT_TRUE(CudaResultToStatus(cudaSuccess, "e", "f", 1).ok());
  EXPECT_TRUE(CudaResultToStatus(CUBLAS_STATUS_SUCCESS, "e", "f", 1).ok());
  EXPECT_TRUE(CudaResultToStatus(CUDNN_STATUS_SUCCESS, "e", "f", 1).ok());
  EXPECT_TRUE(CudaResultToStatus(ncclSuccess, "e", "f", 1).ok());
  EXPECT_EQ(CudaResultToStatus(cudaErrorInsufficientDriver, "e", "f", 1).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaResultToStatus(cudaErrorLaunchFailure, "e", "f", 1).code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(CudaResultToStatus(CUBLAS_STATUS_ALLOC_FAILED, "e", "f", 1).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CudaResultToStatus(CUBLAS_STATUS_INVALID_VALUE, "e", "f", 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaResultToStatus(CUDNN_STATUS_BAD_PARAM, "e", "f", 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      CudaResultToStatus(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, "e", "f", 1).code(),
      absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CudaResultToStatus(ncclInvalidArgument, "e", "f", 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaResultToStatus(ncclUnhandledCudaError, "e", "f", 1).code(),
            absl::StatusCode::kInternal);
}

absl::Status FailingCall() {
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaErrorInvalidValue);
  return absl::OkStatus();
}

TEST(CudaStatus, ReturnIfErrorReturnsTheConvertedError) {
  const absl::Status s = FailingCall();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cudaErrorInvalidValue"), std::string::npos) << s;
  EXPECT_NE(s.message().find("cuda_backend_test.cc:"), std::string::npos) << s;
}

// ---- Needs a GPU --------------------------------------------------------------------------------

class CudaBackendTest : public testing::GpuVsCpuTest {};

void ExpectAllEqual(const std::vector<float>& gpu, const std::vector<float>& cpu,
                    const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i) ASSERT_EQ(gpu[i], cpu[i]) << what << " element " << i;
}

TEST_F(CudaBackendTest, NameAndSynchronize) {
  EXPECT_EQ(gpu_->name(), "cuda:0");
  EXPECT_TRUE(gpu_->Synchronize().ok());
}

TEST_F(CudaBackendTest, CopiesRoundTripBytes) {
  const std::vector<float> host = RandomFloats(1000, 1);
  float* a = Upload(host);
  float* b = Poisoned(host.size());
  ASSERT_TRUE(gpu_->CopyOnDevice(b, a, host.size() * sizeof(float)).ok());
  ExpectAllEqual(Download(b, host.size()), host, "CopyOnDevice");
  EXPECT_TRUE(gpu_->CopyToDevice(nullptr, nullptr, 0).ok());
  EXPECT_TRUE(gpu_->CopyToHost(nullptr, nullptr, 0).ok());
  EXPECT_TRUE(gpu_->CopyOnDevice(nullptr, nullptr, 0).ok());
}

TEST_F(CudaBackendTest, AllocateTooMuchIsResourceExhaustedWithBytesAskedAndFree) {
  const size_t bytes = size_t{1} << 50;  // 1 PiB
  const absl::StatusOr<void*> ptr = gpu_->Allocate(bytes);
  ASSERT_FALSE(ptr.ok());
  EXPECT_EQ(ptr.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(ptr.status().message().find(std::to_string(bytes)), std::string::npos) << ptr.status();
  EXPECT_NE(ptr.status().message().find("free"), std::string::npos) << ptr.status();
  // The failure is not sticky: the backend still works.
  EXPECT_TRUE(gpu_->Synchronize().ok());
  absl::StatusOr<void*> zero = gpu_->Allocate(0);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(*zero, nullptr);
  gpu_->Free(nullptr);
}

TEST_F(CudaBackendTest, BadSizesAreInvalidArgument) {
  EXPECT_EQ(
      gpu_->Gemm(Transpose::kNo, Transpose::kNo, -1, 2, 2, 1.0f, nullptr, nullptr, 0.0f, nullptr)
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu_->Relu(-3, nullptr, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu_->SoftmaxCrossEntropy(4, 0, nullptr, nullptr, 1.0f, nullptr, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status s = gpu_->SgdUpdate(4, 0.1f, 0.9f, 0.0f, nullptr, nullptr, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("velocity"), std::string::npos) << s;
}

TEST_F(CudaBackendTest, FillWritesEveryElement) {
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{1} << 21}) {
    float* x = Poisoned(static_cast<size_t>(n));
    ASSERT_TRUE(gpu_->Fill(n, 3.5f, x).ok());
    ExpectAllEqual(Download(x, static_cast<size_t>(n)), std::vector<float>(n, 3.5f), "Fill");
  }
}

// ---- GEMM: each transpose case, non-square shapes, k == 0, beta == 0 and != 0 ----------------

using GemmCase = std::tuple<Transpose, Transpose, int64_t, int64_t, int64_t, float>;

class CudaGemmTest : public CudaBackendTest, public ::testing::WithParamInterface<GemmCase> {};

TEST_P(CudaGemmTest, MatchesCpu) {
  const auto [ta, tb, m, n, k, beta] = GetParam();
  const float alpha = 0.75f;
  const std::vector<float> a = RandomFloats(m * k, 11);
  const std::vector<float> b = RandomFloats(k * n, 12);
  // beta == 0: C is write-only, so the GPU's C is poisoned and must be fully overwritten.
  const std::vector<float> c0 = RandomFloats(m * n, 13);
  std::vector<float> cpu_c = beta == 0.0f ? std::vector<float>(m * n, 0.0f) : c0;
  ASSERT_TRUE(cpu_.Gemm(ta, tb, m, n, k, alpha, a.data(), b.data(), beta, cpu_c.data()).ok());

  const float* a_d = Upload(a);
  const float* b_d = Upload(b);
  float* c_d = beta == 0.0f ? Poisoned(m * n) : Upload(c0);
  ASSERT_TRUE(gpu_->Gemm(ta, tb, m, n, k, alpha, a_d, b_d, beta, c_d).ok());
  // |a|, |b| <= 1: each dot product sums k terms of size <= 1, so a different summation order
  // differs by at most ~k ulps of k; 2e-6 * (k + 1) bounds it with room to spare.
  ExpectAllNear(Download(c_d, m * n), cpu_c, 2e-6f * static_cast<float>(k + 1) + 1e-6f, "Gemm");
}

std::vector<GemmCase> GemmCases() {
  std::vector<GemmCase> cases;
  const int64_t shapes[][3] = {{1, 1, 1},    {5, 7, 3},  {7, 5, 3}, {64, 33, 129},
                               {17, 1, 300}, {1, 40, 9}, {5, 7, 0}, {0, 7, 3}};
  for (const Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (const Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      for (const auto& s : shapes) {
        for (const float beta : {0.0f, 0.5f, 1.0f})
          cases.emplace_back(ta, tb, s[0], s[1], s[2], beta);
      }
    }
  }
  return cases;
}

std::string GemmCaseName(const ::testing::TestParamInfo<GemmCase>& info) {
  const auto [ta, tb, m, n, k, beta] = info.param;
  return std::string(ta == Transpose::kYes ? "T" : "N") + (tb == Transpose::kYes ? "T" : "N") +
         "_m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" + std::to_string(k) + "_beta" +
         std::to_string(static_cast<int>(beta * 10));
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, CudaGemmTest, ::testing::ValuesIn(GemmCases()),
                         GemmCaseName);

// ---- Bias, reductions, activations ----------------------------------------------------------

TEST_F(CudaBackendTest, AddBiasMatchesCpuExactly) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {64, 10}, {333, 257}}) {
    const std::vector<float> x = RandomFloats(rows * cols, 21);
    const std::vector<float> bias = RandomFloats(cols, 22);
    std::vector<float> cpu_x = x;
    ASSERT_TRUE(cpu_.AddBias(rows, cols, bias.data(), cpu_x.data()).ok());
    float* x_d = Upload(x);
    ASSERT_TRUE(gpu_->AddBias(rows, cols, Upload(bias), x_d).ok());
    ExpectAllEqual(Download(x_d, rows * cols), cpu_x, "AddBias");
  }
}

TEST_F(CudaBackendTest, SumRowsMatchesCpu) {
  for (const auto& [rows, cols] :
       {std::pair<int64_t, int64_t>{1, 1}, {64, 10}, {1000, 257}, {0, 5}, {3, 100}}) {
    const std::vector<float> dy = RandomFloats(rows * cols, 31);
    std::vector<float> cpu_db(cols, kNaN);
    ASSERT_TRUE(cpu_.SumRows(rows, cols, dy.data(), cpu_db.data()).ok());
    float* db_d = Poisoned(cols);
    ASSERT_TRUE(gpu_->SumRows(rows, cols, Upload(dy), db_d).ok());
    // A sum of `rows` terms in [-1, 1] in another order: within ~rows ulps of rows.
    ExpectAllNear(Download(db_d, cols), cpu_db, 1e-6f * static_cast<float>(rows + 1), "SumRows");
  }
}

TEST_F(CudaBackendTest, ReluMatchesCpuExactlyAndMayAlias) {
  std::vector<float> x = RandomFloats(10007, 41);
  x[0] = 0.0f;
  x[1] = -0.0f;
  std::vector<float> cpu_y(x.size());
  ASSERT_TRUE(cpu_.Relu(x.size(), x.data(), cpu_y.data()).ok());
  const float* x_d = Upload(x);
  float* y_d = Poisoned(x.size());
  ASSERT_TRUE(gpu_->Relu(x.size(), x_d, y_d).ok());
  ExpectAllEqual(Download(y_d, x.size()), cpu_y, "Relu");
  float* inplace = Upload(x);
  ASSERT_TRUE(gpu_->Relu(x.size(), inplace, inplace).ok());
  ExpectAllEqual(Download(inplace, x.size()), cpu_y, "Relu in place");
}

TEST_F(CudaBackendTest, ReluGradMatchesCpuExactly) {
  std::vector<float> y = RandomFloats(4099, 51);
  for (float& v : y) v = v > 0.0f ? v : 0.0f;  // a forward output: about half exact zeros
  const std::vector<float> dy = RandomFloats(y.size(), 52);
  std::vector<float> cpu_dx(y.size());
  ASSERT_TRUE(cpu_.ReluGrad(y.size(), y.data(), dy.data(), cpu_dx.data()).ok());
  float* dx_d = Poisoned(y.size());
  ASSERT_TRUE(gpu_->ReluGrad(y.size(), Upload(y), Upload(dy), dx_d).ok());
  ExpectAllEqual(Download(dx_d, y.size()), cpu_dx, "ReluGrad");
}

TEST_F(CudaBackendTest, AccumulateMatchesCpuExactly) {
  const std::vector<float> x = RandomFloats(5000, 61);
  const std::vector<float> y = RandomFloats(5000, 62);
  std::vector<float> cpu_y = y;
  ASSERT_TRUE(cpu_.Accumulate(x.size(), x.data(), cpu_y.data()).ok());
  float* y_d = Upload(y);
  ASSERT_TRUE(gpu_->Accumulate(x.size(), Upload(x), y_d).ok());
  ExpectAllEqual(Download(y_d, y.size()), cpu_y, "Accumulate");
}

// ---- Softmax cross-entropy --------------------------------------------------------------------

TEST_F(CudaBackendTest, SoftmaxCrossEntropyMatchesCpu) {
  for (const auto& [rows, classes] :
       {std::pair<int64_t, int64_t>{1, 1}, {1, 10}, {64, 10}, {300, 10}, {33, 1000}, {0, 10}}) {
    const std::vector<float> logits = RandomFloats(rows * classes, 71, -5.0f, 5.0f);
    std::vector<int32_t> labels(rows);
    std::mt19937 rng(72);
    for (int32_t& l : labels) l = static_cast<int32_t>(rng() % classes);
    const float scale = rows > 0 ? 1.0f / static_cast<float>(rows) : 1.0f;
    std::vector<float> cpu_dlogits(rows * classes, kNaN);
    float cpu_loss = kNaN;
    ASSERT_TRUE(cpu_.SoftmaxCrossEntropy(rows, classes, logits.data(), labels.data(), scale,
                                         cpu_dlogits.data(), &cpu_loss)
                    .ok());
    float* dlogits_d = Poisoned(rows * classes);
    float* loss_d = Poisoned(1);
    const float* logits_d = Upload(logits);
    const int32_t* labels_d = Upload(labels);
    ASSERT_TRUE(
        gpu_->SoftmaxCrossEntropy(rows, classes, logits_d, labels_d, scale, dlogits_d, loss_d)
            .ok());
    // Device expf/logf are within 2 ulps of glibc's; probabilities are <= 1 and the gradient is
    // scaled: p carries ~1e-6 relative error (expf, logsumexp rounding), bounded by 5e-6 * scale.
    // The loss is a sum of `rows` terms of at most ~15 each.
    ExpectAllNear(Download(dlogits_d, rows * classes), cpu_dlogits, 5e-6f * scale + 1e-9f,
                  "dlogits");
    const float gpu_loss = Download(loss_d, 1)[0];
    EXPECT_NEAR(gpu_loss, cpu_loss, 1e-5f * std::abs(cpu_loss) + 1e-6f) << rows << "x" << classes;

    // The loss reduction runs in a fixed order: bitwise the same on a second run.
    ASSERT_TRUE(
        gpu_->SoftmaxCrossEntropy(rows, classes, logits_d, labels_d, scale, dlogits_d, loss_d)
            .ok());
    EXPECT_EQ(Download(loss_d, 1)[0], gpu_loss);
  }
}

// ---- SGD update -------------------------------------------------------------------------------

TEST_F(CudaBackendTest, SgdUpdateMatchesCpu) {
  const int64_t n = 7777;
  for (const auto& [momentum, weight_decay] :
       {std::pair<float, float>{0.0f, 0.0f}, {0.0f, 1e-4f}, {0.9f, 0.0f}, {0.9f, 5e-4f}}) {
    const std::vector<float> params = RandomFloats(n, 81);
    const std::vector<float> grad = RandomFloats(n, 82);
    const std::vector<float> velocity = RandomFloats(n, 83);
    std::vector<float> cpu_params = params;
    std::vector<float> cpu_velocity = velocity;
    ASSERT_TRUE(cpu_.SgdUpdate(n, 0.05f, momentum, weight_decay, grad.data(), cpu_velocity.data(),
                               cpu_params.data())
                    .ok());
    float* params_d = Upload(params);
    float* velocity_d = Upload(velocity);
    ASSERT_TRUE(
        gpu_->SgdUpdate(n, 0.05f, momentum, weight_decay, Upload(grad), velocity_d, params_d).ok());
    // nvcc contracts a*b+c into one FMA (one rounding instead of two): a few ulps of |p| <= 2.
    ExpectAllNear(Download(params_d, n), cpu_params, 1e-6f, "params");
    // With momentum == 0 the velocity is neither read nor written: it stays as uploaded.
    ExpectAllNear(Download(velocity_d, n), cpu_velocity, 1e-6f, "velocity");

    if (momentum == 0.0f) {  // velocity may be null then
      float* p2 = Upload(params);
      ASSERT_TRUE(
          gpu_->SgdUpdate(n, 0.05f, momentum, weight_decay, Upload(grad), nullptr, p2).ok());
      ExpectAllNear(Download(p2, n), cpu_params, 1e-6f, "params, null velocity");
    }
  }
}

}  // namespace
}  // namespace hogwild
