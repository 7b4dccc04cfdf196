// The periodic evaluation points of a run, the global steps every_steps, 2·every_steps, ...,
// and who takes each: the first worker whose update reaches it claims it, once.
//
//   EvalSchedule schedule(/*every_steps=*/12, /*start_step=*/policy.global_step());
//   // a worker, after its update, with the global step that update made:
//   if (std::optional<int64_t> point = schedule.Claim(global_step)) { ... snapshot, evaluate ... }
//
// Claim hands out the points in order, one per call, each exactly once over all callers; a
// caller whose step is past several unclaimed points gets the earliest, and the next call (its
// own or another worker's) the following one, so no point is skipped even when the global step
// outruns the claims (the rows of those points are then late, with their real step).
// A resumed run (start_step > 0) claims the same points as an uninterrupted one: the first is
// the first multiple of every_steps after start_step.
//
// Thread-safety: Claim from any threads, lock-free (one compare-and-swap of the next point;
// relaxed ordering: only the count is shared, the snapshot's visibility is the policy's and
// EvalRunner's business).
#ifndef HOGWILD_TRAINER_EVAL_SCHEDULE_H_
#define HOGWILD_TRAINER_EVAL_SCHEDULE_H_

#include <atomic>
#include <cstdint>
#include <optional>

namespace hogwild {

class EvalSchedule {
 public:
  // every_steps >= 1 (smaller is taken as 1); start_step >= 0: the global step training starts
  // from.
  EvalSchedule(int64_t every_steps, int64_t start_step);
  EvalSchedule(const EvalSchedule&) = delete;
  EvalSchedule& operator=(const EvalSchedule&) = delete;

  // The earliest unclaimed point if global_step has reached it (now claimed), else nullopt.
  std::optional<int64_t> Claim(int64_t global_step);

  int64_t every_steps() const { return every_steps_; }

 private:
  const int64_t every_steps_;
  std::atomic<int64_t> next_;  // the earliest unclaimed point
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_EVAL_SCHEDULE_H_
