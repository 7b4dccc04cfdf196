// The flags of the modes' own options, shared by the commands that run every mode
// (//trainer:train for dense networks, //sparse:train for the sparse workloads, //sim:simulate),
// so that their names, defaults and help are defined once: --staleness_bound (ssp),
// --backup_workers (backup), --average_every and the outer optimizer's --outer_lr,
// --outer_momentum and --outer_nesterov (local_sgd, async_local_sgd), Streaming DiLoCo's
// --fragments, --overlap_steps and --mix_alpha (local_sgd), --delayed_nesterov and
// --dynamic_local_updates (async_local_sgd), --fixed_point_bits and --fixed_point_range
// (buckwild). Their defaults are
// sync/policy_factory.h's ModeOptions'; their ranges are checked by each command's library
// (TrainerOptions, ValidateSparseModeOptions).
#ifndef HOGWILD_TRAINER_CLI_MODE_FLAGS_H_
#define HOGWILD_TRAINER_CLI_MODE_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/mode.h"
#include "sync/mode_options.h"
#include "sync/outer_optimizer.h"
#include "sync/streaming.h"
#include "trainer/trainer_options.h"

ABSL_DECLARE_FLAG(int64_t, staleness_bound);
ABSL_DECLARE_FLAG(int32_t, backup_workers);
ABSL_DECLARE_FLAG(int64_t, average_every);
ABSL_DECLARE_FLAG(double, outer_lr);
ABSL_DECLARE_FLAG(double, outer_momentum);
ABSL_DECLARE_FLAG(bool, outer_nesterov);
ABSL_DECLARE_FLAG(int64_t, delayed_nesterov);
ABSL_DECLARE_FLAG(bool, dynamic_local_updates);
ABSL_DECLARE_FLAG(int32_t, fragments);
ABSL_DECLARE_FLAG(int64_t, overlap_steps);
ABSL_DECLARE_FLAG(double, mix_alpha);
ABSL_DECLARE_FLAG(int32_t, fixed_point_bits);
ABSL_DECLARE_FLAG(double, fixed_point_range);

namespace hogwild {

// Refuses a mode flag typed on the command line for a run that would not read it, whatever its
// value (a library sees only values, so it can refuse only ones other than the default): one
// for another mode ("--staleness_bound has no effect in async mode; it is for ssp mode
// (--mode=ssp)"), and --staleness_bound with `num_workers` == 1 (no worker can run ahead).
// Errors: kInvalidArgument naming the flag and the mode or worker count that reads it.
absl::Status RefuseUnreadModeFlags(Mode mode, int num_workers);

// --mode's help, the same in every command that runs every mode.
inline constexpr char kModeFlagHelp[] =
    "the update policy: async (Hogwild!), sync (tower averaging), ssp (async within a staleness "
    "bound), backup (sync without the slowest workers), local_sgd (periodic averaging), locked "
    "(one lock around every step), round_robin (updates applied in the workers' turn), "
    "async_local_sgd (each worker pushes its local steps when done), cyclades (sparse "
    "workloads: conflict-free rounds of --batch_size updates) or buckwild (sparse linear "
    "models: Hogwild! with an 8- or 16-bit fixed-point model); or the presets diloco "
    "(local_sgd with DiLoCo's outer optimizer) and streaming_diloco (diloco with 2 fragments, "
    "1-step overlap, mixing 0.5)";

// The rules that change what an update does, for a banner: ", lr / staleness",
// ", delay-adaptive lr", ", updates staler than R dropped" (async), ", rounds of H local steps",
// ", outer optimizer lr 0.7 momentum 0.9 (Nesterov)" (local_sgd, async_local_sgd),
// ", streaming: 2 fragments, 1-step overlap, mix 0.5" (local_sgd), ", outer momentum updated
// every N pushes (delayed)", ", rounds by worker speed" (async_local_sgd); "" when none. Pure.
std::string UpdateRulesText(const TrainerOptions& options);

// What --mode names: the update policy, and the defaults of its own flags.
struct ModeChoice {
  Mode mode = Mode::kAsync;
  ModeOptions defaults;  // ModeOptions{} for a mode's own name; a preset's values otherwise
};

// --mode's value: a mode's name (core/mode.h ParseMode), or a preset, which is a mode with other
// defaults for its own flags (each flag given on the command line still wins):
//   diloco            local_sgd with DiLoCo's outer optimizer (sync/outer_optimizer.h kDiloco:
//                     --outer_lr=0.7 --outer_momentum=0.9 --outer_nesterov)
//   streaming_diloco  diloco with Streaming DiLoCo's fragments (sync/streaming.h): --fragments=2
//                     --overlap_steps=1 --mix_alpha=0.5
// The run is then that mode's (its log, checkpoints and results say local_sgd). Errors:
// kInvalidArgument "--mode: unknown mode ..." naming the modes and the presets. Pure.
absl::StatusOr<ModeChoice> ParseModeFlag(absl::string_view value);

// `status` with a note when --mode's value `mode_value` is a preset and the message names a flag
// the preset set but the command line did not give: "...; --mode=diloco set --outer_lr=0.7
// --outer_momentum=0.9 --outer_nesterov", so an error about a flag nobody typed says where it
// came from. Otherwise `status` as it is. Reads flags.
absl::Status WithPresetNote(const absl::Status& status, absl::string_view mode_value);

// Every mode flag's value, whatever the mode (the sparse trainers refuse a non-default value in a
// mode that does not read it: sparse/policy_workers.h ValidateSparseModeOptions): the flag's
// when it was given on the command line, else `defaults`' (ModeChoice::defaults). Reads flags;
// call after parsing.
ModeOptions ModeOptionsFromFlags(const ModeOptions& defaults = {});

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_MODE_FLAGS_H_
