// local_sgd with Streaming DiLoCo's fragments (sync/streaming.h) in simulated time: see
// sim/simulator.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/status_macros.h"
#include "sim/sim_context.h"
#include "sync/optimizer_slots.h"
#include "sync/outer_optimizer.h"
#include "sync/streaming.h"
#include "sync/tower_sum.h"

namespace hogwild {

absl::StatusOr<double> RunStreamingLocalSgd(SimContext& ctx) {
  const TrainerOptions& t = ctx.trainer();
  const StreamingOptions& streaming = t.streaming;
  const int num_workers = t.num_workers;
  const int64_t num_params = ctx.num_params();
  HOGWILD_RETURN_IF_ERROR(
      CheckStreamingOptions(streaming, t.average_every, num_params, "TrainerOptions::streaming."));
  const FragmentSchedule schedule(streaming.fragments, t.average_every, num_params);
  const int64_t tau = streaming.overlap_steps;
  const size_t p = static_cast<size_t>(num_params);
  // Unlike plain averaging, every replica lives through the run: between two exchanges some of
  // its fragments differ from the shared parameters (CheckSimStateFits counts them).
  std::vector<std::vector<float>> replicas(static_cast<size_t>(num_workers), ctx.params);
  std::vector<const float*> replica_data;
  for (const std::vector<float>& r : replicas) replica_data.push_back(r.data());
  std::vector<float> grad(p), mean, clipped, before;
  std::vector<float> outer_momentum(t.outer.has_momentum() ? p : 0);
  std::vector<OptimizerSlots> slots(static_cast<size_t>(num_workers),
                                    OptimizerSlots(ctx.sgd, num_params));
  SyncSplitBatches parts(&ctx);
  const int64_t steps_per_epoch = ctx.plan->StepsPerEpoch(0);
  const int64_t total_steps = t.epochs * steps_per_epoch;
  // Time: each worker its own clock. An exchange starts when the last worker reaches it and takes
  // allreduce_time_s / F (a fragment's bytes); a worker merges its result at the end of its step
  // s + tau, waiting for it only when it has not arrived yet.
  const double exchange_s = ctx.ExchangeS(1.0 / streaming.fragments, /*all_reduce=*/true);
  std::vector<double> clock(static_cast<size_t>(num_workers), 0.0);
  std::vector<double> arrives(static_cast<size_t>(streaming.fragments), 0.0);
  auto wait_and_merge = [&](int q) {
    const absl::Span<const float> theta =
        absl::MakeConstSpan(ctx.params)
            .subspan(schedule.begin(q), static_cast<size_t>(schedule.end(q) - schedule.begin(q)));
    for (int w = 0; w < num_workers; ++w) {
      clock[w] = std::max(clock[w], arrives[q]);
      MixIntoReplica(streaming.mix_alpha, theta,
                     absl::MakeSpan(replicas[w]).subspan(schedule.begin(q), theta.size()));
    }
  };
  // The exchange of fragment q: the replicas' mean in worker order and the outer step on the
  // shared parameters, as LocalSgd::Exchange's slices; returns when it arrives. Adds the step's
  // squared norm to `squares` and the fragment's floats to `floats` (recorded by the caller:
  // LocalSgd records the exchanges of one barrier pair together).
  double squares = 0.0;
  int64_t floats = 0;
  auto exchange = [&](int q) {
    const int64_t begin = schedule.begin(q), size = schedule.end(q) - begin;
    mean.resize(static_cast<size_t>(size));
    AverageTowers(absl::MakeConstSpan(replica_data), begin, size, mean.data());
    const absl::Span<float> theta = absl::MakeSpan(ctx.params).subspan(begin, mean.size());
    before.assign(theta.begin(), theta.end());
    ApplyOuterStep(t.outer, mean,
                   outer_momentum.empty()
                       ? absl::Span<float>()
                       : absl::MakeSpan(outer_momentum).subspan(begin, mean.size()),
                   theta);
    squares += SquaredStepNorm(theta, before);
    floats += size;
    const double start = *std::max_element(clock.begin(), clock.end());
    arrives[q] = start + exchange_s;
    return arrives[q];
  };
  // The global step advances at each exchange by the steps since the previous one (LocalSgd's
  // store version): their rows are logged then, at the exchange's arrival.
  std::vector<double> loss_sum;        // [steps since the last exchange] over the workers
  std::vector<int64_t> step_examples;  // [steps since the last exchange]
  std::vector<float> step_lr;          // [steps since the last exchange]
  double now = 0.0;
  auto record = [&](double at, int64_t exchanges) -> absl::Status {
    // The exchanges first (LocalSgd records them before its second barrier): every worker sent
    // its replica's fragments.
    ctx.metrics->RecordExchanges(exchanges, int64_t{num_workers} * floats * int64_t{sizeof(float)},
                                 std::sqrt(squares));
    squares = 0.0;
    floats = 0;
    now = std::max(now, at);
    for (size_t i = 0; i < loss_sum.size(); ++i) {
      HOGWILD_RETURN_IF_ERROR(ctx.metrics->RecordUpdate(step_examples[i], loss_sum[i],
                                                        /*staleness=*/0, step_lr[i], now));
    }
    loss_sum.clear();
    step_examples.clear();
    step_lr.clear();
    return ctx.MaybeEvaluate(now);
  };
  for (int64_t step = 1; step <= total_steps; ++step) {
    const int64_t global = step - 1;  // the global batch of this local step
    parts.Release(global / steps_per_epoch);
    const float lr = ctx.LrNow();
    loss_sum.push_back(0.0);
    step_examples.push_back(0);
    step_lr.push_back(lr);
    for (int w = 0; w < num_workers; ++w) {
      const auto& [rows, local_size] = parts.Part(w, global);
      HOGWILD_ASSIGN_OR_RETURN(
          double loss, ctx.Gradient(rows, local_size, replicas[w].data(), absl::MakeSpan(grad)));
      ApplyOwnGradient(ctx.sgd, lr, grad, slots[w], clipped, absl::MakeSpan(replicas[w]));
      loss_sum.back() += loss;
      step_examples.back() += static_cast<int64_t>(rows.size());
      clock[w] += ctx.sampler->Next(w);
      ++ctx.worker_steps[w];
    }
    // As LocalSgd::EndLocalStep: the merge due now, then the exchange due now.
    if (tau > 0) {
      if (const int q = schedule.ExchangedAt(step - tau); q >= 0) wait_and_merge(q);
    }
    if (const int q = schedule.ExchangedAt(step); q >= 0) {
      const double arrived = exchange(q);
      if (tau == 0) wait_and_merge(q);
      HOGWILD_RETURN_IF_ERROR(record(arrived, 1));
    }
  }
  // The end of the data, as LocalSgd::DoWorkerDone: the pending merges, then one exchange of the
  // fragments not exchanged at the last step (their bytes together).
  for (int64_t at = std::max<int64_t>(1, total_steps - tau + 1); tau > 0 && at <= total_steps;
       ++at) {
    if (const int q = schedule.ExchangedAt(at); q >= 0) wait_and_merge(q);
  }
  double end = *std::max_element(clock.begin(), clock.end());
  int64_t exchanged = 0;
  for (int q = 0; q < schedule.fragments(); ++q) {
    if (schedule.LastExchange(q, total_steps) < total_steps) {
      exchange(q);
      end += exchange_s;
      ++exchanged;
    }
  }
  if (exchanged > 0) HOGWILD_RETURN_IF_ERROR(record(end, exchanged));
  return std::max(now, *std::max_element(clock.begin(), clock.end()));
}

}  // namespace hogwild
