// The embedding example of README.md, compiled (not run) so the README stays correct.
#include <cstdio>

#include "core/status_macros.h"
#include "trainer/data/mnist.h"
#include "trainer/trainer.h"

absl::Status TrainBothModes() {
  HOGWILD_ASSIGN_OR_RETURN(hogwild::DatasetInfo info, hogwild::LookupDataset("fashion_mnist"));
  HOGWILD_ASSIGN_OR_RETURN(hogwild::Dataset train, LoadMnistSplit(info, info.default_dir, "train"));
  HOGWILD_ASSIGN_OR_RETURN(hogwild::Dataset test, LoadMnistSplit(info, info.default_dir, "t10k"));
  hogwild::Normalize(train, test);

  hogwild::TrainerOptions options;
  options.model = {.name = "mlp", .hidden = {256, 256}};
  options.num_workers = 2;
  options.epochs = 3;
  options.lr.base_lr = 0.05f;
  for (hogwild::Mode mode : {hogwild::Mode::kAsync, hogwild::Mode::kSync}) {
    options.mode = mode;  // the library exposes both modes; only the CLI fixes one at build time
    HOGWILD_ASSIGN_OR_RETURN(hogwild::TrainResult result, hogwild::Train(options, train, test));
    std::printf("%s\n", hogwild::FormatSummary(result).c_str());
  }
  return absl::OkStatus();
}
