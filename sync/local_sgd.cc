#include "sync/local_sgd.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/optimizer.h"
#include "sync/sparse_gradient.h"
#include "sync/tower_sum.h"

namespace hogwild {

LocalSgd::LocalSgd(ParameterStore* store, int num_workers, SgdOptions options,
                   int64_t average_every, OuterOptimizer outer, StreamingOptions streaming)
    : UpdatePolicy(Mode::kLocalSgd, store, num_workers, options),
      average_every_(average_every),
      outer_(outer),
      streaming_(streaming),
      schedule_(streaming.fragments, average_every, store->size()),
      barrier_(num_workers),
      workers_(num_workers),
      norm_squares_(num_workers, 0.0) {
  HOGWILD_CHECK(average_every >= 1, "LocalSgd: average_every must be >= 1");
  HOGWILD_CHECK(CheckOuterOptimizer(outer, "").ok(), "LocalSgd: outer optimizer out of range");
  HOGWILD_CHECK(CheckStreamingOptions(streaming, average_every, store->size(), "").ok(),
                "LocalSgd: streaming options out of range");
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
  const int64_t step = ++workers_[worker].steps;
  // The merge due now first (its exchange was tau steps ago), then the exchange due now.
  if (streaming_.overlap_steps > 0) {
    if (const int p = schedule_.ExchangedAt(step - streaming_.overlap_steps); p >= 0) {
      Merge(worker, p);
    }
  }
  if (const int p = schedule_.ExchangedAt(step); p >= 0) {
    HOGWILD_RETURN_IF_ERROR(Exchange(worker, {p}, step));
    if (streaming_.overlap_steps == 0) Merge(worker, p);
  }
  return StepStats{.staleness = 0, .applied_lr = lr};
}

absl::Status LocalSgd::DoWorkerDone(int worker) {
  const int64_t step = workers_[worker].steps;
  // The merges still pending, as if their exchanges had arrived; then one last exchange of the
  // fragments not exchanged at this step (none when the data ends at an exchange with F = 1).
  for (int64_t at = std::max<int64_t>(1, step - streaming_.overlap_steps + 1);
       streaming_.overlap_steps > 0 && at <= step; ++at) {
    if (const int p = schedule_.ExchangedAt(at); p >= 0) Merge(worker, p);
  }
  std::vector<int> behind;
  for (int p = 0; p < schedule_.fragments(); ++p) {
    if (schedule_.LastExchange(p, step) < step) behind.push_back(p);
  }
  if (behind.empty()) return absl::OkStatus();
  HOGWILD_RETURN_IF_ERROR(Exchange(worker, behind, step));
  for (int p : behind) Merge(worker, p);
  return absl::OkStatus();
}

absl::Status LocalSgd::Exchange(int worker, absl::Span<const int> fragments, int64_t step) {
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  float* params = store()->unsafe_values().data();
  // The replicas' slice averaged in worker order (sync/tower_sum.h, as the simulated local_sgd),
  // and the outer step from it on the store.
  std::vector<const float*> replicas;
  for (const PerWorker& v : workers_) replicas.push_back(v.replica.data());
  PerWorker& w = workers_[worker];
  double squares = 0.0;  // ||theta_after - theta_before||^2 over this worker's slices
  int64_t floats = 0;    // the fragments' floats: what each worker sends
  for (const int p : fragments) {
    const int64_t size = schedule_.end(p) - schedule_.begin(p);
    floats += size;
    const int64_t begin = schedule_.begin(p) + size * worker / num_workers();
    const int64_t end = schedule_.begin(p) + size * (worker + 1) / num_workers();
    const absl::Span<float> slice(params + begin, static_cast<size_t>(end - begin));
    // The slice before its outer step, for the step's norm (read only: the step's arithmetic
    // below is unchanged).
    w.before.assign(slice.begin(), slice.end());
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
    squares += SquaredStepNorm(slice, w.before);
  }
  if (worker == 0) store()->RestoreVersion(store()->version() + (step - w.exchanged_at));
  w.exchanged_at = step;
  RecordOuterStep(worker, squares, static_cast<int64_t>(fragments.size()), floats);
  return barrier_.ArriveAndWait();
}

void LocalSgd::RecordOuterStep(int worker, double squares, int64_t exchanges, int64_t floats) {
  std::lock_guard<std::mutex> lock(norm_mu_);
  norm_squares_[worker] = squares;
  if (++norm_arrived_ < num_workers()) return;
  // The last worker of the exchange: the slices' squares summed in worker order (the same sum
  // whatever the order of arrival), before the second barrier lets any worker write a row.
  double total = 0.0;
  for (const double s : norm_squares_) total += s;
  norm_arrived_ = 0;
  RecordExchanges(exchanges, int64_t{num_workers()} * floats * int64_t{sizeof(float)},
                  std::sqrt(total));
}

void LocalSgd::Merge(int worker, int p) {
  // The store's fragment is the exchange's result until the fragment's next exchange, which
  // needs this worker at its barrier.
  const absl::Span<const float> theta = store()->unsafe_values().subspan(
      schedule_.begin(p), static_cast<size_t>(schedule_.end(p) - schedule_.begin(p)));
  MixIntoReplica(
      streaming_.mix_alpha, theta,
      absl::MakeSpan(workers_[worker].replica).subspan(schedule_.begin(p), theta.size()));
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

ModeState LocalSgd::DoSaveModeState() const {
  ModeState state;
  if (streaming_.is_default()) return state;  // at the cut every replica equals the store
  for (const PerWorker& w : workers_) {
    state.buffers.push_back(w.replica);
    state.counters.push_back(w.steps);
    state.counters.push_back(w.exchanged_at);
  }
  return state;
}

absl::Status LocalSgd::DoCheckModeState(const ModeState& state) const {
  if (streaming_.is_default()) return UpdatePolicy::DoCheckModeState(state);
  const size_t w = workers_.size();
  bool consistent = state.buffers.size() == w && state.counters.size() == 2 * w &&
                    state.seconds.empty();
  for (size_t i = 0; consistent && i < w; ++i) {
    const int64_t steps = state.counters[2 * i], exchanged_at = state.counters[2 * i + 1];
    consistent = steps == state.counters[0] && exchanged_at >= 0 && exchanged_at <= steps;
  }
  if (consistent) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "cannot resume: the Streaming DiLoCo state in the checkpoint (%d replicas, %d counters) "
      "does not fit %d workers at one local step; %s",
      state.buffers.size(), state.counters.size(), w,
      state.buffers.size() != w
          ? "resume with the checkpoint's workers"
          : "the file is damaged or was not written by this version; start afresh "
            "(overwrite_checkpoint) or resume from another checkpoint"));
}

void LocalSgd::DoRestoreModeState(const ModeState& state) {
  if (state.empty()) return;
  for (size_t i = 0; i < workers_.size(); ++i) {
    PerWorker& w = workers_[i];
    w.replica = state.buffers[i];
    w.steps = state.counters[2 * i];
    w.exchanged_at = state.counters[2 * i + 1];
    w.started = true;
  }
}

}  // namespace hogwild
