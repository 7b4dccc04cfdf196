#include "sync/async_local_sgd.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "kernels/optimizer.h"
#include "sync/sparse_gradient.h"

namespace hogwild {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

AsyncLocalSgd::AsyncLocalSgd(ParameterStore* store, int num_workers, SgdOptions options,
                             AsyncLocalSgdOptions mode_options, Clock clock)
    : UpdatePolicy(Mode::kAsyncLocalSgd, store, num_workers, options),
      options_(mode_options),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)),
      workers_(num_workers) {
  HOGWILD_CHECK(mode_options.average_every >= 1, "AsyncLocalSgd: average_every must be >= 1");
  HOGWILD_CHECK(CheckOuterOptimizer(mode_options.outer, "").ok(),
                "AsyncLocalSgd: outer optimizer out of range");
  HOGWILD_CHECK(
      CheckDelayedNesterov(mode_options.delayed_nesterov, mode_options.outer, "", "").ok(),
      "AsyncLocalSgd: delayed_nesterov out of range");
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_options.outer.has_momentum()) outer_momentum_.assign(store->size(), 0.0f);
  if (mode_options.delayed_nesterov > 1) pushed_sum_.assign(store->size(), 0.0f);
  step_time_s_.assign(num_workers, 0.0);
  for (PerWorker& w : workers_) {
    w.replica.resize(store->size());
    w.anchor.resize(store->size());
    w.slots = OptimizerSlots(options, store->size());
  }
}

int AsyncLocalSgd::num_optimizer_buffers() const {
  return num_workers() * NumStateSlots(sgd_options().optimizer_params());
}

int AsyncLocalSgd::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? num_workers() : 0;
}

absl::Status AsyncLocalSgd::DoReadParams(absl::Span<float> out) const {
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Span<const float> theta = store()->unsafe_values();
  std::copy(theta.begin(), theta.end(), out.begin());
  return absl::OkStatus();
}

void AsyncLocalSgd::PullLocked(PerWorker& w) {
  const absl::Span<const float> theta = store()->unsafe_values();
  std::copy(theta.begin(), theta.end(), w.anchor.begin());
  std::copy(theta.begin(), theta.end(), w.replica.begin());
  w.pulled_at = pushes_.load(std::memory_order_relaxed);
  w.since_pull = 0;
  w.round_steps = options_.average_every;
  if (options_.dynamic_local_updates) {
    const int index = static_cast<int>(&w - workers_.data());
    const double mine = step_time_s_[index];
    double fastest = 0.0;
    for (double t : step_time_s_) {
      if (t > 0.0 && (fastest == 0.0 || t < fastest)) fastest = t;
    }
    if (mine > 0.0) {
      // Times within kSameSpeed of each other are the same speed: a round's time is a sum of
      // step times whose rounding differs by worker, and equal workers must keep H exactly.
      constexpr double kSameSpeed = 1e-9;
      w.round_steps = std::max<int64_t>(
          1, static_cast<int64_t>(std::floor(static_cast<double>(options_.average_every) * fastest /
                                             mine * (1.0 + kSameSpeed))));
    }
  }
}

absl::StatusOr<DeviceSpan<const float>> AsyncLocalSgd::DoBeginStep(int worker) {
  PerWorker& w = workers_[worker];
  if (!w.started) {
    std::lock_guard<std::mutex> lock(mu_);
    PullLocked(w);
    w.started = true;
  }
  // A round's time runs from its first step's start to its push: the worker's compute speed, not
  // the exchange it waited for before (which the simulator charges between push and next step).
  if (w.since_pull == 0) w.round_start_s = clock_();
  return DeviceSpan<const float>(absl::MakeConstSpan(w.replica));
}

absl::StatusOr<StepStats> AsyncLocalSgd::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                      float lr) {
  PerWorker& w = workers_[worker];
  // A CPU policy: the gradient is in host memory. Clipped per worker (its local gradient).
  ApplyOwnGradient(sgd_options(), lr, grad.HostSpan(), w.slots, w.clipped,
                   absl::MakeSpan(w.replica));
  return EndLocalStep(worker, lr);
}

absl::StatusOr<StepStats> AsyncLocalSgd::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                            float lr) {
  const SgdOptions& o = sgd_options();
  if (!o.updates_touched_only()) return UpdatePolicy::DoFinishSparseStep(worker, grad, lr);
  // The replica is this worker's alone.
  ApplySparseSgd(lr, o.weight_decay, o.no_decay, grad, workers_[worker].replica.data());
  return EndLocalStep(worker, lr);
}

StepStats AsyncLocalSgd::EndLocalStep(int worker, float lr) {
  PerWorker& w = workers_[worker];
  store()->CompleteUpdate();
  const StepStats stats{
      .staleness = static_cast<uint64_t>(pushes_.load(std::memory_order_acquire) - w.pulled_at),
      .applied_lr = lr};
  if (++w.since_pull == w.round_steps) PushAndPull(worker);
  return stats;
}

void AsyncLocalSgd::PushAndPull(int worker) {
  PerWorker& w = workers_[worker];
  std::lock_guard<std::mutex> lock(mu_);
  if (w.since_pull > 0) {
    const double elapsed = clock_() - w.round_start_s;
    step_time_s_[worker] = elapsed / static_cast<double>(w.since_pull);
    const int64_t push = pushes_.load(std::memory_order_relaxed) + 1;
    const absl::Span<float> theta = store()->unsafe_values();
    // theta before the outer step, for the step's norm (read only: the step is unchanged).
    theta_before_.assign(theta.begin(), theta.end());
    ApplyPushedOuterStep(options_.outer, options_.delayed_nesterov, push, w.anchor, w.replica,
                         absl::MakeSpan(outer_momentum_), absl::MakeSpan(pushed_sum_), theta);
    // One push: this worker's [P] pseudo-gradient. Recorded before pushes_ is published, so a
    // row that sees the push's staleness sees its exchange too.
    RecordExchanges(1, num_params() * int64_t{sizeof(float)},
                    std::sqrt(SquaredStepNorm(theta, theta_before_)));
    pushes_.store(push, std::memory_order_release);
    ++w.pushes;
  }
  PullLocked(w);
}

absl::Status AsyncLocalSgd::DoWorkerDone(int worker) {
  PerWorker& w = workers_[worker];
  if (w.since_pull > 0) PushAndPull(worker);
  // A finished worker's last pull goes stale while the others push on: if it steps again (a
  // finished run resumed with more epochs), it pulls theta afresh, as at its first step.
  std::lock_guard<std::mutex> lock(mu_);
  w.started = false;
  return absl::OkStatus();
}

std::vector<uint64_t> AsyncLocalSgd::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  std::vector<uint64_t> steps;
  for (const PerWorker& w : workers_) steps.push_back(w.slots.step);
  return steps;
}

void AsyncLocalSgd::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  for (size_t w = 0; w < workers_.size() && w < steps.size(); ++w)
    workers_[w].slots.step = steps[w];
}

absl::StatusOr<std::vector<std::vector<float>>> AsyncLocalSgd::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  for (const PerWorker& w : workers_) AppendSlotBuffers(w.slots, &buffers);
  return buffers;
}

absl::Status AsyncLocalSgd::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& momentum) {
  const size_t slots = static_cast<size_t>(NumStateSlots(sgd_options().optimizer_params()));
  for (size_t w = 0; w < workers_.size(); ++w) {
    RestoreSlots(momentum, w * slots, {}, w, workers_[w].slots);
  }
  for (PerWorker& w : workers_) w.started = false;  // replicas start from the restored store
  return absl::OkStatus();
}

// The layout is documented in the header (Checkpoints).
constexpr int kCountersPerWorker = 5;

ModeState AsyncLocalSgd::DoSaveModeState() const {
  ModeState state;
  const double now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  state.counters.push_back(pushes_.load(std::memory_order_relaxed));
  for (size_t i = 0; i < workers_.size(); ++i) {
    const PerWorker& w = workers_[i];
    state.buffers.push_back(w.replica);
    state.buffers.push_back(w.anchor);
    state.counters.insert(state.counters.end(),
                          {w.started ? 1 : 0, w.since_pull, w.round_steps, w.pulled_at, w.pushes});
    state.seconds.push_back(step_time_s_[i]);
    state.seconds.push_back(w.since_pull > 0 ? now - w.round_start_s : 0.0);
  }
  if (!outer_momentum_.empty()) state.buffers.push_back(outer_momentum_);
  if (!pushed_sum_.empty()) state.buffers.push_back(pushed_sum_);
  return state;
}

absl::Status AsyncLocalSgd::DoCheckModeState(const ModeState& state) const {
  if (state.empty()) return absl::OkStatus();  // a fresh start: every worker pulls at its start
  const size_t w = workers_.size();
  const size_t buffers = 2 * w + (options_.outer.has_momentum() ? 1 : 0) +
                         (options_.delayed_nesterov > 1 ? 1 : 0);
  auto refuse = [](const std::string& what, bool layout) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot resume: the async_local_sgd state in the checkpoint ", what,
        layout ? "; resume with the checkpoint's workers, outer optimizer and delayed_nesterov"
               : ": the file is damaged or was not written by this version; start afresh "
                 "(overwrite_checkpoint) or resume from another checkpoint"));
  };
  if (state.buffers.size() != buffers || state.counters.size() != 1 + kCountersPerWorker * w ||
      state.seconds.size() != 2 * w) {
    return refuse(absl::StrFormat(
        "has %d buffers, %d counters and %d times, this run needs %d, %d and %d",
        state.buffers.size(), state.counters.size(), state.seconds.size(), buffers,
        1 + kCountersPerWorker * w, 2 * w), /*layout=*/true);
  }
  const int64_t pushes = state.counters[0];
  int64_t sum = 0;
  for (size_t i = 0; i < w; ++i) {
    const int64_t* c = &state.counters[1 + kCountersPerWorker * i];
    const int64_t started = c[0], since_pull = c[1], round_steps = c[2], pulled_at = c[3];
    const bool consistent =
        (started == 0 || started == 1) && since_pull >= 0 && pulled_at >= 0 &&
        pulled_at <= pushes && c[4] >= 0 &&
        (started == 0 ? since_pull == 0 : round_steps >= 1 && since_pull < round_steps) &&
        std::isfinite(state.seconds[2 * i]) && state.seconds[2 * i] >= 0.0 &&
        std::isfinite(state.seconds[2 * i + 1]) && state.seconds[2 * i + 1] >= 0.0;
    if (!consistent) return refuse(absl::StrFormat("is inconsistent for worker %d", i), /*layout=*/false);
    sum += c[4];
  }
  if (pushes < 0 || sum != pushes) {
    return refuse(absl::StrFormat("counts %d pushes, its workers %d", pushes, sum),
                  /*layout=*/false);
  }
  return absl::OkStatus();
}

void AsyncLocalSgd::DoRestoreModeState(const ModeState& state) {
  if (state.empty()) return;
  const double now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  pushes_.store(state.counters[0], std::memory_order_release);
  for (size_t i = 0; i < workers_.size(); ++i) {
    PerWorker& w = workers_[i];
    w.replica = state.buffers[2 * i];
    w.anchor = state.buffers[2 * i + 1];
    const int64_t* c = &state.counters[1 + kCountersPerWorker * i];
    w.started = c[0] == 1;
    w.since_pull = c[1];
    w.round_steps = c[2];
    w.pulled_at = c[3];
    w.pushes = c[4];
    step_time_s_[i] = state.seconds[2 * i];
    // The round goes on: its time so far counts towards its time per step.
    w.round_start_s = now - state.seconds[2 * i + 1];
  }
  size_t next = 2 * workers_.size();
  if (!outer_momentum_.empty()) outer_momentum_ = state.buffers[next++];
  if (!pushed_sum_.empty()) pushed_sum_ = state.buffers[next++];
}

}  // namespace hogwild
