// The weights' moving average (trainer/weight_ema.h): TensorFlow's decay with the num_updates
// warm-up, the update against a float64 reference, lock-free updates that never tear, and a run
// that reports the average's test accuracy beside the raw weights'.
#include "trainer/weight_ema.h"

#include <cmath>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

TEST(WeightEma, DecayFollowsTensorFlowsNumUpdates) {
  EXPECT_FLOAT_EQ(WeightEma::DecayAt(0.9999f, true, 0), 0.1f);  // (1 + 0) / (10 + 0)
  EXPECT_FLOAT_EQ(WeightEma::DecayAt(0.9999f, true, 90), 91.0f / 100.0f);
  EXPECT_EQ(WeightEma::DecayAt(0.9f, true, 1000000), 0.9f);   // capped by the decay
  EXPECT_EQ(WeightEma::DecayAt(0.9999f, false, 0), 0.9999f);  // no warm-up
}

TEST(WeightEma, UpdatesMatchAFloat64Reference) {
  const std::vector<float> initial = {1.0f, -2.0f, 0.5f};
  WeightEma ema(initial, 0.99f, true);
  std::vector<double> ref(initial.begin(), initial.end());
  for (uint64_t n = 1; n <= 50; ++n) {
    const std::vector<float> params = {0.1f * n, -0.2f * n, 3.0f};
    ema.Update(params, n);
    const double d = std::min(0.99, (1.0 + n) / (10.0 + n));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = d * ref[i] + (1 - d) * params[i];
  }
  std::vector<float> out(3);
  ema.Read(absl::MakeSpan(out));
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-5 * std::abs(ref[i]));
}

// Four threads averaging in the same parameters (all 3.0) from a zero shadow: whatever updates
// are lost, every element stays a convex combination, in [0, 3], and ends near 3.
TEST(WeightEma, ConcurrentUpdatesNeverTearAValue) {
  const int64_t p = 1001;
  WeightEma ema(std::vector<float>(p, 0.0f), 0.9f, false);
  const std::vector<float> params(p, 3.0f);
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&] {
      for (int s = 0; s < 200; ++s) ema.Update(params, s);
    });
  }
  std::vector<float> out(p);
  for (int r = 0; r < 20; ++r) {
    ema.Read(absl::MakeSpan(out));
    for (float v : out) ASSERT_TRUE(v >= 0.0f && v <= 3.0f) << v;
  }
  for (std::thread& t : threads) t.join();
  ema.Read(absl::MakeSpan(out));
  for (float v : out) EXPECT_NEAR(v, 3.0f, 1e-3f);
}

TrainerOptions Options(Mode mode, float decay) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = 2;
  o.batch_size = 10;
  o.epochs = 2;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.eval_every_epochs = 0;
  o.ema_decay = decay;
  return o;
}

// A run with an EMA reports both accuracies; a decay near 0 follows the weights (the average
// is the last parameters to float rounding), a decay of 0.99 lags behind them.
TEST(WeightEma, RunsReportTheAverageBesideTheRawWeights) {
  const Dataset train = testing::SyntheticDataset(200, 6, 3, 2);
  const Dataset test = testing::SyntheticDataset(60, 6, 3, 3);
  for (Mode mode : {Mode::kSync, Mode::kAsync}) {
    auto plain = Train(Options(mode, 0.0f), train, test);
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_TRUE(plain->ema_params.empty());
    EXPECT_EQ(FormatSummary(*plain).find("EMA"), std::string::npos);

    TrainerOptions follow = Options(mode, 1e-6f);
    follow.num_workers = 1;  // async: the last update is the last one averaged in
    auto near = Train(follow, train, test);
    ASSERT_TRUE(near.ok()) << near.status();
    ASSERT_EQ(near->ema_params.size(), near->params.size());
    for (size_t i = 0; i < near->params.size(); ++i) {
      EXPECT_NEAR(near->ema_params[i], near->params[i], 1e-5 + 1e-5 * std::abs(near->params[i]));
    }
    EXPECT_NEAR(near->final_ema_test_accuracy, near->final_test_accuracy, 0.02);

    auto lag = Train(Options(mode, 0.99f), train, test);
    ASSERT_TRUE(lag.ok()) << lag.status();
    EXPECT_NE(lag->ema_params, lag->params);
    EXPECT_GT(lag->final_ema_test_accuracy, 0.0);
    EXPECT_NE(FormatSummary(*lag).find("EMA weights: test accuracy"), std::string::npos);
  }
}

TEST(WeightEma, OptionsAreValidated) {
  using testing::ExpectError;
  TrainerOptions o = Options(Mode::kSync, 1.0f);
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::ema_decay=1 is out of range"});
  o = Options(Mode::kSsp, 0.9f);
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::ema_decay=0.9 has no effect in ssp mode"});
  o = Options(Mode::kSync, 0.0f);
  o.ema_num_updates = false;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::ema_num_updates=false has no effect"});
}

}  // namespace
}  // namespace hogwild
