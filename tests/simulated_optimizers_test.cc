// The simulator runs the real policies' arithmetic (sim/simulator.h): with constant compute
// times it equals the real deterministic policies bitwise for sync, backup with b = 0 and
// local_sgd under every optimizer option (adamw, clipping by global norm, weight decay with the
// bias exemption, the weight EMA where the trainer has one) and for batch norm's moving statistics
// (cnn_bn), and one simulated async worker is the real one-worker run with a non-SGD optimizer.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "tests/bitwise.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;

// adamw (decoupled weight decay, biases exempt), clipping that engages, a decaying rate, and the
// weight EMA where the trainer has one (async and sync).
TrainerOptions Rich(Mode mode, int workers) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = workers;
  o.batch_size = 10;
  o.epochs = 2;
  o.seed = 4321;
  o.model = ModelSpec{.name = "mlp", .hidden = {16, 8}};
  o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                    .base_lr = 0.01f,
                    .decay_rate = 0.5f,
                    .decay_steps = 20};
  o.sgd = SgdOptions{
      .optimizer = OptimizerKind::kAdamW, .weight_decay = 0.05f, .clip_global_norm = 0.25f};
  o.weight_decay_biases = false;
  o.ema_decay = mode == Mode::kAsync || mode == Mode::kSync ? 0.9f : 0.0f;
  o.eval_every_epochs = 0;
  o.eval_every_steps = 0;
  return o;
}

// cnn_bn with momentum SGD and an EMA: the moving statistics take their own update.
TrainerOptions BatchNorm(Mode mode, int workers) {
  TrainerOptions o = Rich(mode, workers);
  o.model = ModelSpec{.name = "cnn_bn", .hidden = {}};
  o.sgd = SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f, .moving_stats_momentum = 0.3f};
  o.lr.base_lr = 0.05f;
  return o;
}

const Dataset& Flat() {
  static const Dataset* d = new Dataset(testing::SyntheticDataset(203, 12, 4, 5));
  return *d;
}

const Dataset& Images() {
  static const Dataset* d = [] {
    auto* images = new Dataset(testing::SyntheticDataset(99, 16, 3, 8));
    images->example_shape = {1, 4, 4};
    return images;
  }();
  return *d;
}

SimResult Simulated(const TrainerOptions& o, const Dataset& train) {
  auto result = Simulate(SimOptions{.trainer = o}, train, Dataset());
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : SimResult{};
}

// The simulation (every step 10 ms, no jitter) and the real run end with bitwise the same
// parameters and EMA (when there is one).
void ExpectSimulatedIsReal(const TrainerOptions& o, const Dataset& train) {
  auto real = Train(o, train, Dataset());
  ASSERT_TRUE(real.ok()) << real.status();
  auto simulated = Simulate(SimOptions{.trainer = o}, train, Dataset());
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_EQ(simulated->steps, real->steps);
  EXPECT_EQ(CountBitwiseDifferences(simulated->params, real->params), 0);
  ASSERT_EQ(simulated->ema_params.size(), real->ema_params.size());
  EXPECT_EQ(simulated->ema_params.empty(), o.ema_decay == 0.0f);
  EXPECT_EQ(CountBitwiseDifferences(simulated->ema_params, real->ema_params), 0);
}

TEST(SimulatedOptimizers, SyncWithAdamwClippingBiasExemptionAndEmaIsTheRealRunBitwise) {
  const TrainerOptions o = Rich(Mode::kSync, 4);
  ExpectSimulatedIsReal(o, Flat());
  // Not vacuous: clipping and the bias exemption each change the result.
  const SimResult with = Simulated(o, Flat());
  TrainerOptions unclipped = o;
  unclipped.sgd.clip_global_norm = 0.0f;
  EXPECT_GT(CountBitwiseDifferences(Simulated(unclipped, Flat()).params, with.params), 0);
  TrainerOptions biases_decay = o;
  biases_decay.weight_decay_biases = true;
  EXPECT_GT(CountBitwiseDifferences(Simulated(biases_decay, Flat()).params, with.params), 0);
}

TEST(SimulatedOptimizers, BackupWithoutBackupWorkersIsTheRealRunBitwise) {
  ExpectSimulatedIsReal(Rich(Mode::kBackup, 4), Flat());
}

TEST(SimulatedOptimizers, LocalSgdIsTheRealRunBitwise) {
  // 42 global steps in rounds of 4: a last, shorter round of 2.
  TrainerOptions o = Rich(Mode::kLocalSgd, 3);
  o.average_every = 4;
  ExpectSimulatedIsReal(o, Flat());
}

TEST(SimulatedOptimizers, OneAsyncWorkerWithAdamIsTheRealOneWorkerRunBitwise) {
  TrainerOptions o = Rich(Mode::kAsync, 1);
  o.sgd.optimizer = OptimizerKind::kAdam;
  o.sgd.weight_decay = 1e-3f;
  o.batch_size = 8;
  ExpectSimulatedIsReal(o, Flat());
}

TEST(SimulatedBatchNorm, MovingStatisticsAreTheRealRunsBitwise) {
  ExpectSimulatedIsReal(BatchNorm(Mode::kSync, 3), Images());
  ExpectSimulatedIsReal(BatchNorm(Mode::kBackup, 3), Images());
  TrainerOptions local = BatchNorm(Mode::kLocalSgd, 3);
  local.average_every = 2;
  ExpectSimulatedIsReal(local, Images());
  ExpectSimulatedIsReal(BatchNorm(Mode::kAsync, 1), Images());
}

}  // namespace
}  // namespace hogwild
