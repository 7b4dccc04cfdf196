#include "sync/hogwild.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "kernels/functors.h"

namespace hogwild {

Hogwild::Hogwild(ParameterStore* store, int num_workers, SgdOptions options)
    : store_(store), options_(options), workers_(num_workers) {
  HOGWILD_CHECK(num_workers >= 1, "Hogwild: num_workers must be >= 1");
  for (PerWorker& w : workers_) {
    w.snapshot.resize(store->size());
    if (options_.momentum != 0.0f) w.velocity.assign(store->size(), 0.0f);
  }
}

absl::Status Hogwild::ReadParams(absl::Span<float> out) const {
  if (static_cast<int64_t>(out.size()) != store_->size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Hogwild::ReadParams: output has %d elements, the store %d", out.size(), store_->size()));
  }
  store_->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<absl::Span<const float>> Hogwild::BeginStep(int worker) {
  if (cancelled_.load(std::memory_order_relaxed)) {
    return absl::CancelledError("training was cancelled");
  }
  PerWorker& w = workers_[worker];
  // The snapshot that the last FinishStep left is as fresh as a new Read() when no other update
  // has completed since; otherwise (another worker's update landed in between, or this worker
  // spent a while evaluating) read again.
  if (!w.snapshot_current || store_->version() != w.read_version) {
    w.read_version = store_->Read(absl::MakeSpan(w.snapshot));
  }
  w.snapshot_current = false;
  return absl::MakeConstSpan(w.snapshot);
}

absl::StatusOr<StepStats> Hogwild::FinishStep(int worker, absl::Span<const float> grad,
                                              float lr) {
  if (cancelled_.load(std::memory_order_relaxed)) {
    return absl::CancelledError("training was cancelled");
  }
  if (static_cast<int64_t>(grad.size()) != store_->size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Hogwild::FinishStep: gradient has %d elements, the store %d", grad.size(),
        store_->size()));
  }
  PerWorker& w = workers_[worker];
  const StepStats stats =
      AsyncStepStats(store_->version(), w.read_version, lr, options_.staleness_aware_lr);
  const SgdMomentumFn sgd{stats.applied_lr, options_.momentum, options_.weight_decay};
  const float* g = grad.data();
  // The update also refreshes this worker's snapshot (one pass over P instead of two: the
  // update and the next step's Read() were a third of the step on the MLP). The snapshot counts
  // as a fresh read only if no other update completed during the pass.
  float* snapshot = w.snapshot.data();
  const uint64_t version_before = store_->version();
  if (options_.momentum != 0.0f) {
    float* v = w.velocity.data();
    store_->UpdateAndRead(
        0, store_->size(), [&](int64_t i, float p) { return sgd(p, g[i], v[i]); }, snapshot);
  } else {
    store_->SgdUpdateAndRead(grad, stats.applied_lr, options_.weight_decay,
                             absl::MakeSpan(w.snapshot));
  }
  const uint64_t version_after = store_->CompleteUpdate() + 1;
  w.snapshot_current = version_after == version_before + 1;
  w.read_version = version_after;
  return stats;
}

}  // namespace hogwild
