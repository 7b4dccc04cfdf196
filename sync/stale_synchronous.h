// The stale synchronous parallel policy (SSP): Ho et al., "More Effective Distributed ML via a
// Stale Synchronous Parallel Parameter Server", NIPS 2013 (Petuum Bösen's consistency model),
// on the lock-free updates of Hogwild!.
//
// Each worker's clock is the number of steps it has completed (FinishStep returned). Before a
// step, BeginStep(w) waits until clock(w) - min over the unfinished workers v of clock(v) <= s,
// the staleness bound: no worker starts a step more than s steps ahead of the slowest worker
// that still has data. s = 0 is bulk-synchronous (every worker starts step c only after every
// worker has applied step c - 1); a bound larger than the run never waits, which is async
// (Hogwild) exactly. A worker whose data is used up (WorkerDone) no longer holds the others
// back, so the unequal shards of the per-worker data plan (trainer/data/input_pipeline.h, as in
// async mode) cannot deadlock the end of a run.
//
// What a worker sees and what may be lost: everything of sync/hogwild.h. The updates are those
// of Hogwild (sync/hogwild.h, which this policy runs inside): applied lock-free to the shared
// store, per-worker momentum, each value read one that some worker wrote, concurrent updates of
// one element may overwrite each other. The SSP guarantee bounds clock gaps, not read
// staleness: a worker starting step c has seen every update of clocks < c - s that completed
// before its read (they completed before it was let through), and may also see any later ones,
// partially. StepStats::staleness counts the updates of others between its read and its update,
// as in async mode.
//
// Sparse gradients (UpdatePolicy::BeginSparseStep/FinishSparseStep): the same bound and clocks
// around Hogwild's sparse step (sync/hogwild.h: the live array, and for plain SGD the
// touched-coordinate update).
//
// Cancellation: Cancel() wakes every worker waiting on the bound with kCancelled (the no-hang
// guarantee of the trainer rests on it, as on the sync barrier's).
//
// Checkpoints: a worker waiting on the bound has taken its batch but touched nothing shared, and
// only another worker's step (or WorkerDone, or Cancel) can let it through, so the step boundary
// counts it as parked (num_blocked_workers(): the waiters whose bound still holds them). The
// state of a cut is Hogwild's (parameters, global step, per-worker optimizer state) plus the
// clocks, which equal the workers' next batch indices (each worker's own data plan) and are
// restored from them (PolicyState::worker_steps), so the bound holds across a resume as in an
// uninterrupted run.
//
// Thread-safety: worker w's calls come from one thread; different workers' calls run
// concurrently. clock() and min_clock() may be called from any thread. With one worker the
// result is exactly sequential minibatch SGD (bitwise that of async mode).
#ifndef HOGWILD_SYNC_STALE_SYNCHRONOUS_H_
#define HOGWILD_SYNC_STALE_SYNCHRONOUS_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sync/hogwild.h"
#include "sync/hogwild_inside.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class StaleSynchronous final : public HogwildInside {
 public:
  // `store` must outlive this object. num_workers >= 1, staleness_bound >= 0.
  StaleSynchronous(ParameterStore* store, int num_workers, SgdOptions options,
                   int64_t staleness_bound);

  int64_t staleness_bound() const { return bound_; }
  // Steps worker w has completed. Thread-safe.
  int64_t clock(int worker) const;
  // The smallest clock of the workers that still have data (WorkerDone not called), or the
  // largest clock when all are done. Thread-safe.
  int64_t min_clock() const;
  // Workers blocked in BeginStep on the bound right now (tests, diagnostics). Thread-safe.
  int num_waiting() const;
  // Whether worker w may start a step now: clock(w) - min_clock() <= staleness_bound(), the
  // one rule BeginStep waits on. Never blocks; thread-safe. A caller that must not block (the
  // simulator's event loop, which calls BeginStep from one thread) checks it first: BeginStep
  // then returns without waiting.
  bool MayBeginStep(int worker) const;
  // The waiting workers whose bound still holds them (not those already let through that have
  // not woken yet): see Checkpoints above. Thread-safe.
  int num_blocked_workers() const override;

 private:
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  absl::StatusOr<const float*> DoBeginSparseStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                               float lr) override;
  absl::Status DoWorkerDone(int worker) override;
  void DoCancel() override;
  void DoRestoreWorkerSteps(const std::vector<int64_t>& steps) override;

  // The ordering, once for both gradient kinds: WaitForBound blocks until the bound lets
  // `worker` start a step (kCancelled on Cancel()); AdvanceClock counts a step whose update
  // (Hogwild's FinishStep or FinishSparseStep) succeeded and wakes the waiters it may release.
  absl::Status WaitForBound(int worker);
  absl::StatusOr<StepStats> AdvanceClock(int worker, absl::StatusOr<StepStats> stats);

  int64_t MinClockLocked() const;             // requires mu_
  bool MayBeginStepLocked(int worker) const;  // requires mu_

  const int64_t bound_;

  // std::mutex, as sync/step_barrier.h explains (ThreadSanitizer sees its edges).
  mutable std::mutex mu_;
  std::condition_variable advanced_;
  // Guarded by mu_.
  std::vector<int64_t> clocks_;         // [W]
  std::vector<bool> done_;              // [W]
  std::vector<bool> waiting_on_bound_;  // [W] worker w is inside the wait in BeginStep
  int waiting_ = 0;
  bool cancelled_ = false;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_STALE_SYNCHRONOUS_H_
