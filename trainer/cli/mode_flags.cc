#include "trainer/cli/mode_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(int64_t, staleness_bound, 3,
          "ssp only (--mode=ssp): a worker starts a step at most this many of its steps ahead of "
          "the slowest worker, >= 0 (0: bulk-synchronous)");
ABSL_FLAG(int32_t, backup_workers, 0,
          "backup only (--mode=backup): each step uses the first workers - backup_workers "
          "gradients to arrive and drops the rest, in [0, workers - 1]");
ABSL_FLAG(int64_t, average_every, 8,
          "local_sgd only (--mode=local_sgd): local steps between two averagings of the workers' "
          "replicas, >= 1");
