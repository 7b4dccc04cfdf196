// locked and round_robin in simulated time: see sim/simulator.h. Both apply one update at a
// time, so the event order is the policy's own order and no priority of finish times is needed
// beyond locked's queue of requests.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "sim/sim_context.h"
#include "sync/locked.h"
#include "sync/parameter_store.h"
#include "sync/round_robin.h"
#include "sync/update_policy.h"
#include "trainer/weight_ema.h"

namespace hogwild {
namespace {

using Batch = std::pair<std::vector<int64_t>, int64_t>;

// One worker's state: its data position, the step in flight.
struct SerialWorker {
  const Batch* pending = nullptr;  // the batch of the step in flight or asked for
  double loss_sum = 0.0;
  int64_t examples = 0;
  double ready_s = 0.0;  // locked: when it asked for the lock; round_robin: its gradient's end
};

// What both loops share: the workers, their shards epoch by epoch (async's data split, each
// epoch's permutation computed once), and the real policy (sync/locked.h, sync/round_robin.h)
// called from this one thread: BeginStep at a step's read, FinishStep at its update. The policy
// never waits here: locked's steps run one at a time, and round_robin's updates are applied in
// its own turn order.
class SerialSteps {
 public:
  SerialSteps(SimContext& ctx, int64_t gradients)
      : ctx_(ctx), workers_(static_cast<size_t>(ctx.trainer().num_workers)), shards_(&ctx) {
    grads_.assign(static_cast<size_t>(gradients),
                  std::vector<float>(static_cast<size_t>(ctx.num_params())));
  }
  ~SerialSteps() { ctx_.policy = nullptr; }  // the policy dies with this object

  // Creates the mode's policy over a store holding ctx.params.
  absl::Status Start() {
    HOGWILD_ASSIGN_OR_RETURN(store_, ParameterStore::Create(ctx_.num_params()));
    std::copy(ctx_.params.begin(), ctx_.params.end(), store_->unsafe_values().begin());
    const int w = num_workers();
    if (ctx_.trainer().mode == Mode::kLocked) {
      policy_ = std::make_unique<Locked>(store_.get(), w, ctx_.sgd);
    } else {
      policy_ = std::make_unique<RoundRobin>(store_.get(), w, ctx_.sgd);
    }
    ctx_.policy = policy_.get();
    return absl::OkStatus();
  }

  SerialWorker& worker(int w) { return workers_[w]; }
  int num_workers() const { return static_cast<int>(workers_.size()); }

  // Takes worker w's next batch into `pending`; false when its data is used up.
  bool TakeBatch(int w) {
    workers_[w].pending = shards_.Next(w);
    return workers_[w].pending != nullptr;
  }

  // Worker w's data is used up: it leaves the policy (round_robin's rotation).
  absl::Status Done(int w) { return policy_->WorkerDone(w); }

  // Worker w reads the parameters (BeginStep) and computes its pending batch's gradient into
  // gradient buffer `slot`.
  absl::Status Compute(int w, size_t slot) {
    SerialWorker& worker = workers_[w];
    HOGWILD_ASSIGN_OR_RETURN(DeviceSpan<const float> at, policy_->BeginStep(w));
    HOGWILD_ASSIGN_OR_RETURN(worker.loss_sum,
                             ctx_.Gradient(worker.pending->first, worker.pending->second, at.data(),
                                           absl::MakeSpan(grads_[slot])));
    worker.examples = static_cast<int64_t>(worker.pending->first.size());
    return absl::OkStatus();
  }

  // Applies worker w's gradient (buffer `slot`) at simulated time `now` through the policy, with
  // the learning rate of the global step before it (as the real worker reads it), and records
  // and evaluates it.
  absl::Status Apply(int w, size_t slot, double now) {
    SerialWorker& worker = workers_[w];
    HOGWILD_ASSIGN_OR_RETURN(
        StepStats stats,
        policy_->FinishStep(w, DeviceSpan<const float>(absl::MakeConstSpan(grads_[slot])),
                            ctx_.LrNow()));
    ++ctx_.worker_steps[w];
    HOGWILD_RETURN_IF_ERROR(ctx_.metrics->RecordUpdate(worker.examples, worker.loss_sum,
                                                       stats.staleness, stats.applied_lr, now));
    if (WorkerUpdatesEma(ctx_.trainer().mode, w)) HOGWILD_RETURN_IF_ERROR(ctx_.UpdateEma());
    return ctx_.MaybeEvaluate(now);
  }

 private:
  SimContext& ctx_;
  std::unique_ptr<ParameterStore> store_;
  std::unique_ptr<UpdatePolicy> policy_;
  std::vector<SerialWorker> workers_;
  std::vector<std::vector<float>> grads_;  // [gradients][P]
  ShardedBatches shards_;
};

}  // namespace

absl::StatusOr<double> RunLocked(SimContext& ctx) {
  // Only the lock holder computes, so one gradient buffer serves every worker.
  SerialSteps steps(ctx, 1);
  HOGWILD_RETURN_IF_ERROR(steps.Start());
  // Requests for the lock: (simulated time asked, worker), first come first served, ties by
  // worker id.
  using Request = std::pair<double, int>;
  std::priority_queue<Request, std::vector<Request>, std::greater<Request>> requests;
  for (int w = 0; w < steps.num_workers(); ++w) {
    if (steps.TakeBatch(w)) {
      requests.emplace(0.0, w);
    } else {
      HOGWILD_RETURN_IF_ERROR(steps.Done(w));
    }
  }
  double free_s = 0.0;  // when the lock is next free
  while (!requests.empty()) {
    const auto [asked_s, w] = requests.top();
    requests.pop();
    // The whole step holds the lock: the read, compute_time of gradient, then the update.
    HOGWILD_RETURN_IF_ERROR(steps.Compute(w, 0));
    free_s = std::max(asked_s, free_s) + ctx.sampler->Next(w);
    HOGWILD_RETURN_IF_ERROR(steps.Apply(w, 0, free_s));
    if (steps.TakeBatch(w)) {
      requests.emplace(free_s, w);
    } else {
      HOGWILD_RETURN_IF_ERROR(steps.Done(w));
    }
  }
  HOGWILD_RETURN_IF_ERROR(ctx.ReadPolicyParams());
  return free_s;
}

absl::StatusOr<double> RunRoundRobin(SimContext& ctx) {
  const int num_workers = ctx.trainer().num_workers;
  // Every worker holds its gradient from its read until its turn.
  SerialSteps steps(ctx, num_workers);
  HOGWILD_RETURN_IF_ERROR(steps.Start());
  int active = 0;
  // Every worker reads the initial parameters at time 0.
  for (int w = 0; w < num_workers; ++w) {
    if (!steps.TakeBatch(w)) {
      HOGWILD_RETURN_IF_ERROR(steps.Done(w));
      continue;
    }
    ++active;
    HOGWILD_RETURN_IF_ERROR(steps.Compute(w, static_cast<size_t>(w)));
    steps.worker(w).ready_s = ctx.sampler->Next(w);
  }
  double now = 0.0;
  for (int w = 0; active > 0; w = (w + 1) % num_workers) {
    SerialWorker& worker = steps.worker(w);
    if (worker.pending == nullptr) continue;  // out of the rotation
    // Its turn: the update lands when both its gradient and the previous update are done.
    now = std::max(now, worker.ready_s);
    HOGWILD_RETURN_IF_ERROR(steps.Apply(w, static_cast<size_t>(w), now));
    // Its next step reads the parameters its own update left, at once.
    if (!steps.TakeBatch(w)) {
      --active;
      HOGWILD_RETURN_IF_ERROR(steps.Done(w));
      continue;
    }
    HOGWILD_RETURN_IF_ERROR(steps.Compute(w, static_cast<size_t>(w)));
    worker.ready_s = now + ctx.sampler->Next(w);
  }
  HOGWILD_RETURN_IF_ERROR(ctx.ReadPolicyParams());
  return now;
}

}  // namespace hogwild
