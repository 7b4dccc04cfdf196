// Async against sync on Fashion-MNIST, from one C++ program.
//   ./readme_example [train examples] [epochs]     (default: all 60000, 3)
#include <cstdio>
#include <cstdlib>

#include "core/status_macros.h"
#include "trainer/data/mnist.h"
#include "trainer/trainer.h"

absl::Status TrainBothModes(int64_t train_examples, int epochs) {
  HOGWILD_ASSIGN_OR_RETURN(hogwild::DatasetInfo info, hogwild::LookupDataset("fashion_mnist"));
  HOGWILD_ASSIGN_OR_RETURN(
      hogwild::TrainTestSplits data,
      hogwild::LoadTrainTest(info, info.default_dir, train_examples, "train examples"));
  hogwild::TrainerOptions options;
  options.model = {.name = "mlp", .hidden = {256, 256}};
  options.num_workers = 2;
  options.epochs = epochs;
  options.lr.base_lr = 0.05f;
  for (hogwild::Mode mode : {hogwild::Mode::kAsync, hogwild::Mode::kSync}) {
    options.mode = mode;  // every mode is a value here, as --mode= is on the command line
    HOGWILD_ASSIGN_OR_RETURN(hogwild::TrainResult result,
                             hogwild::Train(options, data.train, data.test));
    std::printf("%s\n", hogwild::FormatSummary(result).c_str());
  }
  return absl::OkStatus();
}

int main(int argc, char** argv) {
  absl::Status status =
      TrainBothModes(argc > 1 ? std::atoll(argv[1]) : 0, argc > 2 ? std::atoi(argv[2]) : 3);
  if (!status.ok()) {
    std::fprintf(stderr, "readme_example: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
