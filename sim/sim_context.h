// What every simulated policy shares (sim/simulator.h): the workload and one worker's gradient
// state, the log and metrics, the parameters, the data plan and the compute-time sampler.
// Internal to sim/.
//
// Thread-safety: none (the simulation's one thread).
#ifndef HOGWILD_SIM_SIM_CONTEXT_H_
#define HOGWILD_SIM_SIM_CONTEXT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/compute_time.h"
#include "sim/sim_metrics.h"
#include "sim/simulator.h"
#include "sync/update_policy.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/weight_ema.h"
#include "trainer/workloads/workload.h"

namespace hogwild {

// One worker's batches of one epoch: (rows, the step's gradient denominator), as
// BatchPlan::EpochBatches.
using EpochBatches = std::vector<std::pair<std::vector<int64_t>, int64_t>>;

struct SimContext {
  const SimOptions* options = nullptr;
  const Workload* workload = nullptr;
  std::unique_ptr<WorkerGradient> gradient;  // every simulated worker's, one at a time
  std::unique_ptr<ConvergenceLog> log;       // null without a log path
  std::unique_ptr<SimMetrics> metrics;
  std::unique_ptr<BatchPlan> plan;
  std::unique_ptr<ComputeTimeSampler> sampler;
  // The policies' optimizer options: the run's, with the model's moving statistics and bias
  // exemptions (ModelSgdOptions, as Train()).
  SgdOptions sgd;
  std::unique_ptr<WeightEma> ema;  // null without TrainerOptions::ema_decay
  // async and ssp: the real policy, which holds the parameters while it runs (then `params` is
  // refreshed from it before each use); null in the other modes, whose parameters are `params`.
  UpdatePolicy* policy = nullptr;
  std::vector<float> params;      // [P]
  std::vector<float> ema_params;  // [P] with an EMA: scratch for its evaluation
  int64_t eval_every_steps = 0;
  int64_t next_eval = 0;
  std::vector<int64_t> worker_steps;  // [W] steps each worker's gradient was used in
  std::vector<int64_t> dropped;       // [W] backup: gradients dropped; else zeros
  int64_t max_clock_gap = 0;          // async and ssp: see SimResult::max_clock_gap

  const TrainerOptions& trainer() const { return options->trainer; }
  // The learning rate at the current global step (metrics->steps()).
  float LrNow() const;
  // Simulated seconds of one exchange of `fraction` of the P parameters (1, or a Streaming
  // DiLoCo fragment's 1/F): an all-reduce among the W workers, or (all_reduce false) one
  // worker's push and pull: SimOptions::allreduce_time_s x fraction, or with the bandwidth model
  // its latency plus the wire bytes over the bandwidth (see SimOptions).
  double ExchangeS(double fraction, bool all_reduce) const;
  // P, the workload's parameters.
  int64_t num_params() const { return workload->num_params(); }

  // The workload's gradient on the training rows `rows` at `at` ([P]), into `grad` ([P]),
  // scaled by 1 / denominator (0: a zero gradient, as an empty tower's); returns the loss sum. A
  // non-finite loss or gradient is the real worker's divergence error (kInvalidArgument
  // naming the global step).
  absl::StatusOr<double> Gradient(const std::vector<int64_t>& rows, int64_t denominator,
                                  const float* at, absl::Span<float> grad);

  // Evaluates `params` (and the EMA's) when the global step reached the next evaluation.
  absl::Status MaybeEvaluate(double time_s);
  // Evaluates `params` and, with an EMA, its average ([P] each) and writes the eval row.
  absl::Status Evaluate(double time_s);
  // Copies the policy's parameters into `params` (async, ssp); nothing without a policy.
  absl::Status ReadPolicyParams();
  // With an EMA: averages in the parameters as they are now, at global step metrics->steps() (the
  // real worker's ReadParams and global_step() after its FinishStep). Nothing without one.
  absl::Status UpdateEma();
};

// Each worker's own shard of every epoch, batch by batch (the policies where each worker walks
// its shard: async, ssp, locked, round_robin). Each epoch's permutation is computed once and
// dropped when every worker has taken its shard of it.
class ShardedBatches {
 public:
  explicit ShardedBatches(const SimContext* ctx);
  // Worker w's next batch (rows, the gradient's denominator), valid until w's next call; null
  // when w's data is used up.
  const std::pair<std::vector<int64_t>, int64_t>* Next(int w);

 private:
  struct Position {
    int64_t epoch = -1;  // the epoch of `batches`
    size_t next = 0;     // index in `batches` of the next batch
    EpochBatches batches;
  };
  const SimContext* ctx_;
  std::vector<Position> positions_;  // [W]
  // epoch -> (its permutation, workers that took their shard of it)
  std::map<int64_t, std::pair<std::vector<int64_t>, int>> permutations_;
};

// The sync-split batches of every worker for any epoch, computed on first use and kept until
// Release: the policies whose workers may be in different epochs (backup) or whose rounds
// cross epochs (local_sgd) read them by global step.
class SyncSplitBatches {
 public:
  explicit SyncSplitBatches(const SimContext* ctx) : ctx_(ctx) {}
  // Worker w's part of global step `step` (epoch = step / steps per epoch).
  const std::pair<std::vector<int64_t>, int64_t>& Part(int w, int64_t step);
  // Drops the epochs before `epoch`.
  void Release(int64_t epoch);

 private:
  const SimContext* ctx_;
  std::map<int64_t, std::vector<EpochBatches>> epochs_;  // epoch -> [W]
};

// The policies' event loops, each returning the simulated time of its last update.
absl::StatusOr<double> RunAsyncOrSsp(SimContext& ctx);
absl::StatusOr<double> RunSync(SimContext& ctx);
absl::StatusOr<double> RunBackup(SimContext& ctx);
absl::StatusOr<double> RunLocalSgd(SimContext& ctx);
// local_sgd with non-default TrainerOptions::streaming (RunLocalSgd calls it).
absl::StatusOr<double> RunStreamingLocalSgd(SimContext& ctx);
absl::StatusOr<double> RunLocked(SimContext& ctx);
absl::StatusOr<double> RunRoundRobin(SimContext& ctx);

}  // namespace hogwild

#endif  // HOGWILD_SIM_SIM_CONTEXT_H_
