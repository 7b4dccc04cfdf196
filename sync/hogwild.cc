#include "sync/hogwild.h"

#include "kernels/functors.h"
#include "kernels/optimizer.h"
#include "sync/grad_clip.h"
#include "sync/moving_stats.h"
#include "sync/sparse_gradient.h"

namespace hogwild {

Hogwild::Hogwild(ParameterStore* store, int num_workers, SgdOptions options, ReadPoint read_point)
    : UpdatePolicy(Mode::kAsync, store, num_workers, options),
      read_point_(read_point),
      workers_(num_workers) {
  for (PerWorker& w : workers_) {
    w.snapshot.resize(store->size());
    if (!options.shared_optimizer_state) w.slots = OptimizerSlots(options, store->size());
  }
  if (options.shared_optimizer_state) shared_slots_ = OptimizerSlots(options, store->size());
  PinSnapshots();
}

void Hogwild::PinSnapshots() {
  if (read_point_ != ReadPoint::kAfterOwnUpdate) return;
  for (PerWorker& w : workers_) {
    w.read_version = store()->Read(absl::MakeSpan(w.snapshot));
    w.snapshot_current = true;
  }
}

absl::Status Hogwild::DoRestoreParams() {
  PinSnapshots();
  return absl::OkStatus();
}

int Hogwild::num_owners() const { return sgd_options().shared_optimizer_state ? 1 : num_workers(); }

int Hogwild::num_optimizer_buffers() const {
  return num_owners() * NumStateSlots(sgd_options().optimizer_params());
}

int Hogwild::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? num_owners() : 0;
}

absl::Status Hogwild::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> Hogwild::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  if (sgd_options().shared_optimizer_state) {
    AppendSlotBuffers(shared_slots_, &buffers);
  } else {
    for (const PerWorker& w : workers_) AppendSlotBuffers(w.slots, &buffers);
  }
  return buffers;
}

absl::Status Hogwild::DoRestoreOptimizerState(const std::vector<std::vector<float>>& buffers) {
  const size_t slots = static_cast<size_t>(NumStateSlots(sgd_options().optimizer_params()));
  if (sgd_options().shared_optimizer_state) {
    RestoreSlots(buffers, 0, {}, 0, shared_slots_);
  } else {
    for (size_t w = 0; w < workers_.size(); ++w) {
      RestoreSlots(buffers, w * slots, {}, w, workers_[w].slots);
    }
  }
  return absl::OkStatus();
}

std::vector<uint64_t> Hogwild::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  if (sgd_options().shared_optimizer_state) {
    return {shared_step_.load(std::memory_order_acquire)};
  }
  std::vector<uint64_t> steps;
  for (const PerWorker& w : workers_) steps.push_back(w.slots.step);
  return steps;
}

void Hogwild::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  if (steps.empty()) return;
  if (sgd_options().shared_optimizer_state) {
    shared_step_.store(steps[0], std::memory_order_release);
    return;
  }
  for (size_t w = 0; w < workers_.size() && w < steps.size(); ++w)
    workers_[w].slots.step = steps[w];
}

absl::StatusOr<DeviceSpan<const float>> Hogwild::DoBeginStep(int worker) {
  PerWorker& w = workers_[worker];
  if (read_point_ == ReadPoint::kAfterOwnUpdate) {
    // Left by the constructor, RestoreState or this worker's previous FinishStep; a touched-only
    // sparse update since left it behind the store, which is then read afresh.
    if (!w.snapshot_current) {
      w.read_version = store()->Read(absl::MakeSpan(w.snapshot));
      w.snapshot_current = true;
    }
    return DeviceSpan<const float>(absl::MakeConstSpan(w.snapshot));
  }
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
  absl::Span<const float> grad = device_grad.HostSpan();
  PerWorker& w = workers_[worker];
  const SgdOptions& o = sgd_options();
  // Clipping: this worker's own gradient (sync/grad_clip.h), into a private copy when it is
  // scaled (the caller's gradient is read-only).
  if (const float scale = TrainedClipScale(o, 0, grad); scale != 1.0f) {
    w.clipped.resize(grad.size());
    ScaleTrained(o, 0, scale, grad, absl::MakeSpan(w.clipped));
    grad = absl::MakeConstSpan(w.clipped);
  }
  const StepStats stats = AsyncStepStats(store()->version(), w.read_version, lr, o, num_workers());
  if (stats.dropped) return Drop(w, stats);
  // The update also refreshes this worker's snapshot: one pass over P instead of two (an update
  // and the next step's Read()), see "What the profile showed" in
  // benchmarks/results/2026-12-02-throughput-and-pytorch.md. The snapshot counts as a fresh read
  // only if no other update completed during the pass.
  const uint64_t version_before = store()->version();
  // The step of this update: shared, its rank among all applied updates (one atomic
  // increment per update, so no two updates share a t and none is lost; see the header);
  // per worker, this worker's count.
  const bool shared = o.shared_optimizer_state;
  OptimizerSlots& slots = shared ? shared_slots_ : w.slots;
  const uint64_t step =
      shared ? shared_step_.fetch_add(1, std::memory_order_relaxed) + 1 : ++w.slots.step;
  const auto piece = [](absl::Span<float> s, int64_t begin, int64_t count) {
    return s.empty() ? s : s.subspan(begin, count);
  };
  // One call per piece of the parameters with or without weight decay (a single piece unless
  // weight_decay_biases is off or the model has moving statistics).
  const auto trained = [&](int64_t begin, int64_t count, bool decays) {
    const float weight_decay = decays ? o.weight_decay : 0.0f;
    const absl::Span<const float> g = grad.subspan(begin, count);
    const absl::Span<float> out = absl::MakeSpan(w.snapshot).subspan(begin, count);
    if (o.is_sgd_momentum() && !shared) {
      const SgdMomentumFn sgd{stats.applied_lr, o.momentum, weight_decay};
      store()->SgdUpdateAndRead(sgd, g, piece(slots.span0(), begin, count), out, begin);
      return;
    }
    OptimizerParams params = o.optimizer_params();
    params.weight_decay = weight_decay;
    const OptimizerFn fn = MakeOptimizerFn(params, stats.applied_lr, step);
    store()->OptimizerUpdateAndRead(fn, slots.num_slots(), g, piece(slots.span0(), begin, count),
                                    piece(slots.span1(), begin, count), shared, out, begin);
  };
  // Moving statistics (batch norm): this worker's batch statistics pulled in lock-free, through
  // the same element access (sync/moving_stats.h).
  const auto stats_piece = [&](int64_t begin, int64_t count) {
    store()->SgdUpdateAndRead(MovingStatsFn(o.moving_stats_momentum), grad.subspan(begin, count),
                              absl::Span<float>(), absl::MakeSpan(w.snapshot).subspan(begin, count),
                              begin);
  };
  ForEachUpdatePiece(o, 0, store()->size(), trained, stats_piece);
  const uint64_t version_after = store()->CompleteUpdate() + 1;
  w.snapshot_current = version_after == version_before + 1;
  w.read_version = version_after;
  return stats;
}

StepStats Hogwild::Drop(PerWorker& w, const StepStats& stats) {
  w.snapshot_current = false;
  dropped_.fetch_add(1, std::memory_order_relaxed);
  return stats;
}

absl::StatusOr<const float*> Hogwild::DoBeginSparseStep(int worker) {
  // The live array, no O(P) copy: the staleness counts from the version the read began at.
  PerWorker& w = workers_[worker];
  w.read_version = store()->version();
  w.snapshot_current = false;
  return store()->unsafe_values().data();
}

absl::StatusOr<StepStats> Hogwild::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                      float lr) {
  const SgdOptions& o = sgd_options();
  if (!o.updates_touched_only()) return UpdatePolicy::DoFinishSparseStep(worker, grad, lr);
  PerWorker& w = workers_[worker];
  const StepStats stats = AsyncStepStats(store()->version(), w.read_version, lr, o, num_workers());
  if (stats.dropped) return Drop(w, stats);
  ApplySparseSgd(stats.applied_lr, o.weight_decay, o.no_decay, grad,
                 store()->unsafe_values().data());
  w.read_version = store()->CompleteUpdate() + 1;
  return stats;
}

}  // namespace hogwild
