#include "sync/tower_average.h"

#include "core/status_macros.h"
#include "sync/tower_sum.h"

namespace hogwild {

TowerAverage::TowerAverage(ParameterStore* store, int num_workers, SgdOptions options)
    : UpdatePolicy(Mode::kSync, store, num_workers, options),
      barrier_(num_workers),
      tower_grads_(num_workers, nullptr),
      update_(options, store->size(), num_workers) {}

int TowerAverage::num_optimizer_buffers() const { return update_.num_buffers(); }

int TowerAverage::num_optimizer_steps() const { return update_.num_steps(); }

std::vector<uint64_t> TowerAverage::DoSaveOptimizerSteps() const { return update_.SaveSteps(); }

void TowerAverage::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  update_.RestoreSteps(steps);
}

absl::Status TowerAverage::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> TowerAverage::DoSaveOptimizerState() const {
  return update_.SaveBuffers();
}

absl::Status TowerAverage::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& momentum) {
  update_.RestoreBuffers(momentum);
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> TowerAverage::DoBeginStep(int /*worker*/) {
  // Nobody writes the array between the closing barrier of the last step and the opening
  // barrier of this one, so every tower reads it in place: no copy.
  return DeviceSpan<const float>(store()->unsafe_values());
}

absl::StatusOr<StepStats> TowerAverage::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                     float lr) {
  // A CPU policy: the gradient is in host memory.
  tower_grads_[worker] = grad.data();
  // This update's step count, read before the barrier: worker 0 advances it after the barrier
  // (below), and the previous step's closing barrier ordered its last write before this read.
  const uint64_t step = update_.step() + 1;
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  HOGWILD_RETURN_IF_ERROR(update_.UpdateSlice(
      worker, lr, step,
      [this](int64_t lo, int64_t n, float* sum) {
        SumTowers(absl::MakeConstSpan(tower_grads_), lo, n, sum);
      },
      barrier_, store()->unsafe_values().data()));
  if (worker == 0) {
    store()->CompleteUpdate();
    update_.set_step(step);
  }
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  return StepStats{.staleness = 0, .applied_lr = lr};
}

}  // namespace hogwild
