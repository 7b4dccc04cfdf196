// What every simulated policy shares (sim/simulator.h): the model on one CPU backend, one
// tower, the evaluator, the log and metrics, the parameters, the batch gather buffers, the
// data plan and the compute-time sampler. Internal to sim/.
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
#include "kernels/cpu/cpu_backend.h"
#include "sim/compute_time.h"
#include "sim/sim_metrics.h"
#include "sim/simulator.h"
#include "trainer/data/dataset.h"
#include "trainer/data/input_pipeline.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {

// One worker's batches of one epoch: (rows, the step's gradient denominator), as
// BatchPlan::EpochBatches.
using EpochBatches = std::vector<std::pair<std::vector<int64_t>, int64_t>>;

struct SimContext {
  const SimOptions* options = nullptr;
  const Dataset* train = nullptr;
  std::unique_ptr<Model> model;
  std::unique_ptr<CpuBackend> backend;
  std::unique_ptr<Tower> tower;
  std::unique_ptr<Evaluator> evaluator;  // null without a test set
  std::unique_ptr<ConvergenceLog> log;   // null without a log path
  std::unique_ptr<SimMetrics> metrics;
  std::unique_ptr<BatchPlan> plan;
  std::unique_ptr<ComputeTimeSampler> sampler;
  std::vector<float> params;    // [P]
  std::vector<float> features;  // [B, D]
  std::vector<int32_t> labels;  // [B]
  int64_t eval_every_steps = 0;
  int64_t next_eval = 0;
  std::vector<int64_t> worker_steps;  // [W] steps each worker's gradient was used in
  std::vector<int64_t> dropped;       // [W] backup: gradients dropped; else zeros
  int64_t max_clock_gap = 0;          // async and ssp: see SimResult::max_clock_gap

  const TrainerOptions& trainer() const { return options->trainer; }
  // The learning rate at the current global step (metrics->steps()).
  float LrNow() const;

  // Forward and backward on the dataset rows `rows` at `at` ([P]), into `grad` ([P]), scaled
  // by 1 / denominator (0: a zero gradient, as an empty tower's); returns the loss sum. A
  // non-finite loss or gradient is the real worker's divergence error (kInvalidArgument
  // naming the global step).
  absl::StatusOr<double> Gradient(const std::vector<int64_t>& rows, int64_t denominator,
                                  const float* at, absl::Span<float> grad);

  // Evaluates `params` when the global step reached the next evaluation.
  absl::Status MaybeEvaluate(double time_s);
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
absl::StatusOr<double> RunLocked(SimContext& ctx);
absl::StatusOr<double> RunRoundRobin(SimContext& ctx);

}  // namespace hogwild

#endif  // HOGWILD_SIM_SIM_CONTEXT_H_
