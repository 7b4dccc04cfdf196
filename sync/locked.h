// The locked policy: the baseline that Hogwild! removes (Niu et al., "Hogwild!: A Lock-Free
// Approach to Parallelizing Stochastic Gradient Descent", NIPS 2011, section 5: "a locking
// scheme" where each worker holds one lock over the whole step). Async's data split (each
// worker walks its own shard, trainer/data/input_pipeline.h), but every step of every worker
// (BeginStep's read, the gradient the caller computes, FinishStep's update) holds one lock
// shared by all workers, so the updates are serial and each is computed on the parameters all
// earlier updates left: StepStats::staleness is always 0 and the run is sequential minibatch SGD
// in the order the workers took the lock (which the scheduler picks, so with W > 1 it is not
// reproducible run to run; with one worker it is bitwise async's, and sequential SGD).
//
// The updates are Hogwild's (sync/hogwild.h, which this policy runs inside): every optimizer,
// per-worker or shared optimizer state (SgdOptions::shared_optimizer_state: under the lock
// nothing of a shared state is ever lost), clipping of each worker's gradient, moving
// statistics and the weight-decay exemptions.
//
// The lock: BeginStep(w) waits until no worker holds it and takes it; FinishStep(w) applies the
// update and releases it (also when the update fails). Waiters are woken in no particular
// order (a std::condition_variable, not a FIFO). A worker that fails between BeginStep and
// FinishStep leaves the lock held: the caller must Cancel() the policy on any worker's error
// (trainer/worker_group.h does), which releases every waiter with kCancelled and makes every
// later BeginStep return kCancelled, so nobody waits for the failed worker.
//
// Sparse gradients (UpdatePolicy::BeginSparseStep/FinishSparseStep) take the same lock over the
// same span, BeginSparseStep to FinishSparseStep, around Hogwild's sparse step: the live array
// (which nobody else updates while the lock is held) and, for plain SGD, the touched-coordinate
// update (sync/hogwild.h).
//
// Memory ordering: taking and releasing the lock are a std::mutex's acquire and release, so the
// holder sees every earlier holder's update completely (the parameters are still accessed
// through the store's relaxed atomics, which other readers, ReadParams, use without the lock).
//
// Thread-safety: worker w's calls come from one thread; different workers' calls may run
// concurrently and block each other. ReadParams waits until no step is in progress (or the
// policy is cancelled), so it returns the parameters between two updates; do not call it from
// a worker between its BeginStep and FinishStep.
#ifndef HOGWILD_SYNC_LOCKED_H_
#define HOGWILD_SYNC_LOCKED_H_

#include <condition_variable>
#include <mutex>

#include "absl/functional/function_ref.h"
#include "sync/hogwild_inside.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class Locked final : public HogwildInside {
 public:
  // `store` must outlive this object. num_workers >= 1.
  Locked(ParameterStore* store, int num_workers, SgdOptions options);

  // Workers blocked in BeginStep waiting for the lock right now (tests, diagnostics).
  // Thread-safe.
  int num_waiting() const;

  // One fused step of plain SGD under the lock: waits until no worker holds the lock (or the
  // policy is cancelled), then runs step(shared) with `shared` the store's live array ([P]
  // float32, host memory; access it through the store's element contract, kernels/cpu/
  // shared_element.h) and the lock held, and releases it. For the sparse workloads' batch-1 step
  // (sparse/policy_workers.h), whose read, gradient and update are one inlined pass: the
  // same exclusion as BeginSparseStep to FinishSparseStep (one std::mutex acquisition instead
  // of a lock record taken and released), without Hogwild's step record (no optimizer state,
  // no version advanced, as async's fused path). `step` must not throw or call this policy.
  // Errors: kCancelled after Cancel(). Thread-safety: as BeginStep.
  template <typename Step>
  absl::Status RunFusedStep(Step&& step) {
    std::unique_lock<std::mutex> lock(mu_);
    // A worker inside a BeginStep/FinishStep pair holds the lock record; wait for its release.
    if (holder_ >= 0 && !cancelled_) {
      ++waiting_;
      released_.wait(lock, [&] { return holder_ < 0 || cancelled_; });
      --waiting_;
    }
    if (cancelled_) return absl::CancelledError("training was cancelled");
    step(store()->unsafe_values().data());
    return absl::OkStatus();
  }

 private:
  absl::Status DoReadParams(absl::Span<float> out) const override;
  // Errors: also kFailedPrecondition when `worker` holds the lock already (a BeginStep without
  // its FinishStep), and, for the Finish calls, when it does not hold it.
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<const float*> DoBeginSparseStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  void DoCancel() override;

  // The ordering, once for both gradient kinds: TakeLock waits for the lock and takes it (the
  // start of `call`, BeginStep or BeginSparseStep); UpdateAndRelease (`call`, the FinishStep or
  // FinishSparseStep that ends a step begun by `begin_call`) runs `update`, Hogwild's update of
  // the same kind, and releases the lock, also when the update fails.
  absl::Status TakeLock(int worker, const char* call);
  absl::StatusOr<StepStats> UpdateAndRelease(int worker, const char* call, const char* begin_call,
                                             absl::FunctionRef<absl::StatusOr<StepStats>()> update);

  // std::mutex, as sync/step_barrier.h explains (ThreadSanitizer sees its edges).
  mutable std::mutex mu_;
  mutable std::condition_variable released_;
  // Guarded by mu_.
  int holder_ = -1;  // the worker inside a step, -1 when none
  int waiting_ = 0;
  bool cancelled_ = false;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_LOCKED_H_
