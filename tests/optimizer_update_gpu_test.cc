// The CUDA optimizer kernel (kernels/cuda/optimizer_update.h) against the CPU loop
// (kernels/cpu/optimizer_update.h), which tests/optimizer_test.cc checks against float64
// references: 5 steps of every optimizer on 10,007 elements, parameters and state within float
// rounding (the GPU may fuse a multiply and an add: not bitwise). Skips without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/optimizer_update.h"
#include "kernels/cuda/optimizer_update.h"
#include "kernels/optimizer.h"
#include "kernels/optimizer_name.h"
#include "tests/gpu_vs_cpu_fixture.h"

namespace hogwild {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

class OptimizerUpdateGpu : public testing::GpuVsCpuTest {};

TEST_F(OptimizerUpdateGpu, EveryOptimizerMatchesTheCpuLoop) {
  using K = OptimizerKind;
  const OptimizerParams cases[] = {
      {.kind = K::kSgd, .weight_decay = 1e-2f},
      {.kind = K::kMomentum, .momentum = 0.9f},
      {.kind = K::kNesterov, .momentum = 0.9f, .weight_decay = 1e-3f},
      {.kind = K::kAdam, .weight_decay = 1e-2f},
      {.kind = K::kAdamW, .weight_decay = 1e-2f},
      {.kind = K::kRmsprop, .momentum = 0.5f},
      {.kind = K::kAdagrad},
  };
  constexpr size_t kSize = 10007;
  for (const OptimizerParams& p : cases) {
    const int slots = NumStateSlots(p);
    std::vector<float> params = RandomFloats(kSize, 1), s0(kSize, 0.0f), s1(kSize, 0.0f);
    float* d_params = Upload(params);
    float* d_s0 = Upload(s0);
    float* d_s1 = Upload(s1);
    for (int step = 1; step <= 5; ++step) {
      const std::vector<float> grad = RandomFloats(kSize, 10 + step);
      const float* d_grad = Upload(grad);
      const OptimizerFn fn = MakeOptimizerFn(p, 1e-2f, step);
      ASSERT_EQ(
          LaunchOptimizerUpdate(gpu_->stream(), kSize, fn, slots, d_grad, d_s0, d_s1, d_params),
          cudaSuccess);
      cpu::OptimizerUpdate(fn, slots, grad, slots >= 1 ? absl::MakeSpan(s0) : absl::Span<float>(),
                           slots >= 2 ? absl::MakeSpan(s1) : absl::Span<float>(),
                           absl::MakeSpan(params));
    }
    const std::string what = OptimizerName(p.kind);
    ExpectAllNear(Download(d_params, kSize), params, 1e-5, what + " params");
    if (slots >= 1) ExpectAllNear(Download(d_s0, kSize), s0, 1e-5, what + " s0");
    if (slots >= 2) ExpectAllNear(Download(d_s1, kSize), s1, 1e-5, what + " s1");
  }
}

}  // namespace
}  // namespace hogwild
