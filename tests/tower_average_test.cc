// The synchronous policy (sync/tower_average.h): each step's update equals, bitwise, the
// functor (kernels/functors.h SgdMomentumFn) applied element by element to the worker-order sum
// of the tower gradients. P = 1027 is not a multiple of four, so the kernel's four-lane loop
// (kernels/cpu/sgd_update.h) and its scalar tail both run, on both workers' slices ([0, 513)
// and [513, 1027), the second starting off a 16-byte boundary).
#include "sync/tower_average.h"

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sync/parameter_store.h"

namespace hogwild {
namespace {

constexpr int64_t kParams = 1027;
constexpr int kSteps = 4;
constexpr float kLr[kSteps] = {0.1f, 0.05f, 0.03f, 0.01f};

std::vector<float> Normal(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Index of the first element whose bits differ, or -1.
int64_t FirstBitwiseMismatch(absl::Span<const float> got, absl::Span<const float> want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) return i;
  }
  return -1;
}

// (momentum, weight_decay, workers)
class TowerAverageUpdate : public ::testing::TestWithParam<std::tuple<float, float, int>> {};

TEST_P(TowerAverageUpdate, IsBitwiseTheFunctorOnTheWorkerOrderSum) {
  const auto [momentum, weight_decay, workers] = GetParam();
  const std::vector<float> init = Normal(kParams, 1);
  // grads[step][w]: worker w's gradient at that step.
  std::vector<std::vector<std::vector<float>>> grads(kSteps);
  for (int step = 0; step < kSteps; ++step) {
    for (int w = 0; w < workers; ++w) grads[step].push_back(Normal(kParams, 100 + 10 * step + w));
  }

  ParameterStore store(kParams);
  std::copy(init.begin(), init.end(), store.unsafe_values().begin());
  TowerAverage policy(&store, workers,
                      SgdOptions{.momentum = momentum, .weight_decay = weight_decay});
  std::vector<absl::Status> errors(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (int step = 0; step < kSteps; ++step) {
        if (auto params = policy.BeginStep(w); !params.ok())
          return void(errors[w] = params.status());
        if (auto stats = policy.FinishStep(w, grads[step][w], kLr[step]); !stats.ok()) {
          return void(errors[w] = stats.status());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : errors) ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(store.version(), static_cast<uint64_t>(kSteps));

  // The reference: a plain float loop of the functor on the sum in worker order 0..W-1.
  std::vector<float> params = init, velocity(kParams, 0.0f);
  for (int step = 0; step < kSteps; ++step) {
    const SgdMomentumFn sgd{kLr[step], momentum, weight_decay};
    for (int64_t i = 0; i < kParams; ++i) {
      float sum = grads[step][0][i];
      for (int w = 1; w < workers; ++w) sum += grads[step][w][i];
      params[i] = sgd(params[i], sum, velocity[i]);
    }
  }
  const int64_t bad = FirstBitwiseMismatch(store.unsafe_values(), params);
  EXPECT_EQ(bad, -1) << "element " << bad << ": " << store.unsafe_values()[bad] << " vs "
                     << params[bad];
  // Not vacuous: every element moved.
  int64_t unmoved = 0;
  for (int64_t i = 0; i < kParams; ++i) unmoved += store.unsafe_values()[i] == init[i];
  EXPECT_EQ(unmoved, 0);

  auto state = policy.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  if (momentum == 0.0f) {
    EXPECT_TRUE(state->optimizer_state.empty());
  } else {
    ASSERT_EQ(state->optimizer_state.size(), 1u);
    const int64_t bad_v = FirstBitwiseMismatch(state->optimizer_state[0], velocity);
    EXPECT_EQ(bad_v, -1) << "velocity element " << bad_v;
  }
}

INSTANTIATE_TEST_SUITE_P(MomentumWeightDecayWorkers, TowerAverageUpdate,
                         ::testing::Combine(::testing::Values(0.0f, 0.9f),
                                            ::testing::Values(0.0f, 0.01f),
                                            ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<float, float, int>>& info) {
                           return absl::StrFormat("momentum%s_wd%s_workers%d",
                                                  std::get<0>(info.param) != 0.0f ? "On" : "Off",
                                                  std::get<1>(info.param) != 0.0f ? "On" : "Off",
                                                  std::get<2>(info.param));
                         });

}  // namespace
}  // namespace hogwild
