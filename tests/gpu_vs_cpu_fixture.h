// The fixture of the GPU-vs-CPU op tests: a CudaBackend on device 0 beside a CpuBackend, device
// buffers freed after each test, NaN-poisoned outputs, and an element-wise comparison in which
// an unwritten (NaN) element fails. Every test of a fixture derived from it skips with
// "no CUDA device: <reason>" where there is no GPU.
#ifndef HOGWILD_TESTS_GPU_VS_CPU_FIXTURE_H_
#define HOGWILD_TESTS_GPU_VS_CPU_FIXTURE_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/devices.h"

namespace hogwild::testing {

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// n floats uniform in [lo, hi), deterministic in seed.
inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class GpuVsCpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::StatusOr<int> count = CudaDeviceCount();
    if (!count.ok()) GTEST_SKIP() << "no CUDA device: " << count.status().message();
    absl::StatusOr<std::unique_ptr<CudaBackend>> backend = CudaBackend::Create(0);
    ASSERT_TRUE(backend.ok()) << backend.status();
    gpu_ = std::move(*backend);
  }

  void TearDown() override {
    for (void* p : allocations_) gpu_->Free(p);
  }

  // A new device buffer holding `host` (at least one element is allocated, so an empty input
  // still gets a valid pointer); freed in TearDown.
  template <typename T>
  T* Upload(const std::vector<T>& host) {
    const size_t bytes = host.size() * sizeof(T);
    absl::StatusOr<void*> ptr = gpu_->Allocate(std::max<size_t>(bytes, sizeof(T)));
    if (!ptr.ok()) {
      ADD_FAILURE() << ptr.status();
      return nullptr;
    }
    allocations_.push_back(*ptr);
    const absl::Status s = gpu_->CopyToDevice(*ptr, host.data(), bytes);
    EXPECT_TRUE(s.ok()) << s;
    return static_cast<T*>(*ptr);
  }

  // A new device buffer of n floats, every one NaN.
  float* Poisoned(size_t n) { return Upload(std::vector<float>(n, kNaN)); }

  std::vector<float> Download(const float* device, size_t n) {
    std::vector<float> host(n, kNaN);
    const absl::Status s = gpu_->CopyToHost(host.data(), device, n * sizeof(float));
    EXPECT_TRUE(s.ok()) << s;
    return host;
  }

  CpuBackend cpu_;
  std::unique_ptr<CudaBackend> gpu_;
  std::vector<void*> allocations_;
};

// |gpu[i] - cpu[i]| <= tol for every i; a NaN (an element the GPU never wrote) fails too.
inline void ExpectAllNear(const std::vector<float>& gpu, const std::vector<float>& cpu, double tol,
                          const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i) {
    ASSERT_NEAR(gpu[i], cpu[i], tol) << what << " element " << i;
  }
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_GPU_VS_CPU_FIXTURE_H_
