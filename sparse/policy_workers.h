// The worker loop of the sparse trainers (sparse linear models, sparse/sparse_train.h; matrix
// factorization, sparse/matrix_factorization.h): one epoch's W worker threads, each walking its
// batches of the epoch's order through the mode's update policy (sync/update_policy.h, created
// by CreateUpdatePolicy), one policy per mode for both workloads:
//
//   for each of worker w's steps (examples order[lo, hi)):
//     policy.SetStepExamples(w, hi - lo, step_examples);
//     params = policy.BeginSparseStep(w);
//     grad.Clear();  for q in [lo, hi): workload.AddExample(order[q], scale, params, grad);
//     policy.FinishSparseStep(w, grad, lr);
//   policy.WorkerDone(w);
//
// The data split (core/mode.h SplitsGlobalBatch):
// - async, locked, round_robin, ssp, async_local_sgd: worker w takes its contiguous shard
//   [N w / W, N (w + 1) / W) of the order in batches of batch_size (per worker; the shard's last
//   batch may be shorter), each batch's gradient scaled by 1 / its examples;
// - sync, backup: the order is cut into global batches of batch_size, worker w takes the
//   contiguous part [B w / W, B (w + 1) / W) of each (possibly empty), scaled by 1 / B: summed
//   over the workers, the gradient of the whole batch (the scaling of sync/update_policy.h);
// - local_sgd: sync's split (every worker the same number of local steps, sync/local_sgd.h),
//   each part's gradient the mean over its own examples (the local minibatch);
// - cyclades: no policy; rounds of batch_size examples of the order, each example's update
//   applied alone by the worker its conflict-free component went to (sparse/cyclades.h,
//   RunCycladesEpoch below);
// - buckwild: no policy; async's split with batch 1, each update the workload's fixed-point step
//   on an 8- or 16-bit copy of the model (sparse/buckwild.h, RunBuckwildEpoch below).
//
// Async with batch 1 is the Hogwild! paper's Algorithm 1 (Niu, Recht, Ré, Wright, NIPS 2011):
// the same walk, but each example's step is the workload's fused step on the live array
// (FusedStep, with the next examples prefetched), without a policy, a gradient buffer or a
// virtual call per example; it advances no version counter (one shared counter bumped per
// update would be the single contended cache line of a workload whose updates rarely meet).
// Locked with batch 1, the paper's locking baseline, runs the same fused step inside the Locked
// policy's lock (Locked::RunFusedStep), so that the baseline is not slowed by a gradient buffer
// the lock-free run does not pay for.
//
// The policy is created for each epoch over the caller's ParameterStore, so that each epoch
// ends with every worker joined and the policy's state (ssp's clocks, local_sgd's replicas,
// backup's open step) complete: the store then holds the epoch's result, a consistent cut for
// checkpoints in every mode. The optimizer is plain SGD (momentum 0) with the run's weight decay.
//
// Errors: a worker's error cancels the policy (releasing every worker waiting in it) and is
// returned once every worker has joined; no error ends the process or leaves a worker waiting.
#ifndef HOGWILD_SPARSE_POLICY_WORKERS_H_
#define HOGWILD_SPARSE_POLICY_WORKERS_H_

#include <algorithm>
#include <barrier>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "core/mode.h"
#include "core/status_macros.h"
#include "kernels/functors.h"
#include "sparse/buckwild.h"
#include "sparse/cyclades.h"
#include "sync/locked.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "sync/sparse_gradient.h"
#include "sync/update_policy.h"

namespace hogwild::sparse {

// How an epoch is run: the mode and its options, the workers, the batch and the weight decay.
struct SparseWorkerPlan {
  Mode mode = Mode::kAsync;
  int num_workers = 1;     // W >= 1
  int64_t batch_size = 1;  // >= 1; per worker or global (the split above)
  ModeOptions mode_options;
  float weight_decay = 0.0f;  // >= 0
  uint64_t seed = 1;          // the run's: buckwild's rounding draws (sparse/buckwild.h)
};

// The plan of a trainer's options (SparseTrainOptions, MfOptions: the fields of the same names).
template <typename Options>
SparseWorkerPlan PlanOf(const Options& options) {
  return SparseWorkerPlan{.mode = options.mode,
                          .num_workers = options.num_workers,
                          .batch_size = options.batch_size,
                          .mode_options = options.mode_options,
                          .weight_decay = options.weight_decay,
                          .seed = options.seed};
}

// What an epoch reports beside the parameters, summed over epochs into a run's totals.
struct SparseEpochStats {
  // The epoch policy's exchanges and bytes (UpdatePolicy::communication), its last outer step's
  // norm when it made one.
  CommunicationStats communication;
  CycladesStats cyclades;         // cyclades: the rounds' plans (sparse/cyclades.h)
  int64_t saturated_updates = 0;  // buckwild: coordinate updates clamped at the range
};

// Checks a sparse run's batch size against its N examples, W and mode: batch_size in [1, N];
// per worker (async, locked, round_robin, ssp) at most the largest shard ceil(N / W), which
// would otherwise be cut to the shard without a word; global in local_sgd at least W (each
// worker its own part of every batch); the round's sampled updates in cyclades, at least W; 1 in
// buckwild.
// `what` names the examples ("examples", "ratings").
// Errors: kInvalidArgument naming --batch_size, its value and the range. Pure.
absl::Status ValidateSparseBatch(Mode mode, int64_t batch_size, int64_t num_examples,
                                 int num_workers, const char* what);

// Checks the mode options (the dense trainer's ranges, trainer/trainer_options.h):
// staleness_bound in [0, kMaxStalenessBound], backup_workers in [0, W - 1], average_every in
// [1, kMaxAverageEvery], the outer optimizer's (CheckOuterOptimizer, named --outer_*),
// Streaming DiLoCo's (CheckStreamingOptions without the model's size, named --fragments, ...),
// buckwild's fixed-point format (ValidateFixedPointFormat), and that an option other than its
// default is one the mode reads.
// Errors: kInvalidArgument naming the flag, its value and the range or the mode that reads it.
// Pure.
absl::Status ValidateSparseModeOptions(Mode mode, const ModeOptions& options, int num_workers);

// The mode option a checkpoint's signature records ("staleness_bound=3" in ssp mode,
// "backup_workers=1" in backup, "average_every=8" in local_sgd, followed there by the outer
// optimizer's values when it is not plain averaging and Streaming DiLoCo's when they are not the
// defaults; "fixed_point_bits=8 fixed_point_range=8" in buckwild), so that a resume with another
// value is refused; "" in the modes without options. Pure.
std::string ModeOptionsLayer(Mode mode, const ModeOptions& options);

// Whether the plan takes the fused per-example path (async and locked with batch 1; cyclades,
// whose batch is the round's sampled updates, each applied alone; buckwild).
inline bool UsesFusedPath(const SparseWorkerPlan& plan) {
  return ((plan.mode == Mode::kAsync || plan.mode == Mode::kLocked) && plan.batch_size == 1) ||
         plan.mode == Mode::kCyclades || plan.mode == Mode::kBuckwild;
}

// The updates one epoch of N examples applies: the workers' batches (the split above; async's
// fused path, cyclades and buckwild: N), or one per global batch (sync, backup, local_sgd). Pure.
int64_t SparseEpochUpdates(const SparseWorkerPlan& plan, int64_t num_examples);

// The workers' gradients ([W], each [P]), or none for the fused path. Errors:
// kResourceExhausted when they cannot be allocated (5 P bytes each); kInvalidArgument for P
// outside [1, 2^31 - 1] (the gradient's coordinates are int32).
absl::StatusOr<std::vector<std::unique_ptr<SparseGradient>>> AllocateSparseGradients(
    const SparseWorkerPlan& plan, int64_t num_params);

namespace internal {

// Calls step(lo, hi, step_examples, scale) for each of worker w's steps over N examples of the
// order, in order (the split above); stops at and returns the first error.
template <typename Step>
absl::Status ForEachWorkerStep(const SparseWorkerPlan& plan, int64_t n, int w, Step&& step) {
  const int num_workers = plan.num_workers;
  const int64_t batch = plan.batch_size;
  if (!SplitsGlobalBatch(plan.mode)) {
    const int64_t end = n * (w + 1) / num_workers;
    for (int64_t k = n * w / num_workers; k < end; k += batch) {
      const int64_t stop = std::min(end, k + batch);
      HOGWILD_RETURN_IF_ERROR(step(k, stop, stop - k, 1.0f / static_cast<float>(stop - k)));
    }
    return absl::OkStatus();
  }
  const bool local = plan.mode == Mode::kLocalSgd;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t global = std::min(n, start + batch) - start;
    const int64_t lo = start + global * w / num_workers;
    const int64_t hi = start + global * (w + 1) / num_workers;
    const int64_t divisor = local ? std::max<int64_t>(1, hi - lo) : global;
    HOGWILD_RETURN_IF_ERROR(step(lo, hi, global, 1.0f / static_cast<float>(divisor)));
  }
  return absl::OkStatus();
}

// Runs body(w) for w in [0, W) on W threads and joins them. The first error cancels `policy`
// (when not null) and is returned (the kCancelled of the workers it released are not).
absl::Status RunWorkerThreads(int num_workers, UpdatePolicy* policy,
                              const std::function<absl::Status(int)>& body);

// One epoch of CYCLADES (sparse/cyclades.h): rounds of plan.batch_size examples of the order,
// each planned into conflict-free components dealt to the workers, each worker's share applied
// with the fused step on the live array, a barrier between rounds. Worker 0 plans round r + 1
// after its share of round r; the barrier orders every write of a round before the next round's
// reads, so the epoch equals sequential SGD over SerialOrder of its rounds, bitwise. `stats`,
// when given, gains every round's plan (written by the caller and worker 0 only; read it after
// the return).
template <typename Workload>
absl::Status RunCycladesEpoch(const SparseWorkerPlan& plan, const Workload& workload,
                              float* shared, absl::Span<const int64_t> order, float lr,
                              CycladesStats* stats = nullptr) {
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t batch = plan.batch_size;
  const int64_t num_rounds = (n + batch - 1) / batch;
  if (num_rounds == 0) return absl::OkStatus();
  CycladesPlanner planner(workload.num_coordinates(), plan.num_workers);
  auto plan_round = [&](int64_t r, CycladesRound& out) {
    const int64_t lo = r * batch;
    const int64_t size = std::min(n, lo + batch) - lo;
    planner.Plan(order.subspan(lo, size),
                 [&](int64_t id, auto&& f) { workload.ForEachCoordinate(id, f); }, out);
    if (stats != nullptr) stats->Add(out, size);
  };
  CycladesRound rounds[2];  // round r's plan in rounds[r % 2]: worker 0 writes the other
  plan_round(0, rounds[0]);
  std::barrier round_end(plan.num_workers);
  const SgdMomentumFn sgd{.lr = lr, .momentum = 0.0f, .weight_decay = plan.weight_decay};
  return RunWorkerThreads(plan.num_workers, nullptr, [&](int w) {
    Workload mine = workload;
    for (int64_t r = 0; r < num_rounds; ++r) {
      const std::vector<int64_t>& mine_now = rounds[r % 2].per_worker[w];
      const int64_t size = static_cast<int64_t>(mine_now.size());
      for (int64_t k = 0; k < size; ++k) {
        mine.Prefetch(mine_now.data(), k, size);
        mine.FusedStep(sgd, mine_now[k], shared);
      }
      if (w == 0 && r + 1 < num_rounds) plan_round(r + 1, rounds[(r + 1) % 2]);
      round_end.arrive_and_wait();
    }
    return absl::OkStatus();
  });
}

// One epoch of Buckwild! (sparse/buckwild.h) for a workload with a fixed-point step: the store
// converted to plan.mode_options' fixed-point format (a T per parameter, T int8_t or int16_t),
// async's data split with batch 1, each worker's updates by workload.FixedPointStep with its own
// StochasticRounder (seeded by the plan's seed and (epoch, worker), so a 1-worker run is
// deterministic), and the result converted back into the store after the join; `saturated`
// gains the coordinate updates clamped at the format's range. Errors:
// kResourceExhausted when the fixed-point copy ([P] T) cannot be allocated.
template <typename T, typename Workload>
absl::Status RunBuckwildEpoch(const SparseWorkerPlan& plan, const Workload& workload,
                              absl::Span<float> store, absl::Span<const int64_t> order, float lr,
                              int epoch, int64_t* saturated) {
  const FixedPointFormat format{.bits = plan.mode_options.fixed_point_bits,
                                .range = plan.mode_options.fixed_point_range};
  std::unique_ptr<T[]> fixed;
  try {
    fixed.reset(new T[store.size()]);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate the %d-bit model of %d parameters", format.bits,
                        static_cast<int64_t>(store.size())));
  }
  ToFixedPoint<T>(format, store, fixed.get());
  const int64_t n = static_cast<int64_t>(order.size());
  std::vector<int64_t> clamped(static_cast<size_t>(plan.num_workers), 0);  // one per worker
  HOGWILD_RETURN_IF_ERROR(RunWorkerThreads(plan.num_workers, nullptr, [&](int w) {
    Workload mine = workload;
    StochasticRounder rounder(plan.seed, (static_cast<uint64_t>(epoch) << 16) + w);
    int64_t mine_clamped = 0;
    const int64_t end = n * (w + 1) / plan.num_workers;
    for (int64_t k = n * w / plan.num_workers; k < end; ++k) {
      mine.Prefetch(order.data(), k, end);
      mine.FixedPointStep(format, lr, plan.weight_decay, order[k], fixed.get(), rounder,
                          mine_clamped);
    }
    clamped[static_cast<size_t>(w)] = mine_clamped;
    return absl::OkStatus();
  }));
  FromFixedPoint<T>(format, fixed.get(), store);
  for (int64_t c : clamped) *saturated += c;
  return absl::OkStatus();
}

// Whether the workload has Buckwild!'s fixed-point step (the sparse linear models).
template <typename Workload>
constexpr bool kHasFixedPointStep =
    requires(const Workload& w, int8_t* q, StochasticRounder& r, int64_t& saturated) {
      w.FixedPointStep(FixedPointFormat{}, 0.0f, 0.0f, int64_t{0}, q, r, saturated);
    };

// The policy of `plan` over `store`: CreateUpdatePolicy with plain SGD and the plan's weight
// decay and mode options.
absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateSparsePolicy(const SparseWorkerPlan& plan,
                                                                 ParameterStore* store);

// How a worker's walk steps: through the policy (kPolicy), or the fused step on the live array
// with no lock (kFusedAsync) or inside the Locked policy's lock (kFusedLocked).
enum class StepPath { kPolicy, kFusedAsync, kFusedLocked };

// Worker w's walk. `policy` is null for kFusedAsync and a Locked for kFusedLocked.
template <StepPath kPath, typename Workload>
absl::Status RunSparseWorker(const SparseWorkerPlan& plan, Workload& workload,
                             absl::Span<const int64_t> order, float lr, int w, UpdatePolicy* policy,
                             SparseGradient* grad, float* shared) {
  constexpr bool kFused = kPath != StepPath::kPolicy;
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t* ord = order.data();
  [[maybe_unused]] const SgdMomentumFn sgd{
      .lr = lr, .momentum = 0.0f, .weight_decay = plan.weight_decay};
  [[maybe_unused]] const int64_t shard_end = n * (w + 1) / plan.num_workers;
  HOGWILD_RETURN_IF_ERROR(ForEachWorkerStep(
      plan, n, w, [&](int64_t lo, int64_t hi, int64_t step_examples, float scale) {
        if constexpr (kPath == StepPath::kFusedAsync) {
          workload.Prefetch(ord, lo, shard_end);
          workload.FusedStep(sgd, ord[lo], shared);
          return absl::OkStatus();
        } else if constexpr (kPath == StepPath::kFusedLocked) {
          workload.Prefetch(ord, lo, shard_end);
          return static_cast<Locked*>(policy)->RunFusedStep(
              [&](float* live) { workload.FusedStep(sgd, ord[lo], live); });
        } else {
          HOGWILD_RETURN_IF_ERROR(policy->SetStepExamples(w, hi - lo, step_examples));
          HOGWILD_ASSIGN_OR_RETURN(const float* params, policy->BeginSparseStep(w));
          grad->Clear();
          for (int64_t q = lo; q < hi; ++q) workload.AddExample(ord[q], scale, params, *grad);
          return policy->FinishSparseStep(w, *grad, lr).status();
        }
      }));
  if constexpr (kFused) {
    return absl::OkStatus();
  } else {
    return policy->WorkerDone(w);
  }
}

}  // namespace internal

// Runs one epoch over `order` (a permutation of the N examples) with learning rate `lr` on
// `store` ([P], the workload's parameters), with `gradients` from AllocateSparseGradients.
//
// `Workload` is a copyable per-worker functor (each worker runs its own copy):
//   // Adds example i's gradient, scaled by `scale`, read from `params` ([P]; possibly the live
//   // array: read with cpu::SharedLoad only), to `grad`.
//   void AddExample(int64_t i, float scale, const float* params, SparseGradient& grad);
//   // Async batch 1: example i's step on the live array `shared` (the store's contract).
//   void FusedStep(const SgdMomentumFn& sgd, int64_t i, float* shared);
//   // Async batch 1: before the step of order[k], with k < end (the shard's end).
//   void Prefetch(const int64_t* order, int64_t k, int64_t end);
//   // cyclades: the coordinates example i's update reads and writes (sparse/cyclades.h), each
//   // c in [0, num_coordinates()) passed to f(c).
//   template <typename F> void ForEachCoordinate(int64_t i, F&& f) const;
//   int64_t num_coordinates() const;
//   // buckwild, where the workload has it (kHasFixedPointStep): example i's step on the shared
//   // fixed-point model `fixed` (T int8_t or int16_t; sparse/buckwild.h FixedPointSgdStep).
//   template <typename T> void FixedPointStep(const FixedPointFormat& format, float lr,
//       float weight_decay, int64_t i, T* fixed, StochasticRounder& rounder,
//       int64_t& saturated) const;
// `epoch` (0-based) seeds buckwild's rounding draws with the plan's seed. `stats`, when given,
// gains the epoch's (SparseEpochStats).
// The policy is made afresh for every epoch, so a run's totals are the sums over its epochs.
// Errors: the policy's (CreateUpdatePolicy's, a step's), after every worker has joined.
template <typename Workload>
absl::Status RunSparseEpoch(const SparseWorkerPlan& plan, const Workload& workload,
                            ParameterStore& store, absl::Span<const int64_t> order, float lr,
                            int epoch, absl::Span<const std::unique_ptr<SparseGradient>> gradients,
                            SparseEpochStats* stats = nullptr) {
  using internal::StepPath;
  float* shared = store.unsafe_values().data();
  SparseEpochStats ignored;
  SparseEpochStats& out = stats != nullptr ? *stats : ignored;
  if (plan.mode == Mode::kCyclades) {
    return internal::RunCycladesEpoch(plan, workload, shared, order, lr, &out.cyclades);
  }
  if (plan.mode == Mode::kBuckwild) {
    if constexpr (internal::kHasFixedPointStep<Workload>) {
      return plan.mode_options.fixed_point_bits == 8
                 ? internal::RunBuckwildEpoch<int8_t>(plan, workload, store.unsafe_values(),
                                                      order, lr, epoch, &out.saturated_updates)
                 : internal::RunBuckwildEpoch<int16_t>(plan, workload, store.unsafe_values(),
                                                       order, lr, epoch, &out.saturated_updates);
    } else {
      return absl::InternalError(
          "buckwild mode reached a workload without a fixed-point step although the "
          "capabilities table (core/capabilities.h) refuses it");
    }
  }
  if (UsesFusedPath(plan) && plan.mode == Mode::kAsync) {
    return internal::RunWorkerThreads(plan.num_workers, nullptr, [&](int w) {
      Workload mine = workload;
      return internal::RunSparseWorker<StepPath::kFusedAsync>(plan, mine, order, lr, w, nullptr,
                                                              nullptr, shared);
    });
  }
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<UpdatePolicy> policy,
                           internal::CreateSparsePolicy(plan, &store));
  if (UsesFusedPath(plan)) {  // locked: CreateUpdatePolicy made a Locked
    return internal::RunWorkerThreads(plan.num_workers, policy.get(), [&](int w) {
      Workload mine = workload;
      return internal::RunSparseWorker<StepPath::kFusedLocked>(plan, mine, order, lr, w,
                                                               policy.get(), nullptr, shared);
    });
  }
  HOGWILD_RETURN_IF_ERROR(internal::RunWorkerThreads(plan.num_workers, policy.get(), [&](int w) {
    Workload mine = workload;
    return internal::RunSparseWorker<StepPath::kPolicy>(plan, mine, order, lr, w, policy.get(),
                                                        gradients[w].get(), shared);
  }));
  const CommunicationStats made = policy->communication();
  out.communication.exchanges += made.exchanges;
  out.communication.bytes_sent += made.bytes_sent;
  out.communication.bytes_per_worker += made.bytes_per_worker;
  if (made.last_outer_step_norm) out.communication.last_outer_step_norm = made.last_outer_step_norm;
  return absl::OkStatus();
}

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_POLICY_WORKERS_H_
