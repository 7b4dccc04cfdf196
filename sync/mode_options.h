// The options of the update policies that have any, as one value: what CreateUpdatePolicy
// (sync/policy_factory.h) and the sparse trainers take, and what TrainerOptions' mode fields
// give (trainer/trainer_options.h ModeOptionsOf).
#ifndef HOGWILD_SYNC_MODE_OPTIONS_H_
#define HOGWILD_SYNC_MODE_OPTIONS_H_

#include <cstdint>

#include "sync/outer_optimizer.h"
#include "sync/streaming.h"

namespace hogwild {

// TrainerOptions validates them (see there); the sparse trainers with ValidateSparseModeOptions.
struct ModeOptions {
  int64_t staleness_bound = 3;  // ssp: steps a worker may run ahead of the slowest, >= 0
  int backup_workers = 0;       // backup: gradients dropped per step, in [0, workers)
  int64_t average_every = 8;    // local_sgd, async_local_sgd: local steps per round, >= 1
  OuterOptimizer outer;  // local_sgd, async_local_sgd: the outer step (sync/outer_optimizer.h)
  // local_sgd: Streaming DiLoCo's fragments (sync/streaming.h; default one, exchanged at once).
  StreamingOptions streaming;
  // async_local_sgd (sync/async_local_sgd.h): pushes per outer momentum update (delayed
  // Nesterov, CheckDelayedNesterov), and whether each worker's round length follows its speed.
  int64_t delayed_nesterov = 1;
  bool dynamic_local_updates = false;
  // buckwild (sparse/buckwild.h): the fixed-point model's width (8 or 16 bits) and range R (the
  // weights representable are [-R, R - R / 2^(bits - 1)]).
  int fixed_point_bits = 8;
  float fixed_point_range = 8.0f;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_MODE_OPTIONS_H_
