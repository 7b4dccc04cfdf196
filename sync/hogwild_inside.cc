#include "sync/hogwild_inside.h"

#include <utility>

#include "core/status_macros.h"

namespace hogwild {

HogwildInside::HogwildInside(Mode mode, ParameterStore* store, int num_workers, SgdOptions options,
                             Hogwild::ReadPoint read_point)
    : UpdatePolicy(mode, store, num_workers, options),
      updates_(store, num_workers, options, read_point) {}

int HogwildInside::num_optimizer_buffers() const { return updates_.num_optimizer_buffers(); }

int HogwildInside::num_optimizer_steps() const { return updates_.num_optimizer_steps(); }

absl::Status HogwildInside::DoReadParams(absl::Span<float> out) const {
  return updates_.ReadParams(out);
}

void HogwildInside::DoCancel() { updates_.Cancel(); }

absl::StatusOr<std::vector<std::vector<float>>> HogwildInside::DoSaveOptimizerState() const {
  HOGWILD_ASSIGN_OR_RETURN(PolicyState state, updates_.SaveState());
  return std::move(state.optimizer_state);
}

std::vector<uint64_t> HogwildInside::DoSaveOptimizerSteps() const {
  absl::StatusOr<PolicyState> state = updates_.SaveState();
  return state.ok() ? state->optimizer_steps : std::vector<uint64_t>{};
}

void HogwildInside::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  restored_steps_ = steps;
}

absl::Status HogwildInside::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& buffers) {
  // The base class has restored the store already; Hogwild restores it again (the same values)
  // together with its optimizer state, and re-pins its snapshots to them.
  PolicyState state;
  state.global_step = store()->version();
  state.params.assign(store()->unsafe_values().begin(), store()->unsafe_values().end());
  state.optimizer_state = buffers;
  state.optimizer_steps = restored_steps_;
  return updates_.RestoreState(state);
}

}  // namespace hogwild
