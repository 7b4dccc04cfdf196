#include "trainer/worker_group.h"

#include <chrono>
#include <utility>

namespace hogwild {

WorkerGroup::WorkerGroup(std::function<void()> cancel_all) : cancel_all_(std::move(cancel_all)) {}

WorkerGroup::~WorkerGroup() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerGroup::Start(int num_workers, std::function<absl::Status(int worker)> run) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ += num_workers;
  }
  for (int w = 0; w < num_workers; ++w) {
    threads_.emplace_back([this, run, w] {
      Report(run(w));
      std::lock_guard<std::mutex> lock(mu_);
      // Notify under the lock: Wait() may return and the group be destroyed right after the
      // count reaches 0, and the condition variable must outlive this call.
      if (--running_ == 0) done_.notify_all();
    });
  }
}

void WorkerGroup::Wait(absl::Duration period, const std::function<void()>& tick) {
  const auto wait_period = absl::ToChronoMilliseconds(period);
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_.wait_for(lock, wait_period, [this] { return running_ == 0; })) {
    if (!tick) continue;
    lock.unlock();
    tick();
    lock.lock();
  }
  lock.unlock();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

absl::Status WorkerGroup::first_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_.ok() ? fallback_ : first_;
}

void WorkerGroup::Report(absl::Status status) {
  if (status.ok()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status.code() != absl::StatusCode::kCancelled) {
      if (first_.ok()) first_ = status;
    } else if (fallback_.ok()) {
      fallback_ = status;
    }
  }
  cancel_all_();
}

}  // namespace hogwild
