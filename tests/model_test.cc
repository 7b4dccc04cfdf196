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
