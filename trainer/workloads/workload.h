// The Workload seam: what is trained, apart from how updates meet (sync/update_policy.h) and
// where the workers run (threads, the simulator, processes). A workload owns its data, its
// parameter layout and initialization, a worker's gradient for its batch, evaluation, and the
// part of a checkpoint's signature that identifies it. The engine's step, on any substrate:
//
//   params = policy.BeginStep(w)                                 // [P]
//   loss   = worker_state->Gradient(params, {rows, denominator}, grad)
//   stats  = policy.FinishStep(w, grad, lr)
//
// with the rows dealt out by BatchPlan over Workload::num_train_examples() (the seeded order
// and shards of trainer/data/input_pipeline.h), so every workload is trained with the same data
// order, policies and log under every substrate.
//
// Implementations: DenseWorkload (the networks of trainer/model/, dense_workload.h),
// SparseLinearWorkload (logistic regression and the linear SVM of sparse/, sparse_linear.h),
// MfWorkload (matrix factorization, mf_workload.h).
//
// Gradient scaling is the policies' contract (sync/update_policy.h): the gradient is that of the
// loss *sum* over the worker's rows divided by `denominator`, the examples of the step's batch.
//
// Thread-safety: a Workload is immutable after construction and may be shared by every worker;
// each worker uses its own WorkerGradient (scratch buffers).
#ifndef HOGWILD_TRAINER_WORKLOADS_WORKLOAD_H_
#define HOGWILD_TRAINER_WORKLOADS_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/capabilities.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/metrics/evaluator.h"

namespace hogwild {

// One worker's part of a step: rows of the training set, in [0, num_train_examples()), and the
// divisor of the step's gradient (>= rows.size(); 0 only with no rows: a zero gradient).
struct WorkerBatch {
  absl::Span<const int64_t> rows;
  int64_t denominator = 0;
};

// [begin, end) ranges of parameters, sorted and disjoint.
using ParamRanges = std::vector<std::pair<int64_t, int64_t>>;

// One worker's gradient computation and its scratch memory. Not thread-safe: one per worker.
class WorkerGradient {
 public:
  virtual ~WorkerGradient() = default;

  // grad ([P] float32, host memory, fully overwritten) = d(sum over batch.rows of the loss at
  // `params` ([P] float32))/d(params) / batch.denominator, the loss including the workload's
  // own regularizer where it has one (SparseLinearWorkload, MfWorkload: weight decay on each
  // example's support); returns the loss sum over the rows (unscaled, regularizer excluded), so
  // that gradients add over examples and towers. `params` is
  // only read (plain loads: the caller's policy gives each worker a stable view).
  // Errors: kInvalidArgument when a span is not [P] or batch.rows.size() exceeds the max_batch
  // the worker was created for; backend errors (DenseWorkload).
  virtual absl::StatusOr<double> Gradient(absl::Span<const float> params, WorkerBatch batch,
                                          absl::Span<float> grad) = 0;
};

// The argument check of WorkerGradient::Gradient: OK when params and grad are [num_params] and
// the batch has at most max_batch rows; else kInvalidArgument naming `workload` and the sizes.
// Pure.
absl::Status CheckGradientArgs(absl::string_view workload, int64_t num_params, int64_t max_batch,
                               absl::Span<const float> params, const WorkerBatch& batch,
                               absl::Span<float> grad);

class Workload {
 public:
  virtual ~Workload() = default;

  // The capabilities table's row (core/capabilities.h): which policies and substrates run it.
  virtual WorkloadKind kind() const = 0;
  // The name in logs and checkpoints: the model's ("mlp", "cnn_bn"), "sparse_logreg",
  // "sparse_svm" or "mf".
  virtual std::string name() const = 0;
  // P, the number of float32 parameters.
  virtual int64_t num_params() const = 0;
  // N, the training examples (images, sparse rows, ratings) BatchPlan deals out.
  virtual int64_t num_train_examples() const = 0;
  // Whether Evaluate(kTest) has data.
  virtual bool has_test_set() const = 0;

  // The initial parameters for `seed` into `params` ([P]): a pure function of the seed.
  virtual void InitParams(uint64_t seed, absl::Span<float> params) const = 0;

  // A worker's gradient state for batches of up to max_batch rows (>= 1). Errors: allocation.
  virtual absl::StatusOr<std::unique_ptr<WorkerGradient>> CreateWorker(int64_t max_batch) const = 0;

  enum class Split { kTrain, kTest };
  // The mean loss and accuracy of `params` ([P]) on a split. What "loss" means is the
  // workload's: the mean cross-entropy (dense), the mean logistic or hinge loss (sparse), the
  // RMSE (matrix factorization, whose accuracy is 0). Thread-safe with respect to other
  // workload calls (it allocates its own scratch). Errors: kFailedPrecondition for kTest
  // without a test set; backend errors.
  virtual absl::StatusOr<EvalResult> Evaluate(absl::Span<const float> params,
                                              Split split) const = 0;

  // Parameters exempt from weight decay (biases) and those that are moving statistics (batch
  // norm), for SgdOptions::no_decay and SgdOptions::moving_stats; empty for the linear and
  // factorization workloads.
  virtual ParamRanges BiasRanges() const { return {}; }
  virtual ParamRanges StatRanges() const { return {}; }

  // What identifies the workload in a checkpoint: model_name, input_shape, num_classes, layers,
  // num_params, train_examples and dataset (the run's fields, mode to num_ranks, are the
  // caller's). Reads the whole training set for the fingerprint.
  virtual CheckpointSignature Signature() const = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WORKLOADS_WORKLOAD_H_
