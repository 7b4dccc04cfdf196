// Clipping by global norm (sync/grad_clip.h): the factor is PyTorch's clip_grad_norm_'s; sync and
// backup clip the averaged gradient (two towers whose own gradients exceed the norm but whose
// sum does not are not clipped at all; the MirroredStrategy mistake would clip each), async, ssp
// and local_sgd each worker's own gradient.
#include "sync/grad_clip.h"

#include <sys/mman.h>

#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sync/optimizer_slots.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"

namespace hogwild {
namespace {

constexpr int64_t kParams = 37;
constexpr float kLr = 0.5f;

TEST(GradClip, ScaleIsMaxNormOverNormBelowOne) {
  // (3, 4): norm 5.
  EXPECT_EQ(ClipScale(25.0, 1.0f), static_cast<float>(1.0 / (5.0 + 1e-6)));
  EXPECT_EQ(ClipScale(25.0, 10.0f), 1.0f);
  EXPECT_EQ(ClipScale(25.0, 0.0f), 1.0f);  // off
  EXPECT_EQ(SumOfSquares(std::vector<float>{3.0f, 4.0f}), 25.0);
}

// Without clipping the async and local_sgd policies' factor must not cost a pass over the
// gradient (it was a quarter of a 1-worker W1 step): the gradient here lies in memory that cannot
// be read, so any read of it ends the test with SIGSEGV. With clipping it is ClipScale of the sum
// of squares.
TEST(GradClip, TrainedClipScaleOffNeverReadsTheGradient) {
  const size_t bytes = 1 << 16;
  void* page = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  const absl::Span<const float> unreadable(static_cast<const float*>(page), bytes / sizeof(float));
  EXPECT_EQ(TrainedClipScale(SgdOptions{.clip_global_norm = 0.0f}, 0, unreadable), 1.0f);
  munmap(page, bytes);
  const std::vector<float> g = {3.0f, 4.0f};  // norm 5
  EXPECT_EQ(TrainedClipScale(SgdOptions{.clip_global_norm = 1.0f}, 0, g),
            static_cast<float>(1.0 / (5.0 + 1e-6)));
  EXPECT_EQ(TrainedClipScale(SgdOptions{.clip_global_norm = 10.0f}, 0, g), 1.0f);
}

std::vector<float> Random(int seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(kParams);
  for (float& x : v) x = scale * normal(rng);
  return v;
}

double Norm(const std::vector<float>& v) { return std::sqrt(SumOfSquares(v)); }

// One step of every worker w with gradient grads[w] (on its own thread: sync and backup meet at
// a barrier); returns the parameters after it, from `init`.
std::vector<float> OneStep(Mode mode, const std::vector<std::vector<float>>& grads,
                           const std::vector<float>& init, float clip) {
  ParameterStore store(kParams);
  std::copy(init.begin(), init.end(), store.unsafe_values().begin());
  const int workers = static_cast<int>(grads.size());
  auto policy =
      CreateUpdatePolicy(mode, &store, PolicyPlacement{.num_cpu_workers = workers},
                         SgdOptions{.clip_global_norm = clip}, ModeOptions{.average_every = 1});
  EXPECT_TRUE(policy.ok()) << policy.status();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      EXPECT_TRUE((*policy)->BeginStep(w).ok());
      EXPECT_TRUE((*policy)->FinishStep(w, grads[w], kLr).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<float> params(kParams);
  EXPECT_TRUE((*policy)->ReadParams(absl::MakeSpan(params)).ok());
  return params;
}

// p - lr * (g * scale), element by element, as the SGD functor computes it.
std::vector<float> Sgd(const std::vector<float>& init, const std::vector<float>& g, float scale) {
  std::vector<float> out(kParams);
  for (int64_t i = 0; i < kParams; ++i) {
    const float d = scale != 1.0f ? g[i] * scale : g[i];
    out[i] = init[i] - kLr * d;
  }
  return out;
}

class AveragedGradientClip : public ::testing::TestWithParam<Mode> {};

TEST_P(AveragedGradientClip, TheAverageIsClippedNotEachTower) {
  const Mode mode = GetParam();
  const std::vector<float> init = Random(1, 1.0f);
  const std::vector<float> a = Random(2, 3.0f), e = Random(3, 0.01f);
  std::vector<float> minus_a_plus_e(kParams), sum(kParams);
  for (int64_t i = 0; i < kParams; ++i) minus_a_plus_e[i] = -a[i] + e[i];
  for (int64_t i = 0; i < kParams; ++i) sum[i] = a[i] + minus_a_plus_e[i];  // worker order
  const float clip = 1.0f;
  ASSERT_GT(Norm(a), 5 * clip);
  ASSERT_GT(Norm(minus_a_plus_e), 5 * clip);
  ASSERT_LT(Norm(sum), clip);
  // Each tower's gradient is over the norm, their average is not: nothing is clipped.
  EXPECT_EQ(OneStep(mode, {a, minus_a_plus_e}, init, clip), Sgd(init, sum, 1.0f));
  // Two equal towers: the average (2a) is over the norm and clipped as a whole.
  std::vector<float> twice(kParams);
  for (int64_t i = 0; i < kParams; ++i) twice[i] = a[i] + a[i];
  const float scale = ClipScale(SumOfSquares(twice), clip);
  ASSERT_LT(scale, 1.0f);
  const std::vector<float> clipped = OneStep(mode, {a, a}, init, clip);
  EXPECT_EQ(clipped, Sgd(init, twice, scale));
  EXPECT_NE(clipped, Sgd(init, twice, 1.0f));
}

INSTANTIATE_TEST_SUITE_P(SyncAndBackup, AveragedGradientClip,
                         ::testing::Values(Mode::kSync, Mode::kBackup));

class WorkerGradientClip : public ::testing::TestWithParam<Mode> {};

TEST_P(WorkerGradientClip, EachWorkersGradientIsClipped) {
  const Mode mode = GetParam();
  const std::vector<float> init = Random(1, 1.0f);
  const std::vector<float> big = Random(4, 3.0f), small = Random(5, 0.01f);
  const float clip = 1.0f;
  const float scale = ClipScale(SumOfSquares(big), clip);
  ASSERT_LT(scale, 1.0f);
  EXPECT_EQ(OneStep(mode, {big}, init, clip), Sgd(init, big, scale));
  EXPECT_EQ(OneStep(mode, {small}, init, clip), Sgd(init, small, 1.0f));
  EXPECT_EQ(OneStep(mode, {big}, init, 0.0f), Sgd(init, big, 1.0f));  // off
}

INSTANTIATE_TEST_SUITE_P(AsyncSspLocalSgd, WorkerGradientClip,
                         ::testing::Values(Mode::kAsync, Mode::kSsp, Mode::kLocalSgd));

}  // namespace
}  // namespace hogwild
