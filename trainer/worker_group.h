// The threads of a training run: one per worker, started together, joined together, and
// stopped together on the first error.
//
//   WorkerGroup group([&] { policy->Cancel(); pipeline.Cancel(); boundary.Cancel(); });
//   group.Start(num_workers, [&](int w) { return RunWorker(w, context); });
//   group.Wait(absl::Seconds(2), [&] { report progress });
//   absl::Status status = group.first_error();
//
// The first error that is not kCancelled is the cause and is kept; a kCancelled returned by a
// worker that someone else's failure released is not (it is kept only when nothing else
// failed, e.g. every worker was cancelled from outside). Every error calls `cancel_all` (once
// per error; it must be idempotent), which must release every wait a worker can be in, so that
// no worker stays blocked at a barrier or on its queue after another failed.
//
// Thread-safety: Start, Wait and first_error from the owning thread; the workers report from
// theirs. The destructor joins any thread still running (after Wait it has nothing to do).
#ifndef HOGWILD_TRAINER_WORKER_GROUP_H_
#define HOGWILD_TRAINER_WORKER_GROUP_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace hogwild {

class WorkerGroup {
 public:
  explicit WorkerGroup(std::function<void()> cancel_all);
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;
  ~WorkerGroup();

  // Starts `num_workers` (>= 1) threads; thread w runs run(w) and reports its status.
  void Start(int num_workers, std::function<absl::Status(int worker)> run);

  // Blocks until every worker has returned, calling `tick` (may be null) every `period` (> 0)
  // meanwhile, on this thread; then joins the threads.
  void Wait(absl::Duration period, const std::function<void()>& tick);

  // The first error (see the file comment), or OK.
  absl::Status first_error() const;

 private:
  void Report(absl::Status status);

  const std::function<void()> cancel_all_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  int running_ = 0;        // guarded by mu_
  absl::Status first_;     // guarded by mu_: the first error that is not kCancelled
  absl::Status fallback_;  // guarded by mu_: the first kCancelled
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WORKER_GROUP_H_
