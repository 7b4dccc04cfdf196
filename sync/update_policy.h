// How a worker's gradient becomes a parameter update: the one seam between the two training
// modes. Worker w runs, every step:
//
//   absl::Span<const float> params = policy.BeginStep(w);     // [P] the parameters to read
//   ... compute grad ([P]) on its batch from `params` ...
//   StatusOr<StepStats> stats = policy.FinishStep(w, grad, lr);
//
// Implementations: Hogwild (async, sync/hogwild.h) and TowerAverage (sync, sync/tower_average.h).
// Both apply the SGD rule of kernels/functors.h SgdMomentumFn.
//
// Gradient scaling is the caller's: the gradient handed to FinishStep is the gradient of the
// loss *sum* over the worker's examples divided by the number of examples of the step's batch
// (the worker's own batch in async mode, the global batch in sync mode), so that summing the
// workers' gradients in sync mode gives the example-weighted average.
#ifndef HOGWILD_SYNC_UPDATE_POLICY_H_
#define HOGWILD_SYNC_UPDATE_POLICY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hogwild {

// Optimizer hyper-parameters other than the learning rate (which follows a schedule and is
// passed per step). Defaults give plain SGD.
struct SgdOptions {
  float momentum = 0.0f;      // in [0, 1)
  float weight_decay = 0.0f;  // L2 coefficient, >= 0
  // Async only: divide the learning rate by max(1, staleness) (Zhang et al., IJCAI 2016).
  bool staleness_aware_lr = false;
};

struct StepStats {
  // Updates applied by other workers between this worker's read and its update (0 in sync).
  uint64_t staleness = 0;
  // The learning rate actually applied (after staleness scaling).
  float applied_lr = 0.0f;
};

class UpdatePolicy {
 public:
  virtual ~UpdatePolicy() = default;

  // "async" or "sync".
  virtual std::string mode() const = 0;
  virtual int num_workers() const = 0;

  // Returns the parameters worker `worker` reads this step: [P] float32 host memory, valid and
  // unchanged by this worker's peers' updates... (async: a private snapshot; sync: the shared
  // array itself, which the step barrier keeps unchanged until FinishStep) until FinishStep.
  // Errors: kCancelled after Cancel().
  virtual absl::StatusOr<absl::Span<const float>> BeginStep(int worker) = 0;

  // Applies (async) or contributes to (sync) the update from `grad` ([P] float32, owned by the
  // caller and unchanged until this returns) with learning rate `lr` (> 0).
  // Errors: kCancelled after Cancel() (sync: also when a peer cancels while this one waits).
  virtual absl::StatusOr<StepStats> FinishStep(int worker, absl::Span<const float> grad,
                                               float lr) = 0;

  // Releases every worker blocked in this policy and makes later calls return kCancelled.
  // Thread-safe, idempotent, never blocks.
  virtual void Cancel() = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_UPDATE_POLICY_H_
