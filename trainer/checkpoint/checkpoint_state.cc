#include "trainer/checkpoint/checkpoint_state.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "core/status_macros.h"

namespace hogwild {

uint32_t DatasetFingerprint(const Dataset& dataset) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(dataset.features.data()),
                dataset.features.size() * sizeof(float));
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(dataset.labels.data()),
                dataset.labels.size() * sizeof(int32_t));
  return static_cast<uint32_t>(crc);
}

CheckpointSignature ModelSignature(const Model& model, const Dataset& train) {
  CheckpointSignature s;
  s.model_name = model.spec().name;
  s.input_shape = model.spec().input_shape;
  s.num_classes = model.num_classes();
  for (const auto& layer : model.layers()) s.layers.push_back(layer->name());
  s.num_params = model.num_params();
  s.train_examples = train.size();
  s.dataset = DatasetId{.name = train.name, .fingerprint = DatasetFingerprint(train)};
  return s;
}

CheckpointSignature MakeSignature(const Model& model, Mode mode, int num_workers,
                                  int64_t batch_size, uint64_t seed, const Dataset& train) {
  CheckpointSignature s = ModelSignature(model, train);
  s.mode = mode;
  s.num_workers = num_workers;
  s.batch_size = batch_size;
  s.seed = seed;
  return s;
}

absl::StatusOr<Checkpoint> CaptureState(const CheckpointSignature& signature,
                                        const UpdatePolicy& policy, const BatchPlan& plan,
                                        const std::vector<int64_t>& next_step) {
  HOGWILD_ASSIGN_OR_RETURN(PolicyState state, policy.SaveState());
  Checkpoint c;
  c.signature = signature;
  c.params = std::move(state.params);
  c.global_step = static_cast<int64_t>(state.global_step);
  c.optimizer_state = std::move(state.optimizer_state);
  c.optimizer_steps = std::move(state.optimizer_steps);
  c.mode_state = std::move(state.mode_state);
  c.next_step = next_step;
  int64_t epoch = std::numeric_limits<int64_t>::max();
  for (size_t w = 0; w < next_step.size(); ++w) {
    const int64_t per_epoch = plan.StepsPerEpoch(static_cast<int>(w));
    if (per_epoch > 0) epoch = std::min(epoch, next_step[w] / per_epoch);
  }
  c.epoch = epoch == std::numeric_limits<int64_t>::max() ? 0 : epoch;
  return c;
}

absl::Status RestoreState(const Checkpoint& checkpoint, UpdatePolicy& policy) {
  PolicyState state;
  state.global_step = static_cast<uint64_t>(checkpoint.global_step);
  state.params = checkpoint.params;
  state.optimizer_state = checkpoint.optimizer_state;
  state.optimizer_steps = checkpoint.optimizer_steps;
  state.mode_state = checkpoint.mode_state;
  // One process: the workers' positions (ssp's clocks). A job's holds every rank's, and its
  // policies (sync, async) do not pace the workers by them.
  if (checkpoint.signature.num_ranks == 1) state.worker_steps = checkpoint.next_step;
  return policy.RestoreState(state);
}

}  // namespace hogwild
