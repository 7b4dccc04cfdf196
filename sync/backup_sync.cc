#include "sync/backup_sync.h"

#include <algorithm>

#include "core/logging.h"
#include "kernels/optimizer.h"
#include "sync/grad_clip.h"

namespace hogwild {

BackupSync::BackupSync(ParameterStore* store, int num_workers, SgdOptions options,
                       int backup_workers)
    : UpdatePolicy(Mode::kBackup, store, num_workers, options),
      needed_(num_workers - backup_workers),
      worker_step_(num_workers, 0),
      grads_(num_workers, nullptr),
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

absl::StatusOr<DeviceSpan<const float>> BackupSync::DoBeginStep(int worker) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    // The update of the step before this worker's must have landed.
    advanced_.wait(lock, [&] { return cancelled_ || open_step_ >= worker_step_[worker]; });
    if (cancelled_) return absl::CancelledError("training was cancelled");
  }
  std::vector<float>& snapshot = snapshots_[worker];
  {
    std::shared_lock<std::shared_mutex> lock(params_mu_);
    const absl::Span<const float> params = store()->unsafe_values();
    std::copy(params.begin(), params.end(), snapshot.begin());
  }
  return DeviceSpan<const float>(absl::MakeConstSpan(snapshot));
}

absl::StatusOr<StepStats> BackupSync::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                   float lr) {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return absl::CancelledError("training was cancelled");
  const int64_t step = worker_step_[worker]++;
  if (step != open_step_ || closing_) {
    // Late: the step has its W - b gradients already.
    ++dropped_[worker];
    return StepStats{.staleness = 0, .applied_lr = lr, .dropped = true};
  }
  // A CPU policy: the gradient is in host memory.
  grads_[worker] = grad.data();
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
  Apply(contributors, lr);
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
  for (int c : contributors) used += examples_[c];
  const int64_t whole = step_examples_[contributors.front()];
  // From the step's whole batch to the examples used (1 when all were used, or no counts).
  const float rescale =
      used == whole || used == 0 ? 1.0f : static_cast<float>(whole) / static_cast<float>(used);
  std::unique_lock<std::shared_mutex> params_lock(params_mu_);
  const int64_t num_params = store()->size();
  float* params = store()->unsafe_values().data();
  const uint64_t step = ++slots_.step;
  // As sync/tower_average.cc: blocked so the partial sums stay in L1; summed in worker order.
  constexpr int64_t kBlock = 1024;
  alignas(64) float sum[kBlock];
  const auto sum_block = [&](int64_t lo, int64_t n) {
    const float* first = grads_[contributors.front()] + lo;
    std::copy(first, first + n, sum);
    for (size_t k = 1; k < contributors.size(); ++k) {
      const float* g = grads_[contributors[k]] + lo;
      for (int64_t i = 0; i < n; ++i) sum[i] += g[i];
    }
    if (rescale != 1.0f) {
      for (int64_t i = 0; i < n; ++i) sum[i] *= rescale;
    }
  };
  // Clipping: the norm of the whole averaged (and rescaled) gradient, as sync mode.
  float scale = 1.0f;
  if (sgd_options().clip_global_norm > 0.0f) {
    double squares = 0.0;
    for (int64_t lo = 0; lo < num_params; lo += kBlock) {
      const int64_t n = std::min(kBlock, num_params - lo);
      sum_block(lo, n);
      squares += TrainedSumOfSquares(sgd_options(), lo, absl::MakeConstSpan(sum, n));
    }
    scale = ClipScale(squares, sgd_options().clip_global_norm);
  }
  for (int64_t lo = 0; lo < num_params; lo += kBlock) {
    const int64_t n = std::min(kBlock, num_params - lo);
    sum_block(lo, n);
    if (scale != 1.0f) {
      ScaleTrained(sgd_options(), lo, scale, absl::MakeConstSpan(sum, n), absl::MakeSpan(sum, n));
    }
    ApplyOptimizerRange(sgd_options(), lr, step, absl::MakeConstSpan(sum, n), slots_, lo,
                        absl::MakeSpan(params + lo, n));
  }
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
