// Helper of crash_checkpoint_test: writes checkpoints into a directory as fast as it can, for
// ever, each one self-consistent (every parameter equals the global step), continuing from the
// checkpoint already there. The test SIGKILLs it at random moments.
//   checkpoint_crash_helper <dir> <num_params>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trainer/checkpoint/checkpoint.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: checkpoint_crash_helper <dir> <num_params>\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t num_params = std::atoll(argv[2]);
  int64_t step = 0;
  auto latest = hogwild::ReadLatestCheckpoint(dir);
  if (!latest.ok()) {
    std::fprintf(stderr, "helper: %s\n", std::string(latest.status().message()).c_str());
    return 1;
  }
  if (latest->has_value()) step = (*latest)->global_step + 1;
  hogwild::Checkpoint c;
  c.signature = {.model_name = "logreg",
                 .input_shape = {num_params - 1},
                 .num_classes = 2,
                 .layers = {"crash helper"},
                 .num_params = num_params,
                 .mode = hogwild::Mode::kSync,
                 .num_workers = 1,
                 .batch_size = 1,
                 .seed = 1,
                 .train_examples = 1};
  c.next_step = {0};
  for (;; ++step) {
    c.global_step = step;
    c.next_step[0] = step;
    c.params.assign(num_params, static_cast<float>(step));
    c.optimizer_state.assign(1, std::vector<float>(num_params, -static_cast<float>(step)));
    const absl::Status status = hogwild::WriteCheckpoint(dir, c);
    if (!status.ok()) {
      std::fprintf(stderr, "helper: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
}
