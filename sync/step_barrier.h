// A reusable, cancellable barrier for the synchronous (tower-averaging) step.
//
// Unlike absl::Barrier (single use) and std::barrier (not cancellable), a StepBarrier is reused
// every step and Cancel() releases every waiter at once, so a worker that fails can never leave
// the others blocked: the no-hang guarantee of the trainer rests on it.
//
// Example:
//   StepBarrier barrier(num_workers);
//   // in each worker, every step:
//   HOGWILD_RETURN_IF_ERROR(barrier.ArriveAndWait());
//
// Memory ordering: everything a thread wrote before ArriveAndWait() happens-before everything
// any participant does after its ArriveAndWait() of the same generation returns (the mutex
// provides the edges).
//
// std::mutex rather than absl::Mutex: Debian's Abseil is a prebuilt, uninstrumented shared
// library, so ThreadSanitizer cannot see absl::Mutex's happens-before edges and would report
// false races; std::mutex goes through pthreads, which TSan intercepts.
#ifndef HOGWILD_SYNC_STEP_BARRIER_H_
#define HOGWILD_SYNC_STEP_BARRIER_H_

#include <cstdint>

#include <condition_variable>
#include <mutex>

#include "absl/status/status.h"

namespace hogwild {

class StepBarrier {
 public:
  // `parties` >= 1 threads must arrive at each generation.
  explicit StepBarrier(int parties);

  // Blocks until all parties have arrived at this generation, then returns OK; the barrier is
  // then ready for the next generation. Returns kCancelled, without waiting, once Cancel() has
  // been called (also for threads already waiting).
  // Thread-safety: called by exactly `parties` threads per generation.
  absl::Status ArriveAndWait();

  // Releases all current and future waiters with kCancelled. Idempotent; thread-safe.
  void Cancel();

  bool cancelled() const;

 private:
  const int parties_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  int arrived_ = 0;            // guarded by mu_
  uint64_t generation_ = 0;    // guarded by mu_
  bool cancelled_ = false;     // guarded by mu_
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_STEP_BARRIER_H_
