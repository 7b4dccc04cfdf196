// Batch norm in training (trainer/layers/batch_norm.h has the contract): every CPU policy moves
// the moving statistics by p += momentum * (s - p) from the statistics in their gradient slots,
// never by the optimizer or weight decay; sync with two towers equals a float64 reference of two
// half-batch batch-norm towers averaged (not one worker with the whole batch: per-tower
// statistics are the documented semantics); async workers update the shared statistics
// lock-free; clipping leaves them out; Train() fills the ranges and refuses what it does not
// support with batch norm.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "sync/moving_stats.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "tests/test_data.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

std::vector<float> Normal(int64_t n, uint64_t seed, float mean = 0.0f, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(mean, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

std::vector<float> Params(const UpdatePolicy& policy) {
  std::vector<float> out(policy.num_params());
  EXPECT_TRUE(policy.ReadParams(absl::MakeSpan(out)).ok());
  return out;
}

bool InStats(const SgdOptions& o, int64_t i) {
  for (const auto& [b, e] : o.moving_stats)
    if (i >= b && i < e) return true;
  return false;
}

TEST(MovingStatsFn, IsTheMovingAverage) {
  const SgdMomentumFn fn = MovingStatsFn(0.1f);
  float unused = 0.0f;
  EXPECT_FLOAT_EQ(fn(1.0f, 3.0f, unused), 1.2f);             // 0.9 * 1 + 0.1 * 3
  EXPECT_FLOAT_EQ(fn(-2.0f, 0.0f, unused), -1.8f);           // towards 0
  EXPECT_EQ(MovingStatsFn(1.0f)(5.0f, 7.0f, unused), 7.0f);  // momentum 1: the batch's
}

// (mode, clipping)
class EveryCpuMode : public ::testing::TestWithParam<std::tuple<Mode, bool>> {};

// One worker, one step: the statistics follow the moving average of their slots, and the other
// parameters get what the same policy gives without statistics ranges and with zeros in those
// slots. Without clipping the optimizer is Adam with weight decay (which would visibly move the
// statistics if it were applied to them) and the comparison is bitwise; with clipping (SGD with
// momentum and weight decay, the gradient 20x over the norm) the statistics neither count in the
// norm nor get scaled (float equality: the norm's double sum is split into pieces).
TEST_P(EveryCpuMode, StatisticsFollowTheMovingAverageAndNothingElse) {
  const auto [mode, clip] = GetParam();
  constexpr int64_t kP = 37;
  SgdOptions plain{.optimizer = OptimizerKind::kAdam, .weight_decay = 0.1f};
  if (clip) {
    plain = SgdOptions{.optimizer = OptimizerKind::kMomentum,
                       .momentum = 0.9f,
                       .weight_decay = 0.1f,
                       .clip_global_norm = 0.5f};
  }
  SgdOptions with_stats = plain;
  with_stats.moving_stats = {{5, 9}, {30, 34}};
  with_stats.moving_stats_momentum = 0.25f;
  const std::vector<float> init = Normal(kP, 1);
  const std::vector<float> grad = Normal(kP, 2, 1.0f, 2.0f);
  std::vector<float> zero_stats = grad;
  for (int64_t i = 0; i < kP; ++i)
    if (InStats(with_stats, i)) zero_stats[i] = 0.0f;
  std::vector<std::vector<float>> results;
  for (const SgdOptions& options : {plain, with_stats}) {
    ParameterStore store(kP);
    std::copy(init.begin(), init.end(), store.unsafe_values().begin());
    auto policy = CreateUpdatePolicy(mode, &store, PolicyPlacement{.num_cpu_workers = 1}, options,
                                     ModeOptions{.average_every = 1});
    ASSERT_TRUE(policy.ok()) << policy.status();
    ASSERT_TRUE((*policy)->SetStepExamples(0, 4, 4).ok());
    ASSERT_TRUE((*policy)->BeginStep(0).ok());
    ASSERT_TRUE(
        (*policy)->FinishStep(0, options.moving_stats.empty() ? zero_stats : grad, 0.01f).ok());
    results.push_back(Params(**policy));
  }
  int clipped_away = 0;
  for (int64_t i = 0; i < kP; ++i) {
    if (InStats(with_stats, i)) {
      const double want = init[i] + 0.25 * (static_cast<double>(grad[i]) - init[i]);
      EXPECT_NEAR(results[1][i], want, 1e-6) << ModeName(mode) << " element " << i;
      EXPECT_NE(results[1][i], results[0][i]);  // the test tells the two rules apart
    } else if (clip) {
      EXPECT_FLOAT_EQ(results[1][i], results[0][i]) << ModeName(mode) << " element " << i;
      // Clipping acted: an unclipped SGD step would have moved it by lr * (g + wd p).
      const float unclipped = init[i] - 0.01f * (grad[i] + 0.1f * init[i]);
      if (std::abs(results[1][i] - unclipped) > 1e-4f) ++clipped_away;
    } else {
      EXPECT_EQ(results[1][i], results[0][i]) << ModeName(mode) << " element " << i;
    }
  }
  if (clip) {
    EXPECT_GT(clipped_away, 20);  // of the 29 trained parameters
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, EveryCpuMode,
                         ::testing::Combine(::testing::Values(Mode::kAsync, Mode::kSync, Mode::kSsp,
                                                              Mode::kBackup, Mode::kLocalSgd),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(ModeName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_clipped" : "");
                         });

// Float64 statistics of channel c over [n, C, S] values.
void ChannelStats(const std::vector<float>& x, int64_t batch, int64_t channels, int64_t spatial,
                  int64_t c, double* mean, double* unbiased) {
  double sum = 0.0;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < spatial; ++i) sum += x[(n * channels + c) * spatial + i];
  const double count = static_cast<double>(batch * spatial);
  *mean = sum / count;
  double sq = 0.0;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < spatial; ++i) {
      const double d = x[(n * channels + c) * spatial + i] - *mean;
      sq += d * d;
    }
  *unbiased = sq / (count - 1.0);
}

// Sync, 2 towers of 3 and 5 examples (global batch 8) of cnn_bn: one step through the real
// policy and towers. The first batch norm's moving statistics equal the float64 reference
// 0.9 * init + 0.1 * (3/8 * s_A + 5/8 * s_B), s the half-batch's statistics of conv1's output,
// and are not what one worker with the whole batch would give (the halves differ in scale);
// the trained parameters moved by SGD on the sum of the two towers' gradients.
TEST(SyncBatchNorm, TwoTowersAverageTheirOwnBatchStatistics) {
  auto made =
      Model::Create(ModelSpec{.name = "cnn_bn", .input_shape = {1, 6, 6}, .num_classes = 3});
  ASSERT_TRUE(made.ok()) << made.status();
  const Model& model = **made;
  const int64_t p = model.num_params();
  const int64_t d = model.input_features();
  const int64_t sizes[2] = {3, 5};
  std::vector<float> features = Normal(8 * d, 5, 0.2f, 1.0f);
  for (int64_t i = 3 * d; i < 8 * d; ++i) features[i] = 3.0f * features[i] + 1.0f;  // tower B
  const std::vector<int32_t> labels = {0, 1, 2, 0, 1, 2, 2, 1};
  ParameterStore store(p);
  model.InitParams(3, store.unsafe_values());
  const std::vector<float> init(store.unsafe_values().begin(), store.unsafe_values().end());
  SgdOptions options;
  options.moving_stats = model.StatRanges();
  auto policy =
      CreateUpdatePolicy(Mode::kSync, &store, PolicyPlacement{.num_cpu_workers = 2}, options);
  ASSERT_TRUE(policy.ok()) << policy.status();
  const float lr = 0.05f;
  std::vector<std::vector<float>> grads(2, std::vector<float>(p));
  std::vector<absl::Status> errors(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      CpuBackend backend;
      auto tower = Tower::Create(&model, &backend, 8);
      if (!tower.ok()) return void(errors[w] = tower.status());
      const int64_t first = w == 0 ? 0 : 3;
      errors[w] = (*policy)->SetStepExamples(w, sizes[w], 8);
      auto params = (*policy)->BeginStep(w);
      if (!params.ok()) return void(errors[w] = params.status());
      auto loss = (*tower)->ForwardBackward(params->data(), sizes[w], features.data() + first * d,
                                            labels.data() + first, 1.0f / 8.0f, grads[w].data());
      if (!loss.ok()) return void(errors[w] = loss.status());
      errors[w] = (*policy)->FinishStep(w, grads[w], lr).status();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) ASSERT_TRUE(e.ok()) << e;
  const std::vector<float> after = Params(**policy);

  // Reference: conv1's output of each half (its Forward is checked against float64 in
  // conv2d_test), then the statistics in float64.
  CpuBackend backend;
  Layer& conv1 = *model.layers()[0];
  const int64_t channels = 32, spatial = 36;
  std::vector<float> out_a(3 * channels * spatial), out_b(5 * channels * spatial),
      out_all(8 * channels * spatial);
  ASSERT_TRUE(conv1.Forward(backend, 3, init.data(), features.data(), out_a.data()).ok());
  ASSERT_TRUE(conv1.Forward(backend, 5, init.data(), features.data() + 3 * d, out_b.data()).ok());
  ASSERT_TRUE(conv1.Forward(backend, 8, init.data(), features.data(), out_all.data()).ok());
  const int64_t stats_begin = model.StatRanges()[0].first;
  int var_differs_from_whole_batch = 0;
  for (int64_t c = 0; c < channels; ++c) {
    double mean_a, var_a, mean_b, var_b, mean_all, var_all;
    ChannelStats(out_a, 3, channels, spatial, c, &mean_a, &var_a);
    ChannelStats(out_b, 5, channels, spatial, c, &mean_b, &var_b);
    ChannelStats(out_all, 8, channels, spatial, c, &mean_all, &var_all);
    const double want_mean = 0.1 * (3.0 / 8 * mean_a + 5.0 / 8 * mean_b);
    const double want_var = 0.9 + 0.1 * (3.0 / 8 * var_a + 5.0 / 8 * var_b);
    EXPECT_NEAR(after[stats_begin + c], want_mean, 1e-5 * (1 + std::abs(want_mean))) << c;
    EXPECT_NEAR(after[stats_begin + channels + c], want_var, 1e-5 * want_var) << c;
    // The example-weighted mean of the halves' means is the whole batch's; the variances are not.
    EXPECT_NEAR(want_mean, 0.1 * mean_all, 1e-9 * (1 + std::abs(mean_all)));
    const double whole_var = 0.9 + 0.1 * var_all;
    if (std::abs(whole_var - want_var) > 1e-3 * want_var) ++var_differs_from_whole_batch;
  }
  EXPECT_GT(var_differs_from_whole_batch, channels / 2);
  // Trained parameters: plain SGD on the towers' sum.
  for (int64_t i = 0; i < p; ++i) {
    if (InStats(options, i)) continue;
    const float sum = grads[0][i] + grads[1][i];
    ASSERT_EQ(after[i], init[i] - lr * sum) << i;
  }
}

// Async: two workers push the same batch statistics s lock-free many times; every statistic ends
// between its start and s, and close to s (0.9^200 of the gap is left even if half the updates
// were lost). With one worker, k updates leave exactly the closed form's value.
TEST(AsyncBatchNorm, WorkersMoveTheSharedStatisticsLockFree) {
  constexpr int64_t kP = 64;
  SgdOptions options;
  options.moving_stats = {{0, 32}};
  const std::vector<float> stats = Normal(kP, 9, 2.0f, 1.0f);
  for (int workers : {1, 2}) {
    ParameterStore store(kP);
    std::fill(store.unsafe_values().begin(), store.unsafe_values().end(), 1.0f);
    auto policy = CreateUpdatePolicy(Mode::kAsync, &store,
                                     PolicyPlacement{.num_cpu_workers = workers}, options);
    ASSERT_TRUE(policy.ok());
    std::vector<std::thread> threads;
    constexpr int kSteps = 200;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        for (int k = 0; k < kSteps; ++k) {
          ASSERT_TRUE((*policy)->BeginStep(w).ok());
          ASSERT_TRUE((*policy)->FinishStep(w, stats, 1e-3f).ok());
        }
      });
    }
    for (auto& t : threads) t.join();
    const std::vector<float> after = Params(**policy);
    for (int64_t i = 0; i < 32; ++i) {
      const double lo = std::min(1.0f, stats[i]), hi = std::max(1.0f, stats[i]);
      EXPECT_GE(after[i], lo - 1e-6);
      EXPECT_LE(after[i], hi + 1e-6);
      EXPECT_NEAR(after[i], stats[i], 1e-5);
      if (workers == 1) {
        const double want = stats[i] + (1.0 - stats[i]) * std::pow(0.9, kSteps);
        EXPECT_NEAR(after[i], want, 1e-5);
      }
    }
    // The trained half took plain SGD steps (with two workers some may have been lost).
    if (workers == 1) {
      EXPECT_NEAR(after[40], 1.0 - 1e-3 * kSteps * stats[40], 1e-4);
    }
  }
}

// Train(): cnn_bn's statistics leave their initial values (mean 0, var 1); the batch-norm options
// are validated.
TEST(TrainBatchNorm, TrainsAndRefusesWhatItDoesNotSupport) {
  Dataset train = testing::SyntheticDataset(96, 36, 3, 4);
  train.example_shape = {1, 6, 6};
  TrainerOptions o;
  o.mode = Mode::kSync;
  o.num_workers = 2;
  o.batch_size = 16;
  o.epochs = 1;
  o.eval_every_epochs = 0;
  o.model = ModelSpec{.name = "cnn_bn", .hidden = {}};
  o.sgd.moving_stats_momentum = 0.5f;
  auto result = Train(o, train, Dataset());
  ASSERT_TRUE(result.ok()) << result.status();
  auto model =
      Model::Create(ModelSpec{.name = "cnn_bn", .input_shape = {1, 6, 6}, .num_classes = 3});
  ASSERT_TRUE(model.ok());
  const auto [begin, end] = (*model)->StatRanges()[0];
  EXPECT_NE(result->params[begin], 0.0f);       // moving mean moved
  EXPECT_NE(result->params[begin + 32], 1.0f);  // moving var moved
  EXPECT_GT(result->params[begin + 32], 0.0f);  // a variance

  TrainerOptions momentum = o;
  momentum.sgd.moving_stats_momentum = 0.0f;
  auto refused = Train(momentum, train, Dataset());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("moving_stats_momentum=0"), std::string::npos)
      << refused.status();
  TrainerOptions plain_cnn = o;
  plain_cnn.model.name = "cnn";
  refused = Train(plain_cnn, train, Dataset());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("only cnn_bn has batch norm"), std::string::npos)
      << refused.status();
}

// GPU workers take cnn_bn (their policies apply the moving statistics too); statistics ranges
// filled in by the caller are refused by name before any work.
TEST(TrainBatchNorm, GpuWorkersAreAcceptedAndCallerFilledRangesRefused) {
  TrainerOptions o;
  o.model = ModelSpec{.name = "cnn_bn", .hidden = {}};
  o.devices = {DeviceSpec::Gpu(0)};
  absl::Status s = ValidateOptions(o);
  EXPECT_TRUE(s.ok()) << s;
  o.devices = {DeviceSpec::Cpu()};
  EXPECT_TRUE(ValidateOptions(o).ok()) << ValidateOptions(o);
  o.sgd.moving_stats = {{0, 4}};
  s = ValidateOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sgd.moving_stats is filled by Train()"), std::string::npos) << s;
}

}  // namespace
}  // namespace hogwild
