#include "sync/backup_sync.h"

#include <algorithm>

#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/optimizer.h"
#include "sync/sliced_update.h"
#include "sync/tower_sum.h"

namespace hogwild {

BackupSync::BackupSync(ParameterStore* store, int num_workers, SgdOptions options,
                       int backup_workers)
    : UpdatePolicy(Mode::kBackup, store, num_workers, options),
      needed_(num_workers - backup_workers),
      worker_step_(num_workers, 0),
      grads_(num_workers, nullptr),
      sparse_grads_(num_workers, nullptr),
      examples_(num_workers, 0),
      step_examples_(num_workers, 0),
      dropped_(num_workers, 0),
      snapshots_(num_workers) {
  HOGWILD_CHECK(backup_workers >= 0 && backup_workers < num_workers,
                "BackupSync: backup_workers must be in [0, num_workers)");
  for (std::vector<float>& s : snapshots_) s.resize(store->size());
  slots_ = OptimizerSlots(options, store->size());
}

int BackupSync::num_optimizer_buffers() const { return slots_.num_slots(); }

int BackupSync::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? 1 : 0;
}

std::vector<uint64_t> BackupSync::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  return {slots_.step};
}

void BackupSync::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  if (!steps.empty()) slots_.step = steps[0];
}

int64_t BackupSync::dropped(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_[worker];
}

int64_t BackupSync::num_dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t total = 0;
  for (int64_t d : dropped_) total += d;
  return total;
}

absl::Status BackupSync::DoReadParams(absl::Span<float> out) const {
  std::shared_lock<std::shared_mutex> lock(params_mu_);
  const absl::Span<const float> params = store()->unsafe_values();
  std::copy(params.begin(), params.end(), out.begin());
  return absl::OkStatus();
}

void BackupSync::DoSetStepExamples(int worker, int64_t examples, int64_t step_examples) {
  std::lock_guard<std::mutex> lock(mu_);
  examples_[worker] = examples;
  step_examples_[worker] = step_examples;
}

absl::Status BackupSync::WaitForOpenStep(int worker) {
  std::unique_lock<std::mutex> lock(mu_);
  // The update of the step before this worker's must have landed.
  advanced_.wait(lock, [&] { return cancelled_ || open_step_ >= worker_step_[worker]; });
  if (cancelled_) return absl::CancelledError("training was cancelled");
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> BackupSync::DoBeginStep(int worker) {
  HOGWILD_RETURN_IF_ERROR(WaitForOpenStep(worker));
  std::vector<float>& snapshot = snapshots_[worker];
  {
    std::shared_lock<std::shared_mutex> lock(params_mu_);
    const absl::Span<const float> params = store()->unsafe_values();
    std::copy(params.begin(), params.end(), snapshot.begin());
  }
  return DeviceSpan<const float>(absl::MakeConstSpan(snapshot));
}

absl::StatusOr<const float*> BackupSync::DoBeginSparseStep(int worker) {
  if (!sgd_options().updates_touched_only()) return UpdatePolicy::DoBeginSparseStep(worker);
  HOGWILD_RETURN_IF_ERROR(WaitForOpenStep(worker));
  // The live store: ApplySparse writes it with the store's element access, so a read that
  // overlaps it sees each element whole; such a read is this step's only when the step is not
  // applied yet, else the gradient from it arrives late and is dropped.
  return store()->unsafe_values().data();
}

absl::StatusOr<StepStats> BackupSync::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                   float lr) {
  // A CPU policy: the gradient is in host memory.
  return Contribute(
      worker, lr, [&] { grads_[worker] = grad.data(); },
      [&](const std::vector<int>& contributors) { Apply(contributors, lr); });
}

absl::StatusOr<StepStats> BackupSync::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                         float lr) {
  if (!sgd_options().updates_touched_only()) {
    return UpdatePolicy::DoFinishSparseStep(worker, grad, lr);
  }
  return Contribute(
      worker, lr, [&] { sparse_grads_[worker] = &grad; },
      [&](const std::vector<int>& contributors) { ApplySparse(contributors, lr); });
}

absl::StatusOr<StepStats> BackupSync::Contribute(
    int worker, float lr, absl::FunctionRef<void()> publish,
    absl::FunctionRef<void(const std::vector<int>& contributors)> apply) {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return absl::CancelledError("training was cancelled");
  const int64_t step = worker_step_[worker]++;
  if (step != open_step_ || closing_) {
    // Late: the step has its W - b gradients already.
    ++dropped_[worker];
    // Sent, then dropped: its bytes count, in no exchange of its own.
    RecordExchanges(0, num_params() * int64_t{sizeof(float)});
    return StepStats{.staleness = 0, .applied_lr = lr, .dropped = true};
  }
  publish();
  arrived_.push_back(worker);
  if (static_cast<int>(arrived_.size()) < needed_) {
    // Even when cancelled, wait while the step is closing: the applying worker is reading this
    // worker's gradient, which must stay valid (the worker frees it once it returns).
    advanced_.wait(lock, [&] { return open_step_ > step || (cancelled_ && !closing_); });
    if (open_step_ > step) return StepStats{.staleness = 0, .applied_lr = lr};
    return absl::CancelledError("training was cancelled");
  }
  // The last contributor applies the update; the others wait for it above, keeping their
  // gradients valid.
  closing_ = true;
  std::vector<int> contributors = arrived_;
  lock.unlock();
  std::sort(contributors.begin(), contributors.end());
  apply(contributors);
  // The step's all-reduce, of the contributors' [P] gradients.
  RecordExchanges(
      1, static_cast<int64_t>(contributors.size()) * num_params() * int64_t{sizeof(float)});
  lock.lock();
  ++open_step_;
  closing_ = false;
  arrived_.clear();
  lock.unlock();
  advanced_.notify_all();
  return StepStats{.staleness = 0, .applied_lr = lr};
}

void BackupSync::Apply(const std::vector<int>& contributors, float lr) {
  // Read under mu_'s happens-before: each contributor published its counts and gradient before
  // it arrived, and waits until this returns.
  int64_t used = 0;
  std::vector<const float*> towers;
  for (int c : contributors) {
    used += examples_[c];
    towers.push_back(grads_[c]);
  }
  const float rescale = UsedExamplesRescale(used, step_examples_[contributors.front()]);
  std::unique_lock<std::shared_mutex> params_lock(params_mu_);
  // The contributors' gradients summed in worker order and rescaled to the examples used, then
  // clipped by the whole averaged gradient's norm (as sync mode) and applied: the arithmetic of
  // sync/tower_sum.h and sync/sliced_update.h, which the simulated backup policy runs too.
  UpdateAveraged(
      sgd_options(), lr, ++slots_.step,
      [&](int64_t lo, int64_t n, float* sum) {
        SumTowers(absl::MakeConstSpan(towers), lo, n, sum);
        RescaleSum(rescale, sum, n);
      },
      slots_, store()->unsafe_values());
  store()->CompleteUpdate();
}

void BackupSync::ApplySparse(const std::vector<int>& contributors, float lr) {
  // As Apply: the counts and gradients were published under mu_ before their workers arrived.
  int64_t used = 0;
  std::vector<const SparseGradient*> towers;
  for (int c : contributors) {
    used += examples_[c];
    towers.push_back(sparse_grads_[c]);
  }
  if (sparse_sum_ == nullptr) sparse_sum_ = std::make_unique<SparseGradient>(store()->size());
  SumSparseTowers(absl::MakeConstSpan(towers), *sparse_sum_);
  RescaleSparseSum(UsedExamplesRescale(used, step_examples_[contributors.front()]), *sparse_sum_);
  const SgdOptions& o = sgd_options();
  std::unique_lock<std::shared_mutex> params_lock(params_mu_);
  ++slots_.step;
  ApplySparseSgd(lr, o.weight_decay, o.no_decay, *sparse_sum_, store()->unsafe_values().data());
  store()->CompleteUpdate();
}

void BackupSync::DoCancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  advanced_.notify_all();
}

absl::StatusOr<std::vector<std::vector<float>>> BackupSync::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  AppendSlotBuffers(slots_, &buffers);
  return buffers;
}

absl::Status BackupSync::DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) {
  RestoreSlots(momentum, 0, {}, 0, slots_);
  return absl::OkStatus();
}

}  // namespace hogwild
