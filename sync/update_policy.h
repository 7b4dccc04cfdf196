// How a worker's gradient becomes a parameter update: the one seam between the two training
// modes. Worker w runs, every step:
//
//   absl::Span<const float> params = policy.BeginStep(w);     // [P] the parameters to read
//   ... compute grad ([P]) on its batch from `params` ...
//   StatusOr<StepStats> stats = policy.FinishStep(w, grad, lr);
//
// Implementations: Hogwild (async, sync/hogwild.h) and TowerAverage (sync, sync/tower_average.h)
// for host memory (CPU workers); DeviceHogwild (sync/device_hogwild.h) and NcclTowerAverage
// (sync/nccl_tower_average.h) for GPU workers. All apply the SGD rule of kernels/functors.h
// SgdMomentumFn.
//
// Memory: the spans of BeginStep/FinishStep live in the memory of the backend that worker w
// passed to AttachWorker(): host memory for the CPU policies (which need no AttachWorker), device
// memory of the worker's GPU for the GPU policies. A span is only a pointer and a size there; it
// is never dereferenced on the host when it holds device memory.
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
#include "kernels/backend.h"

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

// The statistics of one asynchronous update: staleness = updates applied by other workers
// between this worker's read (at version `read_version`) and now (`version_now`; the worker's own
// previous update completed before its read, so only others' updates count), and the learning
// rate to apply: `lr`, divided by the staleness when `staleness_aware_lr` and staleness > 1
// (Zhang et al., IJCAI 2016). Shared by the host and device Hogwild policies. Pure.
inline StepStats AsyncStepStats(uint64_t version_now, uint64_t read_version, float lr,
                                bool staleness_aware_lr) {
  StepStats stats;
  stats.staleness = version_now - read_version;
  stats.applied_lr = lr;
  if (staleness_aware_lr && stats.staleness > 1) {
    stats.applied_lr = lr / static_cast<float>(stats.staleness);
  }
  return stats;
}

class UpdatePolicy {
 public:
  virtual ~UpdatePolicy() = default;

  // "async" or "sync".
  virtual std::string mode() const = 0;
  virtual int num_workers() const = 0;

  // Called once by worker `worker` on its own thread, before its first BeginStep, with the backend
  // it computes on (which must outlive its last FinishStep). GPU policies allocate the worker's
  // device-side state here and enqueue their copies and update kernels on the backend's stream.
  // The CPU policies need nothing: the default accepts any backend.
  // Errors: kInvalidArgument when the backend is of the wrong kind; allocation/CUDA errors.
  virtual absl::Status AttachWorker(int /*worker*/, Backend* /*backend*/) {
    return absl::OkStatus();
  }

  // Copies the current parameters into `out` ([P] float32, host memory), for evaluation and the
  // final result. Async: a Hogwild snapshot (each element one that some worker wrote); sync:
  // exact when no step is between its two barriers. Thread-safe; may be called from any thread,
  // including after the workers have stopped. Errors: device errors of the GPU policies.
  virtual absl::Status ReadParams(absl::Span<float> out) const = 0;

  // Returns the parameters worker `worker` reads this step: [P] float32 in the worker's backend
  // memory (see Memory above), valid and unchanged by this worker's peers' updates (async: a
  // private snapshot; sync: the shared array or this GPU's replica, which the step barrier keeps
  // unchanged until FinishStep) until FinishStep. GPU policies may return before the snapshot
  // copy has run: it is enqueued on the worker's stream, ahead of the worker's own ops.
  // Errors: kCancelled after Cancel().
  virtual absl::StatusOr<absl::Span<const float>> BeginStep(int worker) = 0;

  // Applies (async) or contributes to (sync) the update from `grad` ([P] float32 in the worker's
  // backend memory, owned by the caller and unchanged until this returns; on a GPU, written by
  // ops enqueued on the worker's stream) with learning rate `lr` (> 0). GPU async: the update
  // kernel is enqueued on the worker's stream and may still run after this returns.
  // Errors: kCancelled after Cancel() (sync: also when a peer cancels while this one waits).
  virtual absl::StatusOr<StepStats> FinishStep(int worker, absl::Span<const float> grad,
                                               float lr) = 0;

  // Releases every worker blocked in this policy and makes later calls return kCancelled.
  // Thread-safe, idempotent, never blocks.
  virtual void Cancel() = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_UPDATE_POLICY_H_
