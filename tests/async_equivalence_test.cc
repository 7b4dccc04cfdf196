// Invariant 2 (DESIGN.md): async (Hogwild) training with one worker is exactly sequential
// minibatch SGD, and so is every policy built on its updates (ssp, locked, round_robin), and local
// SGD. The reference
// below is a plain loop written from the public contracts: the same initialization
// (Model::InitParams), the same data order (BatchPlan), the same gradient (Tower::ForwardBackward
// scaled by 1 / batch size) and the update rule of kernels/functors.h with one momentum buffer and
// the learning rate of the step's global index. The two must agree bitwise: nothing in a one-worker
// run may reorder arithmetic.
#include <bit>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/functors.h"
#include "tests/bitwise.h"
#include "tests/test_data.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;

TrainerOptions AsyncOptions() {
  TrainerOptions o;
  o.mode = Mode::kAsync;
  o.num_workers = 1;
  o.batch_size = 16;
  o.epochs = 3;
  o.seed = 1234;
  o.model = ModelSpec{.name = "mlp", .hidden = {16, 8}};
  o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                    .base_lr = 0.2f,
                    .decay_rate = 0.5f,
                    .decay_steps = 20};
  o.sgd = SgdOptions{.momentum = 0.9f, .weight_decay = 1e-3f};
  o.eval_every_epochs = 0;
  o.eval_every_steps = 0;
  return o;
}

// Plain sequential minibatch SGD with the trainer's conventions; returns the final parameters.
std::vector<float> SequentialSgd(const TrainerOptions& o, const Dataset& train, int64_t* steps) {
  ModelSpec spec = o.model;
  spec.input_shape = train.example_shape;
  spec.num_classes = train.num_classes;
  auto model = Model::Create(spec).value();
  std::vector<float> params(model->num_params());
  model->InitParams(o.seed, absl::MakeSpan(params));
  std::vector<float> velocity(params.size(), 0.0f);
  std::vector<float> grad(params.size());

  CpuBackend backend;
  auto tower = Tower::Create(model.get(), &backend, o.batch_size).value();
  const BatchPlan plan(train.size(), PipelineOptions{.mode = Mode::kAsync,
                                                     .num_workers = 1,
                                                     .batch_size = o.batch_size,
                                                     .epochs = o.epochs,
                                                     .seed = o.seed});
  const int64_t dim = train.feature_dim();
  int64_t step = 0;
  for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
    for (const auto& [rows, global_size] : plan.EpochBatches(0, plan.EpochPermutation(epoch))) {
      std::vector<float> x;
      std::vector<int32_t> y;
      for (int64_t row : rows) {
        x.insert(x.end(), train.features.begin() + row * dim,
                 train.features.begin() + (row + 1) * dim);
        y.push_back(train.labels[row]);
      }
      EXPECT_EQ(global_size, static_cast<int64_t>(rows.size()));
      tower->ForwardBackward(params.data(), rows.size(), x.data(), y.data(), 1.0f / global_size,
                             grad.data())
          .value();
      const SgdMomentumFn sgd{o.lr.At(step), o.sgd.momentum, o.sgd.weight_decay};
      for (size_t i = 0; i < params.size(); ++i) params[i] = sgd(params[i], grad[i], velocity[i]);
      ++step;
    }
  }
  *steps = step;
  return params;
}

TEST(AsyncEquivalence, OneWorkerIsBitwiseSequentialMinibatchSgd) {
  // 203 examples and batch 16: every epoch ends with a short batch of 11.
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  const TrainerOptions options = AsyncOptions();
  auto result = Train(options, train, Dataset());
  ASSERT_TRUE(result.ok()) << result.status();
  int64_t steps = 0;
  const std::vector<float> expected = SequentialSgd(options, train, &steps);
  EXPECT_EQ(result->steps, steps);
  EXPECT_EQ(result->steps, 3 * 13);
  EXPECT_EQ(result->staleness_max, 0u);
  ASSERT_EQ(result->params.size(), expected.size());
  EXPECT_EQ(CountBitwiseDifferences(result->params, expected), 0);

  // Not vacuous: the schedule, momentum and weight decay each change the result.
  for (int variant = 0; variant < 3; ++variant) {
    TrainerOptions other = options;
    if (variant == 0) other.lr.kind = LrSchedule::Kind::kConstant;
    if (variant == 1) other.sgd.momentum = 0.0f;
    if (variant == 2) other.sgd.weight_decay = 0.0f;
    int64_t unused = 0;
    EXPECT_GT(CountBitwiseDifferences(SequentialSgd(other, train, &unused), expected),
              static_cast<int64_t>(expected.size()) / 2)
        << "variant " << variant;
  }
}

// ssp runs Hogwild's updates; with one worker nothing ever waits or races, so any bound gives
// sequential SGD bitwise too.
TEST(AsyncEquivalence, OneWorkerSspIsBitwiseSequentialMinibatchSgd) {
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  TrainerOptions options = AsyncOptions();
  int64_t steps = 0;
  const std::vector<float> expected = SequentialSgd(options, train, &steps);
  options.mode = Mode::kSsp;
  for (int64_t bound : {0, 3}) {
    SCOPED_TRACE(bound);
    options.staleness_bound = bound;
    auto result = Train(options, train, Dataset());
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->steps, steps);
    ASSERT_EQ(result->params.size(), expected.size());
    EXPECT_EQ(CountBitwiseDifferences(result->params, expected), 0);
  }
}

// locked and round_robin run Hogwild's updates in an order of their own; with one worker the
// lock is never contended and the turn is always its own, so both are sequential SGD bitwise.
TEST(AsyncEquivalence, OneWorkerLockedAndRoundRobinAreBitwiseSequentialMinibatchSgd) {
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  TrainerOptions options = AsyncOptions();
  int64_t steps = 0;
  const std::vector<float> expected = SequentialSgd(options, train, &steps);
  for (Mode mode : {Mode::kLocked, Mode::kRoundRobin}) {
    SCOPED_TRACE(ModeName(mode));
    options.mode = mode;
    auto result = Train(options, train, Dataset());
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->steps, steps);
    EXPECT_EQ(result->staleness_max, 0u);
    ASSERT_EQ(result->params.size(), expected.size());
    EXPECT_EQ(CountBitwiseDifferences(result->params, expected), 0);
  }
}

// local_sgd with one worker: its replica takes the sequential steps and each averaging of one
// replica is a copy (x / 1 == x). The learning rate of a round is that of its first step, so a
// decaying schedule is followed exactly for H = 1; for H = 3 the schedule is constant.
TEST(AsyncEquivalence, OneWorkerLocalSgdIsBitwiseSequentialMinibatchSgd) {
  const Dataset train = testing::SyntheticDataset(203, 10, 4, 77);
  for (int64_t every : {1, 3}) {
    SCOPED_TRACE(every);
    TrainerOptions options = AsyncOptions();
    if (every > 1) options.lr = LrSchedule{.base_lr = 0.2f};
    int64_t steps = 0;
    const std::vector<float> expected = SequentialSgd(options, train, &steps);
    options.mode = Mode::kLocalSgd;
    options.average_every = every;
    auto result = Train(options, train, Dataset());
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->steps, steps);
    ASSERT_EQ(result->params.size(), expected.size());
    EXPECT_EQ(CountBitwiseDifferences(result->params, expected), 0);
  }
}

TEST(AsyncEquivalence, SameSeedIsBitwiseReproducibleWithOneWorker) {
  const Dataset train = testing::SyntheticDataset(120, 6, 3, 5);
  TrainerOptions options = AsyncOptions();
  options.epochs = 2;
  auto a = Train(options, train, Dataset());
  auto b = Train(options, train, Dataset());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(CountBitwiseDifferences(a->params, b->params), 0);
  options.seed += 1;
  auto c = Train(options, train, Dataset());
  ASSERT_TRUE(c.ok());
  EXPECT_GT(CountBitwiseDifferences(a->params, c->params), 0);
}

}  // namespace
}  // namespace hogwild
