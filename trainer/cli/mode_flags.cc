#include "trainer/cli/mode_flags.h"

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/strings/str_format.h"

ABSL_FLAG(int64_t, staleness_bound, 3,
          "ssp only (--mode=ssp): a worker starts a step at most this many of its steps ahead of "
          "the slowest worker, >= 0 (0: bulk-synchronous)");
ABSL_FLAG(int32_t, backup_workers, 0,
          "backup only (--mode=backup): each step uses the first workers - backup_workers "
          "gradients to arrive and drops the rest, in [0, workers - 1]");
ABSL_FLAG(int64_t, average_every, 8,
          "local_sgd only (--mode=local_sgd): local steps between two averagings of the workers' "
          "replicas, >= 1");
ABSL_FLAG(double, outer_lr, 1.0,
          "local_sgd only: the outer optimizer's learning rate on the replicas' pseudo-gradient "
          "(the shared parameters minus the replicas' mean), in (0, 2]; 1 with no "
          "--outer_momentum is plain averaging. DiLoCo: --outer_lr=0.7 --outer_momentum=0.9 "
          "--outer_nesterov --optimizer=adamw");
ABSL_FLAG(double, outer_momentum, 0.0,
          "local_sgd only: the outer optimizer's momentum, in [0, 1) (0: none)");
ABSL_FLAG(bool, outer_nesterov, false,
          "local_sgd only: Nesterov momentum for the outer optimizer (needs --outer_momentum)");
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

namespace hogwild {

absl::Status RefuseUnreadModeFlags(Mode mode, int num_workers) {
  const struct {
    const char* flag;
    Mode reader;
  } mode_flags[] = {{"staleness_bound", Mode::kSsp},     {"backup_workers", Mode::kBackup},
                    {"average_every", Mode::kLocalSgd},  {"outer_lr", Mode::kLocalSgd},
                    {"outer_momentum", Mode::kLocalSgd}, {"outer_nesterov", Mode::kLocalSgd},
                    {"fragments", Mode::kLocalSgd},      {"overlap_steps", Mode::kLocalSgd},
                    {"mix_alpha", Mode::kLocalSgd}};
  for (const auto& [flag, reader] : mode_flags) {
    if (mode != reader && absl::flags_internal::WasPresentOnCommandLine(flag)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s has no effect in %s mode; it is for %s mode (--mode=%s)", flag,
                          ModeName(mode), ModeName(reader), ModeName(reader)));
    }
  }
  if (num_workers == 1 && absl::flags_internal::WasPresentOnCommandLine("staleness_bound")) {
    return absl::InvalidArgumentError(
        "--staleness_bound has no effect with 1 worker (no worker can run ahead of another); use "
        "more workers");
  }
  return absl::OkStatus();
}

OuterOptimizer OuterOptimizerFromFlags() {
  return OuterOptimizer{.lr = static_cast<float>(absl::GetFlag(FLAGS_outer_lr)),
                        .momentum = static_cast<float>(absl::GetFlag(FLAGS_outer_momentum)),
                        .nesterov = absl::GetFlag(FLAGS_outer_nesterov)};
}

StreamingOptions StreamingOptionsFromFlags() {
  return StreamingOptions{.fragments = absl::GetFlag(FLAGS_fragments),
                          .overlap_steps = absl::GetFlag(FLAGS_overlap_steps),
                          .mix_alpha = static_cast<float>(absl::GetFlag(FLAGS_mix_alpha))};
}

}  // namespace hogwild
