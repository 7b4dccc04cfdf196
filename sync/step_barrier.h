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
// any participant does after its ArriveAndWait() of the same generation returns (the arrival
// counter's acquire-release sequence and the generation counter provide the edges).
//
// Waiting spins first, then blocks: a waiter polls the generation for `spin_iterations` pause
// instructions (about 20-100 us on current x86 cores) before it sleeps on a condition
// variable. The synchronous step meets at the barrier twice per step, and a futex sleep and
// wake-up cost tens of microseconds each on a virtual machine, a large fraction of a step
// of the MLP at 32 examples per tower; the towers of one step finish within a few
// microseconds of each other when each has its own core, so the spin usually wins. When the
// cores are oversubscribed the spin gives up quickly and the thread blocks.
//
// std::mutex rather than absl::Mutex: Debian's Abseil is a prebuilt, uninstrumented shared
// library, so ThreadSanitizer cannot see absl::Mutex's happens-before edges and would report
// false races; std::mutex goes through pthreads, which TSan intercepts.
#ifndef HOGWILD_SYNC_STEP_BARRIER_H_
#define HOGWILD_SYNC_STEP_BARRIER_H_

#include <atomic>
#include <cstdint>

#include <condition_variable>
#include <mutex>

#include "absl/status/status.h"

namespace hogwild {

class StepBarrier {
 public:
  // `parties` >= 1 threads must arrive at each generation. spin_iterations >= 0 (0: block at
  // once).
  explicit StepBarrier(int parties, int spin_iterations = kDefaultSpinIterations);

  static constexpr int kDefaultSpinIterations = 2000;

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
  const int spin_iterations_;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> cancelled_{false};
  std::atomic<int> sleepers_{0};  // threads blocked (or about to block) on released_
  // Only for sleeping: every state change above is atomic; a change that must wake a sleeper
  // takes mu_ before notifying so the wake-up cannot fall between a check and the sleep.
  std::mutex mu_;
  std::condition_variable released_;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_STEP_BARRIER_H_
