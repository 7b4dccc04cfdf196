#include "sync/step_barrier.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/logging.h"

namespace hogwild {
namespace {

// Tells the core that this is a spin-wait (frees pipeline resources for the sibling
// hyper-thread and avoids the memory-order mis-speculation penalty on exit).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

StepBarrier::StepBarrier(int parties, int spin_iterations)
    : parties_(parties), spin_iterations_(spin_iterations) {
  HOGWILD_CHECK(parties >= 1, "StepBarrier: parties must be >= 1");
  HOGWILD_CHECK(spin_iterations >= 0, "StepBarrier: spin_iterations must be >= 0");
}

absl::Status StepBarrier::ArriveAndWait() {
  if (cancelled_.load(std::memory_order_acquire)) {
    return absl::CancelledError("step barrier cancelled");
  }
  // Read before arriving: the generation cannot advance until this thread has arrived.
  const uint64_t my_generation = generation_.load(std::memory_order_acquire);
  // acq_rel: the arrivals form one release sequence, so the last arrival acquires every
  // participant's writes and its generation bump below releases them to all waiters.
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    // Reset before opening: a released thread may arrive at the next generation at once.
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    // seq_cst with the sleepers' increment (Dekker): either this load sees a sleeper, or that
    // sleeper's predicate check sees the new generation and does not sleep.
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      // Taking the mutex orders the notify after any sleeper's predicate check.
      { std::lock_guard<std::mutex> lock(mu_); }
      released_.notify_all();
    }
    return absl::OkStatus();
  }
  for (int i = 0; i < spin_iterations_; ++i) {
    if (generation_.load(std::memory_order_acquire) != my_generation) return absl::OkStatus();
    if (cancelled_.load(std::memory_order_relaxed)) break;
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(mu_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  released_.wait(lock, [&] {
    return generation_.load(std::memory_order_seq_cst) != my_generation ||
           cancelled_.load(std::memory_order_seq_cst);
  });
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  if (generation_.load(std::memory_order_acquire) != my_generation) return absl::OkStatus();
  return absl::CancelledError("step barrier cancelled");
}

void StepBarrier::Cancel() {
  cancelled_.store(true, std::memory_order_seq_cst);
  // Like the opening arrival: the mutex orders this notify after any sleeper's check.
  { std::lock_guard<std::mutex> lock(mu_); }
  released_.notify_all();
}

bool StepBarrier::cancelled() const { return cancelled_.load(std::memory_order_acquire); }

}  // namespace hogwild
