#include "trainer/checkpoint/checkpoint_state.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_format.h"
#include "sync/hogwild.h"
#include "sync/tower_average.h"

namespace hogwild {
namespace {

// The policy's momentum buffers, one per worker (async) or one (sync); empty buffers when the
// run uses no momentum.
std::vector<std::vector<float>*> Velocities(UpdatePolicy& policy) {
  std::vector<std::vector<float>*> out;
  if (auto* sync = dynamic_cast<TowerAverage*>(&policy)) {
    out.push_back(&sync->velocity());
  } else if (auto* async = dynamic_cast<Hogwild*>(&policy)) {
    for (int w = 0; w < async->num_workers(); ++w) out.push_back(&async->velocity(w));
  }
  return out;
}

}  // namespace

CheckpointSignature MakeSignature(const Model& model, Mode mode, int num_workers,
                                  int64_t batch_size, uint64_t seed, int64_t train_examples) {
  CheckpointSignature s;
  s.model_name = model.spec().name;
  s.input_shape = model.spec().input_shape;
  s.num_classes = model.num_classes();
  for (const auto& layer : model.layers()) s.layers.push_back(layer->name());
  s.num_params = model.num_params();
  s.mode = ModeName(mode);
  s.num_workers = num_workers;
  s.batch_size = batch_size;
  s.seed = seed;
  s.train_examples = train_examples;
  return s;
}

Checkpoint CaptureState(const CheckpointSignature& signature, const ParameterStore& store,
                        UpdatePolicy& policy, const BatchPlan& plan,
                        const std::vector<int64_t>& next_step) {
  Checkpoint c;
  c.signature = signature;
  c.params.resize(store.size());
  c.global_step = static_cast<int64_t>(store.Read(absl::MakeSpan(c.params)));
  c.next_step = next_step;
  int64_t epoch = std::numeric_limits<int64_t>::max();
  for (size_t w = 0; w < next_step.size(); ++w) {
    const int64_t per_epoch = plan.StepsPerEpoch(static_cast<int>(w));
    if (per_epoch > 0) epoch = std::min(epoch, next_step[w] / per_epoch);
  }
  c.epoch = epoch == std::numeric_limits<int64_t>::max() ? 0 : epoch;
  for (std::vector<float>* v : Velocities(policy)) {
    if (!v->empty()) c.velocities.push_back(*v);
  }
  return c;
}

absl::Status RestoreState(const Checkpoint& checkpoint, ParameterStore& store,
                          UpdatePolicy& policy) {
  std::vector<std::vector<float>*> velocities = Velocities(policy);
  const bool run_has_momentum = !velocities.empty() && !velocities[0]->empty();
  const bool checkpoint_has_momentum = !checkpoint.velocities.empty();
  if (run_has_momentum != checkpoint_has_momentum) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot resume: momentum differs: the checkpoint was written %s momentum, this run "
        "uses %s; resume with the checkpoint's --momentum",
        checkpoint_has_momentum ? "with" : "without",
        run_has_momentum ? "momentum" : "none"));
  }
  if (checkpoint_has_momentum && checkpoint.velocities.size() != velocities.size()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot resume: the checkpoint has %d momentum buffers, this run %d",
        checkpoint.velocities.size(), velocities.size()));
  }
  if (static_cast<int64_t>(checkpoint.params.size()) != store.size()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot resume: the checkpoint has %d parameters, this model %d",
        checkpoint.params.size(), store.size()));
  }
  std::copy(checkpoint.params.begin(), checkpoint.params.end(), store.unsafe_values().begin());
  store.RestoreVersion(static_cast<uint64_t>(checkpoint.global_step));
  for (size_t i = 0; i < checkpoint.velocities.size(); ++i) *velocities[i] = checkpoint.velocities[i];
  return absl::OkStatus();
}

}  // namespace hogwild
