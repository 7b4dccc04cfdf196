// Convergence on the real data: a short run on the first 10,000 images of the installed
// Fashion-MNIST, 2 workers, in both modes, reaches at least 80% accuracy on the full 10,000-image
// test set. Skipped, with the install command, where the dataset is not installed (CI installs
// it, so there it runs).
#include <cstdio>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "trainer/data/mnist.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

constexpr int64_t kTrainExamples = 10000;
constexpr double kMinAccuracy = 0.80;

class Convergence : public ::testing::Test {
 protected:
  struct Data {
    absl::Status status;
    Dataset train, test;
  };

  // Loaded once for the suite: decompressing the 60,000 training images is most of the cost.
  static void SetUpTestSuite() {
    data_ = new Data;
    const DatasetInfo info = LookupDataset("fashion_mnist").value();
    auto train = LoadMnistSplit(info, info.default_dir, "train");
    auto test = LoadMnistSplit(info, info.default_dir, "t10k");
    if (!train.ok() || !test.ok()) {
      data_->status = train.ok() ? test.status() : train.status();
      return;
    }
    data_->train = train->Head(kTrainExamples);
    data_->test = std::move(*test);
    Normalize(data_->train, data_->test);
  }
  static void TearDownTestSuite() {
    delete data_;
    data_ = nullptr;
  }

  void SetUp() override {
    if (absl::IsNotFound(data_->status)) {
      GTEST_SKIP() << "Fashion-MNIST is not installed (" << data_->status.message()
                   << "); install it with: sudo apt-get install dataset-fashion-mnist";
    }
    ASSERT_TRUE(data_->status.ok()) << data_->status;
    ASSERT_EQ(data_->train.size(), kTrainExamples);
    ASSERT_EQ(data_->test.size(), 10000);
  }

  static TrainerOptions Options(Mode mode) {
    TrainerOptions o;
    o.mode = mode;
    o.num_workers = 2;
    o.model = ModelSpec{.name = "mlp", .hidden = {128}};
    o.epochs = 3;
    // Per worker in async mode, global in sync mode: 2 x 32 examples per step either way.
    o.batch_size = mode == Mode::kSync ? 64 : 32;
    // Momentum with a decaying rate: at a constant rate the final test accuracy of so short a
    // run swings by several points from seed to seed (checked against a NumPy reference of the
    // same model); with the decay it stays within about a point of 83.5%.
    o.lr = LrSchedule{.kind = LrSchedule::Kind::kExponential,
                      .base_lr = 0.01f,
                      .decay_rate = 0.5f,
                      .decay_steps = mode == Mode::kSync ? 150 : 300};  // ~ every 10,000 examples
    o.sgd.momentum = 0.9f;
    o.seed = 1;
    o.eval_every_epochs = 0;  // evaluate once, at the end
    return o;
  }

  static void Report(const TrainResult& r) {
    ::testing::Test::RecordProperty("accuracy_percent", static_cast<int>(1000 * r.final_test_accuracy) / 10);
    ::testing::Test::RecordProperty("examples_per_s", static_cast<int>(r.examples_per_s));
    std::printf("%s\n", FormatSummary(r).c_str());
  }

  static Data* data_;
};

Convergence::Data* Convergence::data_ = nullptr;

TEST_F(Convergence, AsyncTwoWorkersReachEightyPercent) {
  auto result = Train(Options(Mode::kAsync), data_->train, data_->test);
  ASSERT_TRUE(result.ok()) << result.status();
  Report(*result);
  EXPECT_EQ(result->examples, 3 * kTrainExamples);
  EXPECT_GE(result->final_test_accuracy, kMinAccuracy);
}

TEST_F(Convergence, SyncTwoWorkersReachEightyPercent) {
  auto result = Train(Options(Mode::kSync), data_->train, data_->test);
  ASSERT_TRUE(result.ok()) << result.status();
  Report(*result);
  EXPECT_EQ(result->examples, 3 * kTrainExamples);
  EXPECT_EQ(result->staleness_max, 0u);
  EXPECT_GE(result->final_test_accuracy, kMinAccuracy);
}

}  // namespace
}  // namespace hogwild
