// The bridge between a training run's live state and a Checkpoint: which fields identify the
// run (the signature), how the state is captured, and how it is restored for --resume. The
// state itself (parameters, global step, optimizer state) comes from the update policy
// (sync/update_policy.h PolicyState), so this works for every policy, on CPUs and GPUs alike.
#ifndef HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_STATE_H_
#define HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_STATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "sync/update_policy.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/data/dataset.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/model/model.h"

namespace hogwild {

// The fingerprint of a training set: zlib crc32 of its features ([N, D] float32 bytes, as given
// to Train(), i.e. after normalization, which is bitwise reproducible) followed by its labels
// ([N] int32 bytes). Reads every byte once (0.4 s for Fashion-MNIST's 188 MB on a loaded 2-core
// VM), so Train() computes it only for runs with a checkpoint_dir. Pure.
uint32_t DatasetFingerprint(const Dataset& dataset);

// The part of a signature that identifies `model` trained on `train`: model_name, input_shape,
// num_classes, layers, num_params, train_examples and dataset (its name and
// DatasetFingerprint); the run's fields keep their defaults.
CheckpointSignature ModelSignature(const Model& model, const Dataset& train);

// The signature of a run of `model` with these settings on `train` (its size, name and
// DatasetFingerprint).
CheckpointSignature MakeSignature(const Model& model, Mode mode, int num_workers,
                                  int64_t batch_size, uint64_t seed, const Dataset& train);

// The checkpoint of the run's current state: `policy`'s PolicyState and each worker's next step
// (`next_step`, [W]), with the epoch the slowest worker is in.
// Thread-safety: only while no worker is inside a step (trainer/checkpoint/step_boundary.h).
// Errors: the policy's (device errors of the GPU policies).
absl::StatusOr<Checkpoint> CaptureState(const CheckpointSignature& signature,
                                        const UpdatePolicy& policy, const BatchPlan& plan,
                                        const std::vector<int64_t>& next_step);

// Restores parameters, global step, momentum and, in one process, the workers' positions (the
// clocks of ssp, sync/stale_synchronous.h) from `checkpoint` (whose signature has been checked)
// into `policy`, before any worker starts. Errors: UpdatePolicy::RestoreState's
// (kFailedPrecondition naming --momentum when one has momentum and the other not).
absl::Status RestoreState(const Checkpoint& checkpoint, UpdatePolicy& policy);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CHECKPOINT_CHECKPOINT_STATE_H_
