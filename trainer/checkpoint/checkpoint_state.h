// The bridge between a training run's live state and a Checkpoint: which fields identify the
// run (the signature), how the state is captured, and how it is restored for --resume.
#ifndef HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_STATE_H_
#define HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_STATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/model/model.h"

namespace hogwild {

// The signature of a run of `model` with these settings on a training set of
// `train_examples` examples.
CheckpointSignature MakeSignature(const Model& model, Mode mode, int num_workers,
                                  int64_t batch_size, uint64_t seed, int64_t train_examples);

// Copies the state: parameters and version from `store`, the momentum buffers of `policy`
// (a Hogwild or a TowerAverage), each worker's next step.
// Thread-safety: only while no worker is inside a step (see trainer/step_boundary.h).
Checkpoint CaptureState(const CheckpointSignature& signature, const ParameterStore& store,
                        UpdatePolicy& policy, const BatchPlan& plan,
                        const std::vector<int64_t>& next_step);

// Restores parameters, version and momentum from `checkpoint` (whose signature has been
// checked). Errors: kFailedPrecondition when the checkpoint has momentum buffers and the run
// uses no momentum or the other way round (naming --momentum).
absl::Status RestoreState(const Checkpoint& checkpoint, ParameterStore& store,
                          UpdatePolicy& policy);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_STATE_H_
