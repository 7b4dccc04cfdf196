// Runs the periodic test-set evaluations of a training run, inline on the worker that reaches
// the evaluation point or on an evaluator thread of its own, so that time-to-accuracy does not pay
// for every evaluation in one worker's throughput.
//
//   EvalRunner runner(&evaluator, &metrics, /*background=*/true, /*max_queued=*/4);
//   // the worker that claimed an evaluation point (trainer/eval_schedule.h):
//   TrainingMetrics::PendingEval pending = metrics.BeginEval(step, lr);
//   ... copy the parameters (and the EMA's) into `params` (and `ema_params`) ...
//   HOGWILD_RETURN_IF_ERROR(runner.Submit(pending, std::move(params), std::move(ema_params)));
//   // the trainer, after every worker has returned:
//   absl::Status status = runner.Finish();
//
// The caller copies the parameters at the evaluation point (the snapshot: in sync mode the exact
// step-boundary state), so a background evaluation evaluates the same numbers an inline one
// would: the log's rows (their steps, counters and accuracies) are the same, bitwise. Only when
// the rows reach the log changes: TrainingMetrics holds back the rows recorded while evaluations
// are pending and writes them after their rows, so the order is unchanged too.
//
// Every evaluation point keeps its row, at its own instant: the snapshots queue, in order, and
// the evaluator thread evaluates them one after the other. Nothing is coalesced away. Bounded:
// at most `max_queued` snapshots wait beside the one being evaluated; a Submit that finds the
// queue full blocks until one leaves it (the caller has taken its snapshot and its row's
// counters already, so the row is still that instant's; training slows to the evaluator's pace
// only when evaluations are slower than their period for more than max_queued periods).
// wait_seconds() says how long callers waited so. Memory: up to max_queued + 1 snapshots, plus
// one per caller waiting in Submit.
//
// Inline (background = false): Submit evaluates on the calling thread; concurrent callers take
// turns (the Evaluator is one thread's at a time), and the wait counts in wait_seconds().
//
// Cancellation: Cancel() (idempotent, any thread; the trainer calls it with the workers' cancel)
// releases a waiting Submit()/WaitIdle() at once and makes the running evaluation return
// kCancelled within one chunk of the test set (Evaluator::Evaluate's cancel flag); its pending
// row, and those of the snapshots still queued, are then closed with that status (not evaluated),
// which writes the held rows. Finish() and the destructor join the thread.
//
// Errors: an evaluation's error or the log's (TrainingMetrics::FinishEval) is returned by the next
// WaitIdle()/Submit() (inline: by Submit itself) and by Finish(); kCancelled after Cancel().
// After an error the snapshots still queued are closed with it, not evaluated.
//
// Thread-safety: Submit and WaitIdle from any threads (the workers that claim evaluation points);
// Finish once they have stopped calling them (the trainer after joining the workers); Cancel
// from any thread. Every queue change happens under one std::mutex, whose release/acquire orders
// a snapshot's bytes before the evaluator thread reads them. The Evaluator is used by one thread
// at a time and by none after Finish(), so the trainer may use it again then.
#ifndef HOGWILD_TRAINER_METRICS_EVAL_RUNNER_H_
#define HOGWILD_TRAINER_METRICS_EVAL_RUNNER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/metrics/training_metrics.h"

namespace hogwild {

class EvalRunner {
 public:
  // evaluator and metrics must outlive the runner. background: evaluate on a thread of its own
  // (started here); otherwise on the caller of Submit. max_queued >= 1 (smaller is taken as 1):
  // the snapshots that may wait beside the one being evaluated (background only).
  EvalRunner(Evaluator* evaluator, TrainingMetrics* metrics, bool background, int max_queued = 1);
  EvalRunner(const EvalRunner&) = delete;
  EvalRunner& operator=(const EvalRunner&) = delete;
  // Cancels a running evaluation and joins the thread.
  ~EvalRunner();

  // Blocks until no evaluation is queued or running, or Cancel(); returns the first error so far
  // (see the file comment), kCancelled after Cancel(), else OK.
  absl::Status WaitIdle();

  // Evaluates `params` ([P] float32, host) and, if not empty, `ema_params` ([P], the weight
  // EMA's shadow), and closes `pending` with the results (TrainingMetrics::FinishEval).
  // Inline: on this thread once no other caller is evaluating, returning that status.
  // Background: queues them for the evaluator thread, waiting while max_queued snapshots are
  // queued, and returns the first error so far, or OK. After an error, Cancel() or Finish()
  // (kFailedPrecondition) it closes `pending` with that status itself, so no row stays held.
  absl::Status Submit(const TrainingMetrics::PendingEval& pending, std::vector<float> params,
                      std::vector<float> ema_params);

  // Seconds Submit callers spent waiting (for room in the queue, or inline for another caller's
  // evaluation), summed over callers. Thread-safe.
  double wait_seconds() const;

  // Waits for the queued evaluations and the one running (they run to their end unless
  // cancelled), stops the thread, and returns the first error (kCancelled after Cancel()), or OK.
  // Idempotent.
  absl::Status Finish();

  // See the file comment. Idempotent, thread-safe.
  void Cancel();

 private:
  struct Job {
    TrainingMetrics::PendingEval pending;
    std::vector<float> params;      // [P]
    std::vector<float> ema_params;  // [P] or empty
  };

  // Evaluates the job (its pending row's `started` moved to now, so eval_seconds counts the
  // evaluation itself) and closes its pending row; returns FinishEval's status.
  absl::Status Run(Job job);
  void Loop();  // the evaluator thread
  // Inline: keeps an evaluation's error as the first error; returns it.
  absl::Status RecordInline(const absl::Status& status);
  // The error to close a job with instead of evaluating it (first error, cancellation), or OK.
  absl::Status RefusalLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Evaluator* const evaluator_;
  TrainingMetrics* const metrics_;
  const bool background_;
  const size_t max_queued_;
  std::atomic<bool> cancelled_{false};  // read by Evaluator::Evaluate between chunks

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);  // submitted, not yet taken by the thread
  bool running_ ABSL_GUARDED_BY(mu_) = false;   // the thread is evaluating (or closing) a job
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  double wait_seconds_ ABSL_GUARDED_BY(mu_) = 0.0;
  std::mutex inline_mu_;  // inline: one caller evaluates at a time
  std::thread thread_;    // background only
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_EVAL_RUNNER_H_
