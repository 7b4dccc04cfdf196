// The state an update policy keeps beyond the parameters and the optimizer's buffers, which a
// checkpoint must hold for a resume to continue exactly (async_local_sgd: each worker's replica,
// anchor and round position, the outer momentum; sync/async_local_sgd.h documents its layout).
// Opaque to the checkpoint, which stores it (format version 8) and checks only its shape (every
// buffer [P], every value finite); the policy that wrote it checks its layout on restore
// (UpdatePolicy::RestoreState). Empty in the policies whose cut leaves no such state.
#ifndef HOGWILD_SYNC_MODE_STATE_H_
#define HOGWILD_SYNC_MODE_STATE_H_

#include <cstdint>
#include <vector>

namespace hogwild {

struct ModeState {
  std::vector<std::vector<float>> buffers;  // each [P] float32
  std::vector<int64_t> counters;            // steps, pushes, flags (0 or 1)
  std::vector<double> seconds;              // durations on the policy's clock

  bool empty() const { return buffers.empty() && counters.empty() && seconds.empty(); }
  bool operator==(const ModeState&) const = default;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_MODE_STATE_H_
