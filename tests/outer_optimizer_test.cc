// The outer optimizer (sync/outer_optimizer.h) against a float64 transcription of PyTorch's
// torch.optim.SGD step (dampening 0, weight decay 0) on the pseudo-gradient, over several rounds
// so the momentum buffer carries; plain averaging is the mean exactly; bad values are refused by
// name.
#include "sync/outer_optimizer.h"

#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace hogwild {
namespace {

// torch.optim.SGD.step for one parameter tensor, in float64: d = grad; buf = mu * buf + d (the
// first step's buf is d, as mu * 0 + d); d = d + mu * buf if nesterov else buf; p -= lr * d.
void ReferenceStep(double lr, double mu, bool nesterov, const std::vector<double>& grad,
                   std::vector<double>& buf, std::vector<double>& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    double d = grad[i];
    if (mu != 0.0) {
      buf[i] = mu * buf[i] + d;
      d = nesterov ? d + mu * buf[i] : buf[i];
    }
    params[i] -= lr * d;
  }
}

TEST(OuterOptimizer, IsTorchSgdOnThePseudoGradient) {
  constexpr int kN = 257;
  constexpr int kRounds = 6;
  const struct {
    OuterOptimizer outer;
    const char* name;
  } cases[] = {{{.lr = 0.7f, .momentum = 0.9f, .nesterov = true}, "DiLoCo's Nesterov"},
               {{.lr = 0.5f, .momentum = 0.8f, .nesterov = false}, "heavy ball"},
               {{.lr = 0.3f}, "no momentum"},
               {{.lr = 1.5f, .momentum = 0.5f, .nesterov = true}, "lr above 1"}};
  for (const auto& [outer, name] : cases) {
    SCOPED_TRACE(name);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> params(kN), momentum(outer.has_momentum() ? kN : 0);
    for (float& p : params) p = normal(rng);
    std::vector<double> ref_params(params.begin(), params.end()), ref_buf(kN, 0.0);
    double worst = 0.0;
    for (int round = 0; round < kRounds; ++round) {
      // The replicas' mean: the parameters moved by a random inner progress.
      std::vector<float> mean(kN);
      for (int i = 0; i < kN; ++i) mean[i] = params[i] + 0.1f * normal(rng);
      std::vector<double> delta(kN);
      for (int i = 0; i < kN; ++i) delta[i] = double{params[i]} - double{mean[i]};
      ApplyOuterStep(outer, mean, absl::MakeSpan(momentum), absl::MakeSpan(params));
      ReferenceStep(outer.lr, outer.momentum, outer.nesterov, delta, ref_buf, ref_params);
      for (int i = 0; i < kN; ++i) {
        worst =
            std::max(worst, std::abs(params[i] - ref_params[i]) / (1.0 + std::abs(ref_params[i])));
        // The float run's own parameters are the next round's reference start, so the error is
        // one round's rounding, not a drift that the tolerance would have to cover.
        ref_params[i] = params[i];
      }
      if (outer.has_momentum()) {
        for (int i = 0; i < kN; ++i) ref_buf[i] = momentum[i];
      }
    }
    // A few float32 roundings of values of order 1 per step.
    EXPECT_LE(worst, 1e-6);
    // Not vacuous: the step moved the parameters (it is not the mean, nor a no-op).
    EXPECT_GT(worst, 0.0);
  }
}

TEST(OuterOptimizer, PlainAveragingIsTheMeanExactly) {
  const OuterOptimizer averaging;
  ASSERT_TRUE(averaging.is_averaging());
  ASSERT_FALSE(averaging.has_momentum());
  std::vector<float> params = {1.0f, -2.5f, 3.25f}, mean = {0.1f, 0.2f, 1e-30f};
  ApplyOuterStep(averaging, mean, {}, absl::MakeSpan(params));
  EXPECT_EQ(params, mean);  // bitwise: no rounding through theta - (theta - mean)
}

TEST(OuterOptimizer, BadValuesAreRefusedByName) {
  EXPECT_TRUE(CheckOuterOptimizer({.lr = 0.7f, .momentum = 0.9f, .nesterov = true}, "o.").ok());
  EXPECT_EQ(CheckOuterOptimizer({.lr = 0.0f}, "o.").message(),
            "o.lr=0 is out of range; it must be in (0, 2]");
  EXPECT_EQ(CheckOuterOptimizer({.lr = 2.5f}, "o.").message(),
            "o.lr=2.5 is out of range; it must be in (0, 2]");
  EXPECT_EQ(CheckOuterOptimizer({.lr = std::nanf("")}, "o.").message(),
            "o.lr=nan is out of range; it must be in (0, 2]");
  EXPECT_EQ(CheckOuterOptimizer({.momentum = 1.0f}, "--outer_").message(),
            "--outer_momentum=1 is out of range; it must be in [0, 1)");
  EXPECT_EQ(CheckOuterOptimizer({.nesterov = true}, "--outer_").message(),
            "--outer_nesterov needs --outer_momentum > 0 (Nesterov's look-ahead is along the "
            "momentum)");
}

}  // namespace
}  // namespace hogwild
