// local_sgd in simulated time: see sim/simulator.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/status_macros.h"
#include "sim/sim_context.h"
#include "sync/optimizer_slots.h"
#include "sync/outer_optimizer.h"
#include "sync/tower_sum.h"

namespace hogwild {

absl::StatusOr<double> RunLocalSgd(SimContext& ctx) {
  const TrainerOptions& t = ctx.trainer();
  if (!t.streaming.is_default()) return RunStreamingLocalSgd(ctx);
  const int num_workers = t.num_workers;
  const int64_t num_params = ctx.num_params();
  const size_t p = static_cast<size_t>(num_params);
  // The replicas never need to coexist: within a round each worker's H steps depend on its own
  // replica only, so worker after worker trains a copy of the average and adds it to the sum
  // (sync/tower_sum.h's running form: bitwise LocalSgd's average of all replicas at once).
  std::vector<float> replica(p), sum(p), grad(p), clipped, before(p);
  // The outer optimizer's momentum (LocalSgd's), when it has one.
  std::vector<float> outer_momentum(t.outer.has_momentum() ? p : 0);
  // Each replica's own optimizer state, as LocalSgd's (never averaged).
  std::vector<OptimizerSlots> slots(static_cast<size_t>(num_workers),
                                    OptimizerSlots(ctx.sgd, num_params));
  SyncSplitBatches parts(&ctx);
  const int64_t steps_per_epoch = ctx.plan->StepsPerEpoch(0);
  const int64_t total_steps = t.epochs * steps_per_epoch;
  std::vector<double> loss_sum;        // [round length] over the workers
  std::vector<int64_t> step_examples;  // [round length]
  double now = 0.0;
  for (int64_t first = 0; first < total_steps; first += t.average_every) {
    const int64_t last = std::min(total_steps, first + t.average_every);
    parts.Release(first / steps_per_epoch);
    // Every local step of the round has the learning rate of the round's first global step.
    const float lr = ctx.LrNow();
    loss_sum.assign(static_cast<size_t>(last - first), 0.0);
    step_examples.assign(static_cast<size_t>(last - first), 0);
    double slowest_s = 0.0;
    for (int w = 0; w < num_workers; ++w) {
      std::copy(ctx.params.begin(), ctx.params.end(), replica.begin());
      double busy_s = 0.0;
      for (int64_t step = first; step < last; ++step) {
        const auto& [rows, local_size] = parts.Part(w, step);
        HOGWILD_ASSIGN_OR_RETURN(
            double loss, ctx.Gradient(rows, local_size, replica.data(), absl::MakeSpan(grad)));
        ApplyOwnGradient(ctx.sgd, lr, grad, slots[w], clipped, absl::MakeSpan(replica));
        loss_sum[step - first] += loss;
        step_examples[step - first] += static_cast<int64_t>(rows.size());
        busy_s += ctx.sampler->Next(w);
      }
      slowest_s = std::max(slowest_s, busy_s);
      AddTower(w, replica, absl::MakeSpan(sum));
      ctx.worker_steps[w] += last - first;
    }
    // The mean, then the outer step from it (plain averaging: the mean), as LocalSgd's slices.
    DivideSum(num_workers, sum, absl::MakeSpan(sum));
    std::copy(ctx.params.begin(), ctx.params.end(), before.begin());
    ApplyOuterStep(t.outer, sum, absl::MakeSpan(outer_momentum), absl::MakeSpan(ctx.params));
    // LocalSgd's averaging: every worker's [P] replica, and the outer step's norm.
    ctx.metrics->RecordExchanges(1, int64_t{num_workers} * num_params * int64_t{sizeof(float)},
                                 std::sqrt(SquaredStepNorm(ctx.params, before)));
    now += slowest_s + ctx.ExchangeS(1.0, /*all_reduce=*/true);
    for (int64_t step = first; step < last; ++step) {
      HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(
          step_examples[step - first], loss_sum[step - first], /*staleness=*/0, lr, now));
    }
    HOGWILD_RETURN_IF_ERROR(ctx.MaybeEvaluate(now));
  }
  return now;
}

}  // namespace hogwild
