// TrainerOptions validation (trainer/trainer_options.h): valid options pass, and every bad value
// is refused with a one-line error naming the option field and the value, by ValidateOptions()
// and by Train() before it starts any thread.
#include "trainer/trainer_options.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "trainer/model/lr_schedule.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using testing::ExpectError;

TrainerOptions ValidOptions() {
  TrainerOptions o;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.epochs = 1;
  o.eval_every_epochs = 0;
  return o;
}

TEST(TrainerOptions, ValidOptionsPass) { EXPECT_TRUE(ValidateOptions(ValidOptions()).ok()); }

// Optimizers (issue 15): every optimizer with its defaults is valid on the CPU; a constant out of
// range, one the optimizer does not read, shared state where nothing is shared or there is no
// state, and shared state on GPU workers (the GPU policies keep per-worker state only) are
// refused naming the field; every optimizer is valid on GPU workers too.
TEST(TrainerOptions, OptimizerOptionsAreValidated) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam, OptimizerKind::kAdamW,
                             OptimizerKind::kRmsprop, OptimizerKind::kAdagrad}) {
    TrainerOptions o = ValidOptions();
    o.sgd.optimizer = kind;
    EXPECT_TRUE(ValidateOptions(o).ok()) << static_cast<int>(kind);
    o.devices = {DeviceSpec::Gpu(0)};
    o.num_workers = 1;
    EXPECT_TRUE(ValidateOptions(o).ok()) << static_cast<int>(kind) << ": " << ValidateOptions(o);
  }
  struct Case {
    void (*change)(TrainerOptions&);
    const char* expected;
  };
  const Case cases[] = {
      {[](TrainerOptions& o) { o.sgd.optimizer = static_cast<OptimizerKind>(9); },
       "TrainerOptions::sgd.optimizer=9 is out of range"},
      {[](TrainerOptions& o) { o.sgd.optimizer = OptimizerKind::kNesterov; },
       "TrainerOptions::sgd.momentum=0 is out of range with optimizer nesterov"},
      {[](TrainerOptions& o) {
         o.sgd.optimizer = OptimizerKind::kAdam;
         o.sgd.beta2 = 1.0f;
       },
       "TrainerOptions::sgd.beta2=1 is out of range"},
      {[](TrainerOptions& o) {
         o.sgd.optimizer = OptimizerKind::kAdagrad;
         o.sgd.eps = std::numeric_limits<float>::infinity();
       },
       "TrainerOptions::sgd.eps=inf is out of range"},
      {[](TrainerOptions& o) {
         o.sgd.optimizer = OptimizerKind::kAdagrad;
         o.sgd.momentum = 0.5f;
       },
       "TrainerOptions::sgd.momentum=0.5 has no effect with optimizer adagrad"},
      {[](TrainerOptions& o) { o.sgd.alpha = 0.9f; },
       "TrainerOptions::sgd.alpha=0.9 has no effect with optimizer sgd"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kSync;
         o.sgd.optimizer = OptimizerKind::kAdam;
         o.sgd.shared_optimizer_state = true;
       },
       "TrainerOptions::sgd.shared_optimizer_state=true has no effect in sync mode"},
      {[](TrainerOptions& o) { o.sgd.shared_optimizer_state = true; },
       "has no effect with optimizer sgd without momentum"},
      {[](TrainerOptions& o) {
         o.devices = {DeviceSpec::Gpu(0)};
         o.num_workers = 2;
         o.sgd.optimizer = OptimizerKind::kAdam;
         o.sgd.shared_optimizer_state = true;
       },
       "TrainerOptions::sgd.shared_optimizer_state=true (optimizer adam) is not available on GPU "
       "devices yet"},
  };
  for (const Case& c : cases) {
    TrainerOptions o = ValidOptions();
    c.change(o);
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {c.expected});
  }
}

// Scaling happens once, with the global batch of the mode: a sync run with linear scaling and a
// reference batch of half the global batch is bitwise the run with the doubled rate; async
// counts every worker's batch. Warm-up changes the first steps (and only those).
TEST(TrainerOptions, LrScalingUsesTheGlobalBatchOfTheMode) {
  const Dataset data = testing::SyntheticDataset(120, 6, 3, 2);
  auto run = [&](Mode mode, int workers, float lr, LrSchedule::Scaling scaling, int64_t reference,
                 int64_t warmup) {
    TrainerOptions o = ValidOptions();
    o.mode = mode;
    o.num_workers = workers;
    o.batch_size = 10;
    o.lr.base_lr = lr;
    o.lr.scaling = scaling;
    o.lr.reference_batch = reference;
    o.lr.warmup_steps = warmup;
    absl::StatusOr<TrainResult> r = Train(o, data, Dataset());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->params : std::vector<float>{};
  };
  using S = LrSchedule::Scaling;
  EXPECT_EQ(run(Mode::kSync, 2, 0.05f, S::kLinear, 5, 0),
            run(Mode::kSync, 2, 0.1f, S::kNone, 256, 0));
  EXPECT_NE(run(Mode::kSync, 2, 0.05f, S::kLinear, 10, 0),
            run(Mode::kSync, 2, 0.1f, S::kNone, 256, 0));
  // One async worker: the global batch is 10 per worker x 1.
  EXPECT_EQ(run(Mode::kAsync, 1, 0.05f, S::kSqrt, 40, 0),
            run(Mode::kAsync, 1, 0.025f, S::kNone, 256, 0));
  EXPECT_NE(run(Mode::kSync, 2, 0.05f, S::kNone, 256, 5),
            run(Mode::kSync, 2, 0.05f, S::kNone, 256, 0));
  TrainerOptions o = ValidOptions();
  o.lr.scaling = S::kLinear;
  o.lr.base_lr = 1e38f;  // x 64 / 1 overflows float32
  o.lr.reference_batch = 1;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"outside float32's positive range"});
}

// --noweight_decay_biases: a run differs from one that decays the biases too (it fills the
// policies' no_decay ranges, which tests/optimizer_policies_test.cc checks per element); it
// needs weight decay and CPU devices, and sgd.no_decay is Train()'s own.
TEST(TrainerOptions, WeightDecayBiasesIsAppliedAndValidated) {
  const Dataset data = testing::SyntheticDataset(120, 6, 3, 2);
  TrainerOptions o = ValidOptions();
  o.mode = Mode::kSync;
  o.num_workers = 2;
  o.batch_size = 10;
  o.sgd.weight_decay = 0.1f;
  auto decayed = Train(o, data, Dataset());
  o.weight_decay_biases = false;
  auto exempt = Train(o, data, Dataset());
  ASSERT_TRUE(decayed.ok() && exempt.ok());
  EXPECT_NE(decayed->params, exempt->params);
  o.sgd.weight_decay = 0.0f;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::weight_decay_biases=false has no effect without weight decay"});
  o.sgd.weight_decay = 0.1f;
  o.devices = {DeviceSpec::Gpu(0)};  // the GPU policies honour the exemption too
  o.num_workers = 1;
  EXPECT_TRUE(ValidateOptions(o).ok()) << ValidateOptions(o);
  o = ValidOptions();
  o.sgd.no_decay = {{0, 1}};
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::sgd.no_decay is filled by Train()"});
}

// drop_last: a worker whose shard is smaller than its batch would take no step, and a checkpoint
// does not record the option; both refused, naming the fields and the numbers.
TEST(TrainerOptions, DropLastNeedsAFullBatchPerWorkerAndNoCheckpoint) {
  TrainerOptions o = ValidOptions();
  o.num_workers = 3;
  o.batch_size = 34;
  o.drop_last = true;
  // 100 examples over 3 workers: shards of 33, 33 and 34.
  ExpectError(ValidateOptionsForDataset(o, 100), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::batch_size=34 is larger than the smallest worker's share of the "
               "training set (33 examples = 100 examples / 3 workers, rounded down); with "
               "TrainerOptions::drop_last that worker would take no step, so it must be in "
               "[1, 33]"});
  o.batch_size = 33;
  EXPECT_TRUE(ValidateOptionsForDataset(o, 100).ok());
  o.drop_last = false;
  o.batch_size = 34;
  EXPECT_TRUE(ValidateOptionsForDataset(o, 100).ok());
  o.drop_last = true;
  o.batch_size = 8;
  o.checkpoint_dir = "/tmp/ckpt";
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::drop_last is not available with TrainerOptions::checkpoint_dir "
               "yet (a checkpoint does not record it, so a resume could not check its data "
               "order); train without one of the two"});
}

TEST(TrainerOptions, ZeroWorkersIsRejected) {
  TrainerOptions o = ValidOptions();
  o.num_workers = 0;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::num_workers=0"});
  o.num_workers = -3;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::num_workers=-3"});
  // Train() validates too, before it starts any thread.
  ExpectError(Train(o, testing::SyntheticDataset(10, 2, 2, 1), Dataset()).status(),
              absl::StatusCode::kInvalidArgument, {"TrainerOptions::num_workers=-3"});
}

TEST(TrainerOptions, NonPositiveBatchSizeIsRejected) {
  for (int64_t b : {0, -64}) {
    TrainerOptions o = ValidOptions();
    o.batch_size = b;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
                {"TrainerOptions::batch_size=" + std::to_string(b)});
  }
}

// A tower batch of one example has zero variance: batch norm normalizes it to 0 and its scale
// never moves, so the run could not learn.
TEST(TrainerOptions, BatchNormNeedsTwoExamplesPerTower) {
  TrainerOptions o = ValidOptions();
  o.model = ModelSpec{.name = "cnn_bn", .hidden = {}};
  o.num_workers = 1;
  o.batch_size = 1;
  absl::Status s = ValidateOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "TrainerOptions::model.name=cnn_bn with TrainerOptions::batch_size=1 leaves 1 example "
            "per tower; batch norm needs at least 2 (one example has zero variance, and the model "
            "cannot learn): give TrainerOptions::batch_size of at least 2");
  o.batch_size = 2;
  EXPECT_TRUE(ValidateOptions(o).ok());
  // Sync: the global batch of 5 is split over 3 towers, the smallest of which has 1 example.
  o.mode = Mode::kSync;
  o.num_workers = 3;
  o.batch_size = 5;
  s = ValidateOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "TrainerOptions::model.name=cnn_bn with TrainerOptions::batch_size=5 split over "
            "TrainerOptions::num_workers=3 in sync mode leaves 1 example per tower; batch norm "
            "needs at least 2 (one example has zero variance, and the model cannot learn): give "
            "TrainerOptions::batch_size of at least 6");
  o.batch_size = 6;
  EXPECT_TRUE(ValidateOptions(o).ok());
}

TEST(TrainerOptions, NonPositiveLearningRateIsRejected) {
  for (float lr : {0.0f, -0.1f}) {
    TrainerOptions o = ValidOptions();
    o.lr.base_lr = lr;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
                {"LrSchedule::base_lr=", "> 0"});
  }
  TrainerOptions o = ValidOptions();
  o.lr.base_lr = -0.1f;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::base_lr=-0.1"});
  o.lr.base_lr = std::numeric_limits<float>::quiet_NaN();
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::base_lr=nan"});
}

TEST(TrainerOptions, MomentumOutsideZeroToOneIsRejected) {
  for (float m : {1.0f, -0.5f, 1.5f}) {
    TrainerOptions o = ValidOptions();
    o.sgd.momentum = m;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
                {"TrainerOptions::sgd.momentum=" + absl::StrFormat("%g", m), "[0, 1)"});
  }
}

TEST(TrainerOptions, BadLrScheduleIsRejected) {
  TrainerOptions o = ValidOptions();
  o.lr.kind = LrSchedule::Kind::kExponential;
  o.lr.decay_rate = 1.5f;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"LrSchedule::decay_rate=1.5"});
  o.lr.decay_rate = 0.5f;
  o.lr.decay_steps = 0;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"LrSchedule::decay_steps=0"});
}

TEST(TrainerOptions, NegativeEvalEveryStepsIsRejected) {
  TrainerOptions o = ValidOptions();
  o.eval_every_steps = -5;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::eval_every_steps", "-5"});
}

}  // namespace
}  // namespace hogwild
