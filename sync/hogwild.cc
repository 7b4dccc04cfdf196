#include "sync/hogwild.h"

#include <algorithm>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_format.h"
#include "kernels/functors.h"

namespace hogwild {

Hogwild::Hogwild(ParameterStore* store, int num_workers, SgdOptions options)
    : store_(store), options_(options), workers_(num_workers) {
  ABSL_RAW_CHECK(num_workers >= 1, "Hogwild: num_workers must be >= 1");
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
  w.read_version = store_->Read(absl::MakeSpan(w.snapshot));
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
  StepStats stats;
  // The version counts every update; this worker's own previous update completed before its
  // read, so the difference counts only other workers' updates.
  stats.staleness = store_->version() - w.read_version;
  stats.applied_lr = lr;
  if (options_.staleness_aware_lr && stats.staleness > 1) {
    stats.applied_lr = lr / static_cast<float>(stats.staleness);
  }
  const SgdMomentumFn sgd{stats.applied_lr, options_.momentum, options_.weight_decay};
  const float* g = grad.data();
  if (options_.momentum != 0.0f) {
    float* v = w.velocity.data();
    store_->Update(0, store_->size(), [&](int64_t i, float p) { return sgd(p, g[i], v[i]); });
  } else {
    store_->Update(0, store_->size(), [&](int64_t i, float p) {
      float unused = 0.0f;
      return sgd(p, g[i], unused);
    });
  }
  store_->CompleteUpdate();
  return stats;
}

}  // namespace hogwild
