// The command line turns the library's option-field names into flags: every option error that
// ValidateOptions can produce comes out naming the flag a user typed, never a C++ field.
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "trainer/cli/option_flags.h"
#include "trainer/trainer_options.h"

namespace hogwild {
namespace {

TrainerOptions Valid() {
  TrainerOptions o;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  return o;
}

TEST(OptionFlags, EveryOptionErrorNamesTheFlag) {
  struct Case {
    std::function<void(TrainerOptions&)> break_it;
    std::string field, flag;
  };
  const std::vector<Case> cases = {
      {[](TrainerOptions& o) { o.num_workers = 0; }, "TrainerOptions::num_workers=0",
       "--workers=0"},
      {[](TrainerOptions& o) { o.batch_size = -1; }, "TrainerOptions::batch_size=-1",
       "--batch_size=-1"},
      {[](TrainerOptions& o) { o.epochs = 0; }, "TrainerOptions::epochs=0", "--epochs=0"},
      {[](TrainerOptions& o) { o.lr.base_lr = -1; }, "LrSchedule::base_lr=-1", "--lr=-1"},
      {[](TrainerOptions& o) { o.lr.decay_rate = 2; }, "LrSchedule::decay_rate=2",
       "--lr_decay_rate=2"},
      {[](TrainerOptions& o) { o.lr.decay_steps = 0; }, "LrSchedule::decay_steps=0",
       "--lr_decay_steps=0"},
      {[](TrainerOptions& o) { o.sgd.momentum = 1; }, "TrainerOptions::sgd.momentum=1",
       "--momentum=1"},
      {[](TrainerOptions& o) { o.sgd.weight_decay = -1; }, "TrainerOptions::sgd.weight_decay=-1",
       "--weight_decay=-1"},
      {[](TrainerOptions& o) { o.eval_every_steps = -2; }, "TrainerOptions::eval_every_steps=-2",
       "--eval_every=-2"},
      {[](TrainerOptions& o) { o.log_every_steps = 0; }, "TrainerOptions::log_every_steps=0",
       "--log_every=0"},
      {[](TrainerOptions& o) { o.checkpoint_every_steps = -1; },
       "TrainerOptions::checkpoint_every_steps=-1", "--checkpoint_every=-1"},
      {[](TrainerOptions& o) { o.resume = true; }, "TrainerOptions::checkpoint_dir",
       "--checkpoint_dir"},
      {[](TrainerOptions& o) { o.overwrite_checkpoint = true; },
       "TrainerOptions::overwrite_checkpoint needs", "--overwrite_checkpoint needs"},
      {[](TrainerOptions& o) {
         o.checkpoint_dir = "/tmp/x";
         o.resume = true;
         o.overwrite_checkpoint = true;
       },
       "TrainerOptions::resume and TrainerOptions::overwrite_checkpoint",
       "--resume and --overwrite_checkpoint"},
      {[](TrainerOptions& o) {
         o.devices = {DeviceSpec::Gpu(0)};
         o.workers_per_device = 0;
       },
       "TrainerOptions::workers_per_device=0", "--workers_per_device=0"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kSsp;
         o.staleness_bound = -1;
       },
       "TrainerOptions::staleness_bound=-1 is out of range; it must be in [0, 1099511627776]",
       "--staleness_bound=-1 is out of range; it must be in [0, 1099511627776]"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kBackup;
         o.num_workers = 2;
         o.backup_workers = 2;
       },
       "TrainerOptions::backup_workers=2 is out of range; it must be in [0, 1] (fewer than the 2 "
       "workers)",
       "--backup_workers=2 is out of range; it must be in [0, 1] (fewer than the 2 workers)"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kLocalSgd;
         o.average_every = 0;
       },
       "TrainerOptions::average_every=0 is out of range; it must be in [1, 1099511627776]",
       "--average_every=0 is out of range; it must be in [1, 1099511627776]"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kLocalSgd;
         o.streaming.overlap_steps = 8;
       },
       "TrainerOptions::streaming.overlap_steps=8 is out of range; it must be in [0, 7]",
       "--overlap_steps=8 is out of range; it must be in [0, 7]"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kAsyncLocalSgd;
         o.delayed_nesterov = 4;
       },
       "TrainerOptions::delayed_nesterov=4 needs an outer momentum (it delays the outer momentum's updates); give TrainerOptions::outer.momentum",
       "--delayed_nesterov=4 needs an outer momentum (it delays the outer momentum's updates); give --outer_momentum"},
      {[](TrainerOptions& o) {
         o.mode = Mode::kSync;
         o.dynamic_local_updates = true;
       },
       "TrainerOptions::dynamic_local_updates has no effect in sync mode",
       "--dynamic_local_updates has no effect in sync mode"},
  };
  for (const Case& c : cases) {
    TrainerOptions o = Valid();
    c.break_it(o);
    const absl::Status library = ValidateOptions(o);
    ASSERT_EQ(library.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(library.message().find(c.field), std::string::npos) << library;
    const absl::Status cli = WithFlagNames(library);
    EXPECT_EQ(cli.code(), library.code());
    EXPECT_NE(cli.message().find(c.flag), std::string::npos) << cli;
    EXPECT_EQ(cli.message().find("TrainerOptions::"), std::string::npos) << cli;
    EXPECT_EQ(cli.message().find("LrSchedule::"), std::string::npos) << cli;
  }
  EXPECT_TRUE(WithFlagNames(absl::OkStatus()).ok());
}

}  // namespace
}  // namespace hogwild
