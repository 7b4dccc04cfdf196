// A bounded blocking FIFO whose Cancel() releases every current AND future waiter.
//
// Why not tbb::concurrent_bounded_queue: its abort() wakes only the threads blocked at that
// instant. A thread that has checked "not cancelled" but not yet entered push()/pop() when
// abort() runs then blocks for ever — a lost wake-up that hung 3 of 10 runs of
// //tests:fault_injection_test (a worker in pop(), or a producer in push() that the pipeline's
// destructor then joins). Here the cancelled flag and the waits share one mutex, so no wake-up
// can be lost. std::mutex, so ThreadSanitizer sees the synchronization (sync/step_barrier.h).
//
// Thread-safety: every method is thread-safe. Items move in and out (no copies).
#ifndef HOGWILD_TRAINER_DATA_CANCELLABLE_QUEUE_H_
#define HOGWILD_TRAINER_DATA_CANCELLABLE_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace hogwild {

template <typename T>
class CancellableQueue {
 public:
  // capacity >= 1 items.
  explicit CancellableQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Blocks while the queue is full. Returns false (dropping `item`) once cancelled.
  bool Push(T item) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [this] { return cancelled_ || items_.size() < capacity_; });
    if (cancelled_) return false;
    items_.push_back(std::move(item));
    lock.unlock();
    not_empty_.notify_one();
    return true;
  }

  // Blocks while the queue is empty. Returns std::nullopt once cancelled.
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [this] { return cancelled_ || !items_.empty(); });
    if (cancelled_) return std::nullopt;
    std::optional<T> item(std::move(items_.front()));
    items_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return item;
  }

  // Releases every blocked Push()/Pop(); all later calls return at once. Idempotent.
  void Cancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;    // guarded by mu_
  bool cancelled_ = false; // guarded by mu_
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_CANCELLABLE_QUEUE_H_
