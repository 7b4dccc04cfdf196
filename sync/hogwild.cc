#include "sync/hogwild.h"

#include "kernels/functors.h"

namespace hogwild {

Hogwild::Hogwild(ParameterStore* store, int num_workers, SgdOptions options)
    : UpdatePolicy(Mode::kAsync, store, num_workers, options), workers_(num_workers) {
  for (PerWorker& w : workers_) {
    w.snapshot.resize(store->size());
    if (options.momentum != 0.0f) w.velocity.assign(store->size(), 0.0f);
  }
}

int Hogwild::num_momentum_buffers() const {
  return sgd_options().momentum != 0.0f ? num_workers() : 0;
}

absl::Status Hogwild::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> Hogwild::DoSaveMomentum() const {
  std::vector<std::vector<float>> momentum;
  for (const PerWorker& w : workers_) {
    if (!w.velocity.empty()) momentum.push_back(w.velocity);
  }
  return momentum;
}

absl::Status Hogwild::DoRestoreMomentum(const std::vector<std::vector<float>>& momentum) {
  for (size_t w = 0; w < momentum.size(); ++w) workers_[w].velocity = momentum[w];
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> Hogwild::DoBeginStep(int worker) {
  PerWorker& w = workers_[worker];
  // The snapshot that the last FinishStep left is as fresh as a new Read() when no other update
  // has completed since; otherwise (another worker's update landed in between, or this worker
  // spent a while evaluating) read again.
  if (!w.snapshot_current || store()->version() != w.read_version) {
    w.read_version = store()->Read(absl::MakeSpan(w.snapshot));
  }
  w.snapshot_current = false;
  return DeviceSpan<const float>(absl::MakeConstSpan(w.snapshot));
}

absl::StatusOr<StepStats> Hogwild::DoFinishStep(int worker, DeviceSpan<const float> device_grad,
                                                float lr) {
  // A CPU policy: the gradient is in host memory.
  const absl::Span<const float> grad = device_grad.HostSpan();
  PerWorker& w = workers_[worker];
  const StepStats stats =
      AsyncStepStats(store()->version(), w.read_version, lr, sgd_options().staleness_aware_lr);
  const SgdMomentumFn sgd{stats.applied_lr, sgd_options().momentum, sgd_options().weight_decay};
  // The update also refreshes this worker's snapshot: one pass over P instead of two (an update
  // and the next step's Read()), see benchmarks/README.md. The snapshot counts
  // as a fresh read only if no other update completed during the pass.
  const uint64_t version_before = store()->version();
  store()->SgdUpdateAndRead(sgd, grad, absl::MakeSpan(w.velocity), absl::MakeSpan(w.snapshot));
  const uint64_t version_after = store()->CompleteUpdate() + 1;
  w.snapshot_current = version_after == version_before + 1;
  w.read_version = version_after;
  return stats;
}

}  // namespace hogwild
