// Models by name (trainer/model/model.h): an unknown model name is refused, by Model::Create()
// and by Train(), naming the value and the models there are.
#include "trainer/model/model.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using testing::ExpectError;

// The biases that --noweight_decay_biases exempts: each dense or conv layer's trailing slice.
TEST(Model, BiasRangesAreEachLayersTrailingBiases) {
  auto mlp = Model::Create(ModelSpec{.name = "mlp", .hidden = {256, 256}});
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ((*mlp)->BiasRanges(), (Ranges{{200704, 200960}, {266496, 266752}, {269312, 269322}}));
  auto cnn = Model::Create(ModelSpec{.name = "cnn", .hidden = {}});
  ASSERT_TRUE(cnn.ok()) << cnn.status();
  int64_t biases = 0;
  for (const auto& [begin, end] : (*cnn)->BiasRanges()) {
    ASSERT_LT(begin, end);
    biases += end - begin;
  }
  int64_t expected = 0;
  for (const auto& layer : (*cnn)->layers()) expected += layer->num_bias_params();
  EXPECT_GT(expected, 0);
  EXPECT_EQ(biases, expected);
  EXPECT_EQ((*cnn)->BiasRanges().back().second, (*cnn)->num_params());  // the last layer's
}

TEST(Model, UnknownModelIsRejectedByName) {
  TrainerOptions o;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.epochs = 1;
  o.batch_size = 8;
  o.eval_every_epochs = 0;
  o.model.name = "nope";
  const Dataset data = testing::SyntheticDataset(20, 4, 3, 1);
  ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
              {"'nope'", "logreg", "mlp"});
  ExpectError(Model::Create(o.model).status(), absl::StatusCode::kInvalidArgument, {"nope"});
}

}  // namespace
}  // namespace hogwild
