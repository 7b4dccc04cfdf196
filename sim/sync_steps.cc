// sync and backup in simulated time: see sim/simulator.h.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "sim/sim_context.h"
#include "sync/optimizer_slots.h"
#include "sync/sliced_update.h"
#include "sync/tower_sum.h"

namespace hogwild {
namespace {

// The gradients of `contributors` (ascending) of global step `step` at the current parameters,
// summed in worker order into `sum` (sync/tower_sum.h's running form: bitwise the sum
// TowerAverage and BackupSync form from all towers at once); `grad` is scratch. Returns the loss
// sum and the examples used.
absl::StatusOr<std::pair<double, int64_t>> SumGradients(SimContext& ctx, SyncSplitBatches& parts,
                                                        const std::vector<int>& contributors,
                                                        int64_t step, std::vector<float>& sum,
                                                        std::vector<float>& grad) {
  double loss_sum = 0.0;
  int64_t used = 0;
  for (size_t k = 0; k < contributors.size(); ++k) {
    const auto& [rows, global_size] = parts.Part(contributors[k], step);
    HOGWILD_ASSIGN_OR_RETURN(double loss, ctx.Gradient(rows, global_size, ctx.params.data(),
                                                       absl::MakeSpan(k == 0 ? sum : grad)));
    if (k > 0) AddTower(static_cast<int>(k), grad, absl::MakeSpan(sum));
    loss_sum += loss;
    used += static_cast<int64_t>(rows.size());
  }
  return std::make_pair(loss_sum, used);
}

// The averaged gradient's elements [lo, lo + n), from the sum formed above (the SumInto of
// sync/sliced_update.h).
auto CopyFrom(const std::vector<float>& sum) {
  return [&sum](int64_t lo, int64_t n, float* out) { std::copy_n(sum.data() + lo, n, out); };
}

}  // namespace

absl::StatusOr<double> RunSync(SimContext& ctx) {
  const TrainerOptions& t = ctx.trainer();
  const int num_workers = t.num_workers;
  const size_t num_params = static_cast<size_t>(ctx.num_params());
  std::vector<float> sum(num_params), grad(num_params);
  // The update TowerAverage's W workers make, slice by slice, from one thread.
  SlicedUpdate update(ctx.sgd, static_cast<int64_t>(num_params), num_workers);
  SyncSplitBatches parts(&ctx);
  std::vector<int> everyone(static_cast<size_t>(num_workers));
  for (int w = 0; w < num_workers; ++w) everyone[w] = w;
  const int64_t steps_per_epoch = ctx.plan->StepsPerEpoch(0);
  const int64_t total_steps = t.epochs * steps_per_epoch;
  double now = 0.0;
  for (int64_t step = 0; step < total_steps; ++step) {
    parts.Release(step / steps_per_epoch);
    HOGWILD_ASSIGN_OR_RETURN(auto loss_used, SumGradients(ctx, parts, everyone, step, sum, grad));
    double slowest_s = 0.0;
    for (int w = 0; w < num_workers; ++w) slowest_s = std::max(slowest_s, ctx.sampler->Next(w));
    now += slowest_s + ctx.ExchangeS(1.0, /*all_reduce=*/true);
    const float lr = ctx.LrNow();
    const uint64_t optimizer_step = update.step() + 1;
    update.UpdateAllSlices(lr, optimizer_step, CopyFrom(sum), ctx.params.data());
    update.set_step(optimizer_step);
    // TowerAverage's all-reduce of every worker's [P] gradient.
    ctx.metrics->RecordExchanges(
        1, int64_t{num_workers} * static_cast<int64_t>(num_params) * int64_t{sizeof(float)});
    HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(parts.Part(0, step).second, loss_used.first,
                                                      /*staleness=*/0, lr, now));
    for (int64_t& steps : ctx.worker_steps) ++steps;
    // The weight EMA (async and sync only, ValidateOptions): worker 0 after the closing barrier.
    HOGWILD_RETURN_IF_ERROR(ctx.UpdateEma());
    HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(now));
  }
  return now;
}

absl::StatusOr<double> RunBackup(SimContext& ctx) {
  const TrainerOptions& t = ctx.trainer();
  const int num_workers = t.num_workers;
  const size_t needed = static_cast<size_t>(num_workers - t.backup_workers);
  const size_t num_params = static_cast<size_t>(ctx.num_params());
  std::vector<float> sum(num_params), grad(num_params);
  OptimizerSlots slots(ctx.sgd, static_cast<int64_t>(num_params));  // BackupSync's one state
  SyncSplitBatches parts(&ctx);
  const int64_t steps_per_epoch = ctx.plan->StepsPerEpoch(0);
  const int64_t total_steps = t.epochs * steps_per_epoch;

  // Worker w computes its part of global step next_step[w]; the open step is `applied` (the
  // updates so far). A worker starts a step once the update before it is applied: a step's
  // parameters are those after every earlier update.
  std::vector<int64_t> next_step(static_cast<size_t>(num_workers), 0);
  int64_t applied = 0;
  double last_update_s = 0.0;            // when update `applied - 1` was applied (0 before any)
  std::vector<int> contributors;         // of the open step, in arrival order
  int64_t dropped_examples = 0;          // computed and dropped since the last update
  using Event = std::pair<double, int>;  // (finish time, worker); ties by worker id
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  auto start = [&](int w, double now) {
    if (next_step[w] >= total_steps) return;
    // A step that is not open yet (only ever the next one, while its update is being applied)
    // starts when it opens.
    const double start_s = next_step[w] >= applied ? std::max(now, last_update_s) : now;
    events.emplace(start_s + ctx.sampler->Next(w), w);
  };
  for (int w = 0; w < num_workers; ++w) start(w, 0.0);
  while (applied < total_steps) {
    const auto [now, w] = events.top();
    events.pop();
    const int64_t step = next_step[w]++;
    if (step != applied) {
      // Late: its step closed without it (BackupSync: StepStats::dropped).
      ++ctx.dropped[w];
      // Sent, then dropped, as BackupSync counts it.
      ctx.metrics->CountDropped();
      ctx.metrics->RecordExchanges(0, static_cast<int64_t>(num_params) * int64_t{sizeof(float)});
      dropped_examples += static_cast<int64_t>(parts.Part(w, step).first.size());
      start(w, now);
      continue;
    }
    contributors.push_back(w);
    if (contributors.size() < needed) continue;  // it waits for the update
    // The step closes: its gradients (computed from the parameters the step opened with, which
    // no update has changed since) are summed in worker order, rescaled from the whole batch to
    // the examples used and applied with BackupSync::Apply's arithmetic.
    std::sort(contributors.begin(), contributors.end());
    HOGWILD_ASSIGN_OR_RETURN(auto loss_used,
                             SumGradients(ctx, parts, contributors, step, sum, grad));
    const int64_t whole = parts.Part(contributors.front(), step).second;
    const int64_t used = loss_used.second;
    RescaleSum(UsedExamplesRescale(used, whole), sum.data(), static_cast<int64_t>(num_params));
    const float lr = ctx.LrNow();
    UpdateAveraged(ctx.sgd, lr, ++slots.step, CopyFrom(sum), slots, absl::MakeSpan(ctx.params));
    ++applied;
    last_update_s = now + ctx.ExchangeS(1.0, /*all_reduce=*/true);
    // BackupSync's all-reduce of the contributors' [P] gradients.
    ctx.metrics->RecordExchanges(1, static_cast<int64_t>(contributors.size()) *
                                        static_cast<int64_t>(num_params) * int64_t{sizeof(float)});
    HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(used + dropped_examples, loss_used.first,
                                                      /*staleness=*/0, lr, last_update_s));
    dropped_examples = 0;
    for (int c : contributors) ++ctx.worker_steps[c];
    HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(last_update_s));
    for (int c : contributors) start(c, last_update_s);
    contributors.clear();
    // The slowest worker's step bounds the epochs still needed.
    parts.Release(*std::min_element(next_step.begin(), next_step.end()) / steps_per_epoch);
  }
  return last_update_s;
}

}  // namespace hogwild
