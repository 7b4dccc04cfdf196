#include "sync/tower_average.h"

#include "core/status_macros.h"
#include "sync/tower_sum.h"

namespace hogwild {

TowerAverage::TowerAverage(ParameterStore* store, int num_workers, SgdOptions options)
    : UpdatePolicy(Mode::kSync, store, num_workers, options),
      barrier_(num_workers),
      tower_grads_(num_workers, nullptr),
      sparse_towers_(num_workers, nullptr),
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

absl::StatusOr<StepStats> TowerAverage::Step(
    int worker, float lr, absl::FunctionRef<absl::Status(uint64_t step)> update) {
  // This update's step count, read before the barrier: worker 0 advances it after the barrier
  // (below), and the previous step's closing barrier ordered its last write before this read.
  const uint64_t step = update_.step() + 1;
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  HOGWILD_RETURN_IF_ERROR(update(step));
  if (worker == 0) {
    store()->CompleteUpdate();
    update_.set_step(step);
    // The step's all-reduce: every worker's [P] gradient (sparse ones counted dense).
    RecordExchanges(1, int64_t{num_workers()} * num_params() * int64_t{sizeof(float)});
  }
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  return StepStats{.staleness = 0, .applied_lr = lr};
}

absl::StatusOr<StepStats> TowerAverage::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                     float lr) {
  // A CPU policy: the gradient is in host memory.
  tower_grads_[worker] = grad.data();
  return Step(worker, lr, [&](uint64_t step) {
    return update_.UpdateSlice(
        worker, lr, step,
        [this](int64_t lo, int64_t n, float* sum) {
          SumTowers(absl::MakeConstSpan(tower_grads_), lo, n, sum);
        },
        barrier_, store()->unsafe_values().data());
  });
}

absl::StatusOr<StepStats> TowerAverage::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                           float lr) {
  const SgdOptions& o = sgd_options();
  if (!o.updates_touched_only()) return UpdatePolicy::DoFinishSparseStep(worker, grad, lr);
  sparse_towers_[worker] = &grad;
  return Step(worker, lr, [&](uint64_t /*step*/) {
    // One thread sums and applies: the sum's touched coordinates are the union of the towers',
    // which no slicing by parameter index could split without a pass over every tower per worker.
    if (worker != 0) return absl::OkStatus();
    if (sparse_sum_ == nullptr) sparse_sum_ = std::make_unique<SparseGradient>(num_params());
    SumSparseTowers(absl::MakeConstSpan(sparse_towers_), *sparse_sum_);
    ApplySparseSgd(lr, o.weight_decay, o.no_decay, *sparse_sum_, store()->unsafe_values().data());
    return absl::OkStatus();
  });
}

}  // namespace hogwild
