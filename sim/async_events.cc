// async, ssp and async_local_sgd in simulated time: see sim/simulator.h.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "core/status_macros.h"
#include "sim/sim_context.h"
#include "sync/async_local_sgd.h"
#include "sync/hogwild.h"
#include "sync/parameter_store.h"
#include "sync/stale_synchronous.h"
#include "sync/update_policy.h"
#include "trainer/weight_ema.h"

namespace hogwild {
namespace {

// One worker's state: the step in flight, its clock. Its parameter snapshot
// and optimizer state are the policy's.
struct AsyncWorker {
  const std::pair<std::vector<int64_t>, int64_t>* pending = nullptr;  // taken, not started
  bool blocked = false;     // ssp: waiting for the slowest worker
  bool done = false;        // its data is used up
  int64_t clock = 0;        // steps completed (the clock-gap statistic)
  std::vector<float> grad;  // [P] the gradient of the step in flight
  double loss_sum = 0.0;
  int64_t examples = 0;
};

}  // namespace

absl::StatusOr<double> RunAsyncOrSsp(SimContext& ctx) {
  const TrainerOptions& t = ctx.trainer();
  const bool ssp = t.mode == Mode::kSsp;
  // The clock async_local_sgd's dynamic local updates measure rounds with: simulated seconds.
  double now = 0.0;
  const int num_workers = t.num_workers;
  const int64_t num_params = ctx.num_params();
  // async_local_sgd: one push and pull.
  const double options_allreduce_s = ctx.ExchangeS(1.0, /*all_reduce=*/false);
  // The real policy objects, called from this one thread: BeginStep at a step's read event,
  // FinishStep at its finish event. Updates never overlap here, so Hogwild's lock-free updates
  // lose nothing and the staleness the policy counts is exact.
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<ParameterStore> store,
                           ParameterStore::Create(num_params));
  std::copy(ctx.params.begin(), ctx.params.end(), store->unsafe_values().begin());
  std::unique_ptr<UpdatePolicy> policy;
  StaleSynchronous* bounded = nullptr;
  AsyncLocalSgd* local = nullptr;
  if (t.mode == Mode::kAsyncLocalSgd) {
    auto owned = std::make_unique<AsyncLocalSgd>(
        store.get(), num_workers, ctx.sgd,
        AsyncLocalSgdOptions{.average_every = t.average_every,
                             .outer = t.outer,
                             .delayed_nesterov = t.delayed_nesterov,
                             .dynamic_local_updates = t.dynamic_local_updates},
        [&now] { return now; });
    local = owned.get();
    policy = std::move(owned);
  } else if (ssp) {
    auto owned =
        std::make_unique<StaleSynchronous>(store.get(), num_workers, ctx.sgd, t.staleness_bound);
    bounded = owned.get();
    policy = std::move(owned);
  } else {
    policy = std::make_unique<Hogwild>(store.get(), num_workers, ctx.sgd);
  }
  ctx.policy = policy.get();
  ctx.metrics->SetPolicy(policy.get());  // the rows' exchanges and dropped are the policy's
  // The policy dies with this function: never leave the context or the metrics pointing at it.
  absl::Cleanup forget_policy = [&ctx] {
    ctx.policy = nullptr;
    ctx.metrics->SetPolicy(nullptr);
  };
  std::vector<AsyncWorker> workers(static_cast<size_t>(num_workers));
  for (AsyncWorker& w : workers) w.grad.resize(static_cast<size_t>(num_params));
  ShardedBatches shards(&ctx);
  // The smallest clock of the workers that still have data (as StaleSynchronous::min_clock), for
  // the clock-gap statistic only: whether ssp lets a step start is the policy's MayBeginStep.
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
  // Starts worker w's pending step at time `now`: reads the parameters (BeginStep), computes its
  // gradient and schedules the update.
  auto start_step = [&](int w, double now) -> absl::Status {
    AsyncWorker& worker = workers[w];
    const auto* batch = worker.pending;
    worker.pending = nullptr;
    ctx.max_clock_gap = std::max(ctx.max_clock_gap, worker.clock - min_clock());
    HOGWILD_ASSIGN_OR_RETURN(DeviceSpan<const float> at, policy->BeginStep(w));
    HOGWILD_ASSIGN_OR_RETURN(worker.loss_sum, ctx.Gradient(batch->first, batch->second, at.data(),
                                                           absl::MakeSpan(worker.grad)));
    worker.examples = static_cast<int64_t>(batch->first.size());
    events.emplace(now + ctx.sampler->Next(w), w);
    return absl::OkStatus();
  };
  // async_local_sgd: a worker whose step pushed waits for the push and pull
  // (SimOptions::allreduce_time_s, or the bandwidth model's) before its next step; the run ends
  // after the last one.
  double end_s = 0.0;
  auto pushes_of = [&](int w) { return local == nullptr ? 0 : local->worker_pushes(w); };
  // Takes worker w's next batch and starts it, unless ssp holds it back; without one, w is done.
  auto advance = [&](int w, double now) -> absl::Status {
    AsyncWorker& worker = workers[w];
    worker.pending = shards.Next(w);
    if (worker.pending == nullptr) {
      worker.done = true;
      const int64_t pushes = pushes_of(w);
      HOGWILD_RETURN_IF_ERROR(policy->WorkerDone(w));
      if (pushes_of(w) != pushes) end_s = std::max(end_s, now + options_allreduce_s);
      return absl::OkStatus();
    }
    if (ssp && !bounded->MayBeginStep(w)) {
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
      if (worker.blocked && bounded->MayBeginStep(v)) {
        worker.blocked = false;
        HOGWILD_RETURN_IF_ERROR(start_step(v, now));
      }
    }
    return absl::OkStatus();
  };

  // Events of kind "start": a worker whose push is done takes its next step.
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> resumes;
  for (int w = 0; w < num_workers; ++w) HOGWILD_RETURN_IF_ERROR(advance(w, 0.0));
  while (!events.empty() || !resumes.empty()) {
    // A resume at the same time as a finish goes first (it was scheduled earlier).
    if (!resumes.empty() && (events.empty() || resumes.top() <= events.top())) {
      const auto [time_s, w] = resumes.top();
      resumes.pop();
      now = time_s;
      HOGWILD_RETURN_IF_ERROR(advance(w, now));
      continue;
    }
    const auto [time_s, w] = events.top();
    events.pop();
    now = time_s;
    AsyncWorker& worker = workers[w];
    const int64_t pushes = pushes_of(w);
    // The learning rate of the global step before this update, as the real worker reads it.
    HOGWILD_ASSIGN_OR_RETURN(
        StepStats stats,
        policy->FinishStep(w, DeviceSpan<const float>(absl::MakeConstSpan(worker.grad)),
                           ctx.LrNow()));
    ++ctx.worker_steps[w];
    ++worker.clock;
    if (stats.dropped) {  // too stale (SgdOptions::max_delay): computed, not applied
      ++ctx.dropped[w];
      ctx.metrics->RecordDropped(worker.examples, worker.loss_sum);
      HOGWILD_RETURN_IF_ERROR(advance(w, now));
      HOGWILD_RETURN_IF_ERROR(release(now));
      continue;
    }
    HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(worker.examples, worker.loss_sum,
                                                      stats.staleness, stats.applied_lr, now));
    if (WorkerUpdatesEma(t.mode, w)) HOGWILD_RETURN_IF_ERROR(ctx.UpdateEma());
    HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(now));
    if (pushes_of(w) != pushes && options_allreduce_s > 0.0) {
      resumes.emplace(now + options_allreduce_s, w);
      end_s = std::max(end_s, now + options_allreduce_s);
      continue;
    }
    HOGWILD_RETURN_IF_ERROR(advance(w, now));
    HOGWILD_RETURN_IF_ERROR(release(now));
  }
  HOGWILD_RETURN_IF_ERROR(ctx.ReadPolicyParams());
  return std::max(now, end_s);
}

}  // namespace hogwild
