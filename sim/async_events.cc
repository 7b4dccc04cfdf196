// async and ssp in simulated time: see sim/simulator.h.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"
#include "sim/sim_context.h"
#include "sync/update_policy.h"

namespace hogwild {
namespace {

// One worker's state: its data position, the step in flight, its clock.
struct AsyncWorker {
  int64_t epoch = -1;  // the epoch of `batches`
  size_t next = 0;     // index in `batches` of the next step's batch
  EpochBatches batches;
  const std::pair<std::vector<int64_t>, int64_t>* pending = nullptr;  // taken, not started
  bool blocked = false;         // ssp: waiting for the slowest worker
  bool done = false;            // its data is used up
  int64_t clock = 0;            // steps completed
  std::vector<float> grad;      // [P] the gradient of the step in flight
  std::vector<float> velocity;  // [P] with momentum, else empty
  uint64_t read_version = 0;
  double loss_sum = 0.0;
  int64_t examples = 0;
};

}  // namespace

absl::StatusOr<double> RunAsyncOrSsp(SimContext& ctx) {
  const TrainerOptions& t = ctx.trainer();
  const bool ssp = t.mode == Mode::kSsp;
  const int num_workers = t.num_workers;
  const int64_t num_params = ctx.num_params();
  std::vector<AsyncWorker> workers(static_cast<size_t>(num_workers));
  for (AsyncWorker& w : workers) {
    w.grad.resize(static_cast<size_t>(num_params));
    if (t.sgd.momentum != 0.0f) w.velocity.assign(static_cast<size_t>(num_params), 0.0f);
  }
  // Each epoch's permutation, computed once, dropped when every worker has taken its shard.
  std::map<int64_t, std::pair<std::vector<int64_t>, int>> permutations;
  auto next_batch = [&](int w) -> const std::pair<std::vector<int64_t>, int64_t>* {
    AsyncWorker& worker = workers[w];
    while (worker.next >= worker.batches.size()) {
      if (++worker.epoch >= t.epochs) return nullptr;
      auto it = permutations.find(worker.epoch);
      if (it == permutations.end()) {
        it = permutations
                 .emplace(worker.epoch, std::make_pair(ctx.plan->EpochPermutation(worker.epoch), 0))
                 .first;
      }
      worker.batches = ctx.plan->EpochBatches(w, it->second.first);
      worker.next = 0;
      if (++it->second.second == num_workers) permutations.erase(it);
    }
    return &worker.batches[worker.next++];
  };
  // The smallest clock of the workers that still have data (as StaleSynchronous::min_clock).
  auto min_clock = [&] {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (const AsyncWorker& w : workers) {
      if (!w.done) m = std::min(m, w.clock);
    }
    return m;
  };

  // Events: (finish time in simulated seconds, worker); the earliest first, ties by worker id.
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  // Starts worker w's pending step at time `now`: reads the parameters, computes its gradient
  // and schedules the update.
  auto start_step = [&](int w, double now) -> absl::Status {
    AsyncWorker& worker = workers[w];
    const auto* batch = worker.pending;
    worker.pending = nullptr;
    ctx.max_clock_gap = std::max(ctx.max_clock_gap, worker.clock - min_clock());
    worker.read_version = static_cast<uint64_t>(ctx.metrics->steps());
    HOGWILD_ASSIGN_OR_RETURN(
        worker.loss_sum,
        ctx.Gradient(batch->first, batch->second, ctx.params.data(), absl::MakeSpan(worker.grad)));
    worker.examples = static_cast<int64_t>(batch->first.size());
    events.emplace(now + ctx.sampler->Next(w), w);
    return absl::OkStatus();
  };
  // Takes worker w's next batch and starts it, unless ssp holds it back; without one, w is done.
  auto advance = [&](int w, double now) -> absl::Status {
    AsyncWorker& worker = workers[w];
    worker.pending = next_batch(w);
    if (worker.pending == nullptr) {
      worker.done = true;
      return absl::OkStatus();
    }
    if (ssp && worker.clock - min_clock() > t.staleness_bound) {
      worker.blocked = true;
      return absl::OkStatus();
    }
    return start_step(w, now);
  };
  // ssp: starts, in worker order, the held-back workers the bound now lets through (starting a
  // step changes no clock, so one pass is enough).
  auto release = [&](double now) -> absl::Status {
    for (int v = 0; ssp && v < num_workers; ++v) {
      AsyncWorker& worker = workers[v];
      if (worker.blocked && worker.clock - min_clock() <= t.staleness_bound) {
        worker.blocked = false;
        HOGWILD_RETURN_IF_ERROR(start_step(v, now));
      }
    }
    return absl::OkStatus();
  };

  for (int w = 0; w < num_workers; ++w) HOGWILD_RETURN_IF_ERROR(advance(w, 0.0));
  double now = 0.0;
  while (!events.empty()) {
    const auto [time_s, w] = events.top();
    events.pop();
    now = time_s;
    AsyncWorker& worker = workers[w];
    const StepStats stats =
        AsyncStepStats(static_cast<uint64_t>(ctx.metrics->steps()), worker.read_version,
                       ctx.LrNow(), t.sgd.staleness_aware_lr);
    const SgdMomentumFn sgd{stats.applied_lr, t.sgd.momentum, t.sgd.weight_decay};
    cpu::SgdUpdate(sgd, worker.grad, absl::MakeSpan(worker.velocity), absl::MakeSpan(ctx.params));
    ++ctx.worker_steps[w];
    ++worker.clock;
    HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(worker.examples, worker.loss_sum,
                                                      stats.staleness, stats.applied_lr, now));
    HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(now));
    HOGWILD_RETURN_IF_ERROR(advance(w, now));
    HOGWILD_RETURN_IF_ERROR(release(now));
  }
  return now;
}

}  // namespace hogwild
