#include "trainer/cli/async_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(bool, staleness_aware_lr, false,
          "async only: divide the learning rate by the update's staleness (Zhang et al. 2016)");
ABSL_FLAG(bool, delay_adaptive_lr, false,
          "async only: the delay-adaptive learning rate lr * min(1, workers / staleness) "
          "(Koloskova et al. 2022, Mishchenko et al. 2022): full for the delays the workers make "
          "anyway, smaller beyond them; not with --staleness_aware_lr");
ABSL_FLAG(int64_t, max_delay, 0,
          "async only: drop an update whose staleness exceeds this many updates instead of "
          "applying it (Ringmaster ASGD's R, Maranjyan et al. 2025); 0: none");

namespace hogwild {

void ApplyAsyncFlags(SgdOptions& options) {
  options.staleness_aware_lr = absl::GetFlag(FLAGS_staleness_aware_lr);
  options.delay_adaptive_lr = absl::GetFlag(FLAGS_delay_adaptive_lr);
  options.max_delay = absl::GetFlag(FLAGS_max_delay);
}

}  // namespace hogwild
