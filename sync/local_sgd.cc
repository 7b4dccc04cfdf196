#include "sync/local_sgd.h"

#include <algorithm>

#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/optimizer.h"
#include "sync/sparse_gradient.h"
#include "sync/tower_sum.h"

namespace hogwild {

LocalSgd::LocalSgd(ParameterStore* store, int num_workers, SgdOptions options,
                   int64_t average_every, OuterOptimizer outer)
    : UpdatePolicy(Mode::kLocalSgd, store, num_workers, options),
      average_every_(average_every),
      outer_(outer),
      barrier_(num_workers),
      workers_(num_workers) {
  HOGWILD_CHECK(average_every >= 1, "LocalSgd: average_every must be >= 1");
  HOGWILD_CHECK(CheckOuterOptimizer(outer, "").ok(), "LocalSgd: outer optimizer out of range");
  if (outer.has_momentum()) outer_momentum_.assign(store->size(), 0.0f);
  for (PerWorker& w : workers_) {
    w.replica.resize(store->size());
    w.slots = OptimizerSlots(options, store->size());
  }
}

int LocalSgd::num_optimizer_buffers() const {
  return num_workers() * NumStateSlots(sgd_options().optimizer_params()) +
         (outer_.has_momentum() ? 1 : 0);
}

int LocalSgd::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? num_workers() : 0;
}

std::vector<uint64_t> LocalSgd::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  std::vector<uint64_t> steps;
  for (const PerWorker& w : workers_) steps.push_back(w.slots.step);
  return steps;
}

void LocalSgd::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  for (size_t w = 0; w < workers_.size() && w < steps.size(); ++w)
    workers_[w].slots.step = steps[w];
}

absl::Status LocalSgd::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> LocalSgd::DoBeginStep(int worker) {
  PerWorker& w = workers_[worker];
  if (!w.started) {
    // Nobody writes the store before the first averaging, which needs this worker.
    const absl::Span<const float> initial = store()->unsafe_values();
    std::copy(initial.begin(), initial.end(), w.replica.begin());
    w.started = true;
  }
  return DeviceSpan<const float>(absl::MakeConstSpan(w.replica));
}

absl::StatusOr<StepStats> LocalSgd::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                 float lr) {
  PerWorker& w = workers_[worker];
  // A CPU policy: the gradient is in host memory. Clipped per worker (its local gradient).
  ApplyOwnGradient(sgd_options(), lr, grad.HostSpan(), w.slots, w.clipped,
                   absl::MakeSpan(w.replica));
  return EndLocalStep(worker, lr);
}

absl::StatusOr<StepStats> LocalSgd::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                       float lr) {
  const SgdOptions& o = sgd_options();
  if (!o.updates_touched_only()) return UpdatePolicy::DoFinishSparseStep(worker, grad, lr);
  // The replica is this worker's alone until the averaging's barrier.
  ApplySparseSgd(lr, o.weight_decay, o.no_decay, grad, workers_[worker].replica.data());
  return EndLocalStep(worker, lr);
}

absl::StatusOr<StepStats> LocalSgd::EndLocalStep(int worker, float lr) {
  if (++workers_[worker].since_average == average_every_) {
    HOGWILD_RETURN_IF_ERROR(Average(worker));
  }
  return StepStats{.staleness = 0, .applied_lr = lr};
}

absl::Status LocalSgd::DoWorkerDone(int worker) {
  if (workers_[worker].since_average == 0) return absl::OkStatus();
  return Average(worker);
}

absl::Status LocalSgd::Average(int worker) {
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  const int64_t num_params = store()->size();
  const int64_t begin = num_params * worker / num_workers();
  const int64_t end = num_params * (worker + 1) / num_workers();
  float* params = store()->unsafe_values().data();
  // The replicas' slice averaged in worker order (sync/tower_sum.h, as the simulated local_sgd),
  // the outer step from it on the store, and the result into every replica.
  std::vector<const float*> replicas;
  for (const PerWorker& v : workers_) replicas.push_back(v.replica.data());
  PerWorker& w = workers_[worker];
  const absl::Span<float> slice(params + begin, static_cast<size_t>(end - begin));
  if (outer_.is_averaging()) {
    AverageTowers(absl::MakeConstSpan(replicas), begin, end - begin, slice.data());
  } else {
    w.mean.resize(slice.size());
    AverageTowers(absl::MakeConstSpan(replicas), begin, end - begin, w.mean.data());
    ApplyOuterStep(outer_, w.mean,
                   outer_momentum_.empty()
                       ? absl::Span<float>()
                       : absl::MakeSpan(outer_momentum_).subspan(begin, slice.size()),
                   slice);
  }
  for (PerWorker& v : workers_) std::copy(slice.begin(), slice.end(), v.replica.begin() + begin);
  if (worker == 0) store()->RestoreVersion(store()->version() + w.since_average);
  w.since_average = 0;
  return barrier_.ArriveAndWait();
}

absl::StatusOr<std::vector<std::vector<float>>> LocalSgd::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  for (const PerWorker& w : workers_) AppendSlotBuffers(w.slots, &buffers);
  if (outer_.has_momentum()) buffers.push_back(outer_momentum_);
  return buffers;
}

absl::Status LocalSgd::DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) {
  const size_t slots = static_cast<size_t>(NumStateSlots(sgd_options().optimizer_params()));
  for (size_t w = 0; w < workers_.size(); ++w) {
    RestoreSlots(momentum, w * slots, {}, w, workers_[w].slots);
  }
  if (outer_.has_momentum()) {
    const size_t index = workers_.size() * slots;
    if (index >= momentum.size() || momentum[index].size() != outer_momentum_.size()) {
      return absl::InvalidArgumentError(
          "the checkpoint has no outer momentum buffer of this model's size (it was written "
          "without outer momentum); resume with the outer momentum it was written with");
    }
    outer_momentum_ = momentum[index];
  }
  for (PerWorker& w : workers_) w.started = false;  // replicas start from the restored store
  return absl::OkStatus();
}

}  // namespace hogwild
