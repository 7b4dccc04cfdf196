#include "trainer/cli/mode_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

ABSL_FLAG(int64_t, staleness_bound, 3,
          "ssp only (--mode=ssp): a worker starts a step at most this many of its steps ahead of "
          "the slowest worker, >= 0 (0: bulk-synchronous)");
ABSL_FLAG(int32_t, backup_workers, 0,
          "backup only (--mode=backup): each step uses the first workers - backup_workers "
          "gradients to arrive and drops the rest, in [0, workers - 1]");
ABSL_FLAG(int64_t, average_every, 8,
          "local_sgd and async_local_sgd only: local steps per round (local_sgd: between two "
          "averagings of the workers' replicas; async_local_sgd: between a worker's pushes), >= 1");
ABSL_FLAG(double, outer_lr, 1.0,
          "local_sgd and async_local_sgd only: the outer optimizer's learning rate on the "
          "pseudo-gradient (local_sgd: the shared parameters minus the replicas' mean; "
          "async_local_sgd: a worker's pulled parameters minus its replica) "
          "in (0, 2]; 1 with no "
          "--outer_momentum is plain averaging. DiLoCo: --outer_lr=0.7 --outer_momentum=0.9 "
          "--outer_nesterov --optimizer=adamw");
ABSL_FLAG(
    double, outer_momentum, 0.0,
    "local_sgd and async_local_sgd only: the outer optimizer's momentum, in [0, 1) (0: none)");
ABSL_FLAG(bool, outer_nesterov, false,
          "local_sgd and async_local_sgd only: Nesterov momentum for the outer optimizer (needs "
          "--outer_momentum)");
ABSL_FLAG(int32_t, fragments, 1,
          "local_sgd only: Streaming DiLoCo's fragments F, each exchanged every --average_every "
          "steps at its own offset (F contiguous slices of the parameters), in [1, "
          "min(1024, --average_every, parameters)]; 1: all at once");
ABSL_FLAG(int64_t, overlap_steps, 0,
          "local_sgd only: Streaming DiLoCo's tau, the local steps a fragment's exchange overlaps "
          "before its result is merged into the replicas, in [0, --average_every - 1]");
ABSL_FLAG(double, mix_alpha, 0.0,
          "local_sgd only: Streaming DiLoCo's alpha, the merge replica = alpha * replica + "
          "(1 - alpha) * exchanged, in [0, 1) (0: replace)");
ABSL_FLAG(int64_t, delayed_nesterov, 1,
          "async_local_sgd only: pushes between two updates of the outer momentum (Liu et al. "
          "2024's delayed Nesterov; each push between them a plain step of outer_lr / N), >= 1; "
          "1 updates it at every push (naive); > 1 needs --outer_momentum");
ABSL_FLAG(bool, dynamic_local_updates, false,
          "async_local_sgd only: each worker's round is --average_every x (the fastest worker's "
          "time per step / its own) local steps, at least 1, so slow workers push sooner (Liu et "
          "al. 2024's DyLU)");
ABSL_FLAG(int32_t, fixed_point_bits, 8,
          "buckwild only (--mode=buckwild): the model's width in bits, 8 or 16 (fixed point with "
          "stochastic rounding; De Sa et al. 2015's Buckwild!)");
ABSL_FLAG(double, fixed_point_range, 8.0,
          "buckwild only: the largest |weight| the fixed-point model holds, R in (0, 65536]; its "
          "step is R / 2^(bits - 1) (8 bits, R 8: 1/16)");

namespace hogwild {

absl::Status RefuseUnreadModeFlags(Mode mode, int num_workers) {
  // Each flag, the mode that reads it (or both with local rounds), and what reads it as the
  // refusal says it; buckwild's names its command, since the dense trainer has no buckwild.
  constexpr char kLocalRounds[] =
      "local_sgd and async_local_sgd modes (--mode=local_sgd or async_local_sgd)";
  constexpr char kBuckwild[] =
      "buckwild mode of the sparse linear models (//sparse:train --mode=buckwild)";
  const struct {
    const char* flag;
    Mode reader;
    bool local_rounds;
    const char* readers;  // nullptr: "<reader> mode (--mode=<reader>)"
  } mode_flags[] = {{"staleness_bound", Mode::kSsp, false, nullptr},
                    {"backup_workers", Mode::kBackup, false, nullptr},
                    {"average_every", Mode::kLocalSgd, true, kLocalRounds},
                    {"outer_lr", Mode::kLocalSgd, true, kLocalRounds},
                    {"outer_momentum", Mode::kLocalSgd, true, kLocalRounds},
                    {"outer_nesterov", Mode::kLocalSgd, true, kLocalRounds},
                    {"fragments", Mode::kLocalSgd, false, nullptr},
                    {"overlap_steps", Mode::kLocalSgd, false, nullptr},
                    {"mix_alpha", Mode::kLocalSgd, false, nullptr},
                    {"delayed_nesterov", Mode::kAsyncLocalSgd, false, nullptr},
                    {"dynamic_local_updates", Mode::kAsyncLocalSgd, false, nullptr},
                    {"fixed_point_bits", Mode::kBuckwild, false, kBuckwild},
                    {"fixed_point_range", Mode::kBuckwild, false, kBuckwild}};
  for (const auto& [flag, reader, local_rounds, readers] : mode_flags) {
    const bool reads = local_rounds ? HasLocalRounds(mode) : mode == reader;
    if (!reads && absl::flags_internal::WasPresentOnCommandLine(flag)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s has no effect in %s mode; it is for %s", flag, ModeName(mode),
          readers != nullptr
              ? std::string(readers)
              : absl::StrFormat("%s mode (--mode=%s)", ModeName(reader), ModeName(reader))));
    }
  }
  if (num_workers == 1 && absl::flags_internal::WasPresentOnCommandLine("staleness_bound")) {
    return absl::InvalidArgumentError(
        "--staleness_bound has no effect with 1 worker (no worker can run ahead of another); use "
        "more workers");
  }
  return absl::OkStatus();
}

std::string UpdateRulesText(const TrainerOptions& o) {
  std::string rules;
  if (o.sgd.staleness_aware_lr) absl::StrAppend(&rules, ", lr / staleness");
  if (o.sgd.delay_adaptive_lr) absl::StrAppend(&rules, ", delay-adaptive lr");
  if (o.sgd.max_delay > 0) {
    absl::StrAppendFormat(&rules, ", updates staler than %d dropped", o.sgd.max_delay);
  }
  if (HasLocalRounds(o.mode))
    absl::StrAppendFormat(&rules, ", rounds of %d local steps", o.average_every);
  if (!(o.outer == OuterOptimizer{})) {
    absl::StrAppendFormat(&rules, ", outer optimizer lr %g momentum %g%s", o.outer.lr,
                          o.outer.momentum, o.outer.nesterov ? " (Nesterov)" : "");
  }
  if (const StreamingOptions& s = o.streaming; !s.is_default()) {
    absl::StrAppendFormat(&rules, ", streaming: %d fragments, %d-step overlap, mix %g", s.fragments,
                          s.overlap_steps, s.mix_alpha);
  }
  if (o.delayed_nesterov > 1) {
    absl::StrAppendFormat(&rules, ", outer momentum updated every %d pushes (delayed)",
                          o.delayed_nesterov);
  }
  if (o.dynamic_local_updates) absl::StrAppend(&rules, ", rounds by worker speed");
  return rules;
}

namespace {

// The presets: --mode's other values, each a mode with defaults for its flags, and the flags it
// sets as the command line would spell them.
struct Preset {
  const char* name;
  Mode mode;
  ModeOptions defaults;
  const char* flags;
};

const Preset* FindPreset(absl::string_view name) {
  static const Preset kPresets[] = {
      {"diloco", Mode::kLocalSgd, ModeOptions{.outer = kDiloco},
       "--outer_lr=0.7 --outer_momentum=0.9 --outer_nesterov"},
      {"streaming_diloco", Mode::kLocalSgd,
       ModeOptions{
           .outer = kDiloco,
           .streaming = StreamingOptions{.fragments = 2, .overlap_steps = 1, .mix_alpha = 0.5f}},
       "--outer_lr=0.7 --outer_momentum=0.9 --outer_nesterov --fragments=2 --overlap_steps=1 "
       "--mix_alpha=0.5"},
  };
  for (const Preset& preset : kPresets) {
    if (name == preset.name) return &preset;
  }
  return nullptr;
}

}  // namespace

absl::Status WithPresetNote(const absl::Status& status, absl::string_view mode_value) {
  const Preset* preset = FindPreset(mode_value);
  if (status.ok() || preset == nullptr) return status;
  for (absl::string_view flag : absl::StrSplit(preset->flags, ' ')) {
    const std::string name(flag.substr(2, flag.find('=') == absl::string_view::npos
                                              ? absl::string_view::npos
                                              : flag.find('=') - 2));
    if (!absl::flags_internal::WasPresentOnCommandLine(name) &&
        absl::StrContains(status.message(), absl::StrCat("--", name))) {
      return absl::Status(status.code(), absl::StrCat(status.message(), "; --mode=", preset->name,
                                                      " set ", preset->flags));
    }
  }
  return status;
}

absl::StatusOr<ModeChoice> ParseModeFlag(absl::string_view value) {
  if (const Preset* preset = FindPreset(value)) {
    return ModeChoice{.mode = preset->mode, .defaults = preset->defaults};
  }
  const absl::StatusOr<Mode> mode = ParseMode(value);
  if (!mode.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mode: ", mode.status().message(),
        "; or the presets diloco and streaming_diloco (local_sgd with DiLoCo's outer optimizer)"));
  }
  return ModeChoice{.mode = *mode};
}

ModeOptions ModeOptionsFromFlags(const ModeOptions& defaults) {
  auto given = [](const char* flag) { return absl::flags_internal::WasPresentOnCommandLine(flag); };
  ModeOptions o = defaults;
  if (given("staleness_bound")) o.staleness_bound = absl::GetFlag(FLAGS_staleness_bound);
  if (given("backup_workers")) o.backup_workers = absl::GetFlag(FLAGS_backup_workers);
  if (given("average_every")) o.average_every = absl::GetFlag(FLAGS_average_every);
  if (given("outer_lr")) o.outer.lr = static_cast<float>(absl::GetFlag(FLAGS_outer_lr));
  if (given("outer_momentum")) {
    o.outer.momentum = static_cast<float>(absl::GetFlag(FLAGS_outer_momentum));
  }
  if (given("outer_nesterov")) o.outer.nesterov = absl::GetFlag(FLAGS_outer_nesterov);
  if (given("fragments")) o.streaming.fragments = absl::GetFlag(FLAGS_fragments);
  if (given("overlap_steps")) o.streaming.overlap_steps = absl::GetFlag(FLAGS_overlap_steps);
  if (given("mix_alpha"))
    o.streaming.mix_alpha = static_cast<float>(absl::GetFlag(FLAGS_mix_alpha));
  if (given("delayed_nesterov")) o.delayed_nesterov = absl::GetFlag(FLAGS_delayed_nesterov);
  if (given("dynamic_local_updates")) {
    o.dynamic_local_updates = absl::GetFlag(FLAGS_dynamic_local_updates);
  }
  if (given("fixed_point_bits")) o.fixed_point_bits = absl::GetFlag(FLAGS_fixed_point_bits);
  if (given("fixed_point_range")) {
    o.fixed_point_range = static_cast<float>(absl::GetFlag(FLAGS_fixed_point_range));
  }
  return o;
}

}  // namespace hogwild
