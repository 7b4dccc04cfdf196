// The optimizers (kernels/optimizer.h): each against a float64 implementation of the same
// equations (PyTorch's torch.optim single-tensor loops, written out below), the CPU loops bitwise
// against the functor, and the SGD family's vectorized path bitwise against the general loop.
#include "kernels/optimizer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/optimizer_update.h"
#include "kernels/optimizer_name.h"
#include "sync/optimizer_slots.h"

namespace hogwild {
namespace {

// torch.optim's update of one tensor, in double: the reference.
struct Reference {
  OptimizerParams p;
  double lr;
  std::vector<double> param, s0, s1;
  int64_t step = 0;

  void Update(const std::vector<float>& grad) {
    ++step;
    const double m = p.momentum, wd = p.weight_decay, b1 = p.beta1, b2 = p.beta2, a = p.alpha;
    const double eps = p.eps != 0.0f ? p.eps : DefaultEps(p.kind);
    for (size_t i = 0; i < param.size(); ++i) {
      double g = grad[i];
      double& x = param[i];
      switch (p.kind) {
        case OptimizerKind::kSgd:
        case OptimizerKind::kMomentum:
        case OptimizerKind::kNesterov: {
          g += wd * x;
          if (m != 0) {
            // PyTorch: buf = clone(g) at the first step, else buf = m * buf + g (dampening 0).
            s0[i] = step == 1 ? g : m * s0[i] + g;
            g = p.kind == OptimizerKind::kNesterov ? g + m * s0[i] : s0[i];
          }
          x -= lr * g;
          break;
        }
        case OptimizerKind::kAdam:
        case OptimizerKind::kAdamW: {
          if (p.kind == OptimizerKind::kAdamW) {
            x *= 1 - lr * wd;
          } else {
            g += wd * x;
          }
          s0[i] = b1 * s0[i] + (1 - b1) * g;
          s1[i] = b2 * s1[i] + (1 - b2) * g * g;
          const double c1 = 1 - std::pow(b1, step), c2 = 1 - std::pow(b2, step);
          x -= lr / c1 * s0[i] / (std::sqrt(s1[i]) / std::sqrt(c2) + eps);
          break;
        }
        case OptimizerKind::kRmsprop: {
          g += wd * x;
          s0[i] = a * s0[i] + (1 - a) * g * g;
          const double avg = std::sqrt(s0[i]) + eps;
          if (m != 0) {
            s1[i] = m * s1[i] + g / avg;
            x -= lr * s1[i];
          } else {
            x -= lr * g / avg;
          }
          break;
        }
        case OptimizerKind::kAdagrad: {
          g += wd * x;
          s0[i] += g * g;
          x -= lr * g / (std::sqrt(s0[i]) + eps);
          break;
        }
      }
    }
  }
};

struct Case {
  std::string name;
  OptimizerParams params;
  float lr;
};

std::vector<Case> Cases() {
  using K = OptimizerKind;
  return {
      {"sgd", {.kind = K::kSgd, .weight_decay = 1e-2f}, 0.1f},
      {"sgd_momentum", {.kind = K::kSgd, .momentum = 0.9f, .weight_decay = 1e-2f}, 0.05f},
      {"momentum", {.kind = K::kMomentum, .momentum = 0.5f}, 0.05f},
      {"nesterov", {.kind = K::kNesterov, .momentum = 0.9f, .weight_decay = 1e-3f}, 0.05f},
      {"adam", {.kind = K::kAdam}, 1e-3f},
      {"adam_wd_betas",
       {.kind = K::kAdam, .weight_decay = 1e-2f, .beta1 = 0.8f, .beta2 = 0.99f},
       1e-2f},
      {"adamw", {.kind = K::kAdamW, .weight_decay = 1e-2f}, 1e-3f},
      {"rmsprop", {.kind = K::kRmsprop}, 1e-2f},
      {"rmsprop_momentum", {.kind = K::kRmsprop, .momentum = 0.9f, .weight_decay = 1e-3f}, 1e-3f},
      {"adagrad", {.kind = K::kAdagrad}, 1e-2f},
      {"adagrad_eps", {.kind = K::kAdagrad, .weight_decay = 1e-2f, .eps = 1e-3f}, 1e-1f},
  };
}

class OptimizerReference : public ::testing::TestWithParam<Case> {};

// 40 updates of 257 elements with gradients ~ N(0, 1) that depend on the parameters (a
// quadratic), from the float32 functor and the float64 reference: the parameters agree to float
// rounding (relative 2e-5, absolute 1e-6). A wrong sign, constant or bias correction would be off
// by far more: the test also checks that the parameters moved.
TEST_P(OptimizerReference, MatchesTheFloat64Equations) {
  const Case& c = GetParam();
  constexpr int kSize = 257, kSteps = 40;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> param(kSize), target(kSize), s0(kSize, 0.0f), s1(kSize, 0.0f);
  for (int i = 0; i < kSize; ++i) param[i] = normal(rng), target[i] = normal(rng);
  Reference ref{.p = c.params, .lr = c.lr};
  ref.param.assign(param.begin(), param.end());
  ref.s0.assign(kSize, 0.0);
  ref.s1.assign(kSize, 0.0);
  const std::vector<float> initial = param;
  std::vector<float> grad(kSize);
  for (int step = 1; step <= kSteps; ++step) {
    // The same float gradient for both, from the float run's parameters plus noise.
    for (int i = 0; i < kSize; ++i) grad[i] = param[i] - target[i] + 0.5f * normal(rng);
    const OptimizerFn fn = MakeOptimizerFn(c.params, c.lr, static_cast<uint64_t>(step));
    for (int i = 0; i < kSize; ++i) param[i] = fn(param[i], grad[i], s0[i], s1[i]);
    ref.Update(grad);
    // Keep the reference on the float trajectory's gradients but its own parameters: compare.
    for (int i = 0; i < kSize; ++i) {
      ASSERT_NEAR(param[i], ref.param[i], 1e-6 + 2e-5 * std::abs(ref.param[i]))
          << c.name << " step " << step << " element " << i;
    }
  }
  double moved = 0;
  for (int i = 0; i < kSize; ++i) moved = std::max(moved, std::abs(double(param[i]) - initial[i]));
  EXPECT_GT(moved, 10 * c.lr * 1e-2) << c.name << " did not move the parameters";
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerReference, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// Adam's first step moves each element by lr * g / (|g| + eps) (the bias corrections cancel the
// (1 - b) factors): about lr against the gradient's sign, whatever the gradient's scale.
TEST(Optimizer, AdamFirstStepIsLrTimesTheGradientSign) {
  const OptimizerParams p{.kind = OptimizerKind::kAdam};
  const OptimizerFn fn = MakeOptimizerFn(p, 1e-3f, 1);
  for (float g : {1e-3f, -0.5f, 20.0f}) {
    float s0 = 0.0f, s1 = 0.0f;
    const float moved = fn(1.0f, g, s0, s1) - 1.0f;
    EXPECT_NEAR(moved, g > 0 ? -1e-3f : 1e-3f, 1e-6f) << g;
  }
}

TEST(Optimizer, SlotsAndStepUseFollowTheDefinitions) {
  using K = OptimizerKind;
  EXPECT_EQ(NumStateSlots({.kind = K::kSgd}), 0);
  EXPECT_EQ(NumStateSlots({.kind = K::kSgd, .momentum = 0.9f}), 1);
  EXPECT_EQ(NumStateSlots({.kind = K::kNesterov, .momentum = 0.9f}), 1);
  EXPECT_EQ(NumStateSlots({.kind = K::kAdam}), 2);
  EXPECT_EQ(NumStateSlots({.kind = K::kAdamW}), 2);
  EXPECT_EQ(NumStateSlots({.kind = K::kRmsprop}), 1);
  EXPECT_EQ(NumStateSlots({.kind = K::kRmsprop, .momentum = 0.9f}), 2);
  EXPECT_EQ(NumStateSlots({.kind = K::kAdagrad}), 1);
  EXPECT_TRUE(UsesStepCount(K::kAdam));
  EXPECT_FALSE(UsesStepCount(K::kRmsprop));
  EXPECT_EQ(DefaultEps(K::kAdagrad), 1e-10f);
  EXPECT_EQ(DefaultEps(K::kAdam), 1e-8f);
}

TEST(Optimizer, NamesRoundTripAndUnknownNamesListTheChoices) {
  for (const char* name : {"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"}) {
    absl::StatusOr<OptimizerKind> kind = ParseOptimizer(name);
    ASSERT_TRUE(kind.ok()) << kind.status();
    EXPECT_STREQ(OptimizerName(*kind), name);
  }
  absl::StatusOr<OptimizerKind> bad = ParseOptimizer("adamax");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("adamax"), std::string::npos);
  EXPECT_NE(bad.status().message().find("rmsprop"), std::string::npos);
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
  }
  return true;
}

// The array loops (plain, shared with private state, shared with shared state) and the policies'
// range update (the vectorized SGD path for the SGD family) are bitwise the functor applied
// element by element, at a size that is not a multiple of four and from an offset.
TEST_P(OptimizerReference, ArrayLoopsAreBitwiseTheFunctor) {
  const Case& c = GetParam();
  constexpr int kSize = 103, kSteps = 5;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> expected(kSize), e0(kSize, 0.0f), e1(kSize, 0.0f);
  for (float& x : expected) x = normal(rng);
  std::vector<float> plain = expected, shared = expected, shared_state = expected,
                     ranged = expected;
  std::vector<float> p0(kSize, 0.0f), p1(kSize, 0.0f), h0 = p0, h1 = p1, t0 = p0, t1 = p1;
  const int slots = NumStateSlots(c.params);
  SgdOptions options{.optimizer = c.params.kind,
                     .momentum = c.params.momentum,
                     .weight_decay = c.params.weight_decay,
                     .beta1 = c.params.beta1,
                     .beta2 = c.params.beta2,
                     .alpha = c.params.alpha,
                     .eps = c.params.eps};
  OptimizerSlots range_slots(options, kSize + 5);
  std::vector<float> grad(kSize), out(kSize), out2(kSize);
  auto maybe = [&](std::vector<float>& v, int need) {
    return slots >= need ? absl::MakeSpan(v) : absl::Span<float>();
  };
  for (int step = 1; step <= kSteps; ++step) {
    for (float& g : grad) g = normal(rng);
    const OptimizerFn fn = MakeOptimizerFn(c.params, c.lr, step);
    for (int i = 0; i < kSize; ++i) expected[i] = fn(expected[i], grad[i], e0[i], e1[i]);
    cpu::OptimizerUpdate(fn, slots, grad, maybe(p0, 1), maybe(p1, 2), absl::MakeSpan(plain));
    cpu::SharedOptimizerUpdateAndRead(fn, slots, grad, maybe(h0, 1), maybe(h1, 2), false,
                                      shared.data(), absl::MakeSpan(out));
    EXPECT_TRUE(BitwiseEqual(out, shared)) << c.name;
    cpu::SharedOptimizerUpdateAndRead(fn, slots, grad, maybe(t0, 1), maybe(t1, 2), true,
                                      shared_state.data(), absl::MakeSpan(out2));
    ApplyOptimizerRange(options, c.lr, step, grad, range_slots, 5, absl::MakeSpan(ranged));
  }
  EXPECT_TRUE(BitwiseEqual(plain, expected)) << c.name;
  EXPECT_TRUE(BitwiseEqual(shared, expected)) << c.name;
  EXPECT_TRUE(BitwiseEqual(shared_state, expected)) << c.name;
  EXPECT_TRUE(BitwiseEqual(ranged, expected)) << c.name;
  if (slots >= 1) {
    EXPECT_TRUE(BitwiseEqual(p0, e0)) << c.name;
    EXPECT_TRUE(
        BitwiseEqual(std::vector<float>(range_slots.s0.begin() + 5, range_slots.s0.end()), e0))
        << c.name;
  }
}

}  // namespace
}  // namespace hogwild
