// Runs the periodic test-set evaluations of a training run, inline on the calling worker or on
// an evaluator thread of its own, so that time-to-accuracy does not pay for every evaluation in
// one worker's throughput.
//
//   EvalRunner runner(&evaluator, &metrics, /*background=*/true);
//   // worker 0, at an evaluation point:
//   HOGWILD_RETURN_IF_ERROR(runner.WaitIdle());         // the previous one has finished
//   TrainingMetrics::PendingEval pending = metrics.BeginEval(step, lr);
//   ... copy the parameters (and the EMA's) into `params` (and `ema_params`) ...
//   HOGWILD_RETURN_IF_ERROR(runner.Submit(pending, std::move(params), std::move(ema_params)));
//   // the trainer, after every worker has returned:
//   absl::Status status = runner.Finish();
//
// The caller copies the parameters at the evaluation point (the snapshot: in sync mode the exact
// step-boundary state, as before), so a background evaluation evaluates the same numbers an
// inline one would: the log's rows (their steps, counters and accuracies) are the same, bitwise.
// Only when the rows reach the log changes: TrainingMetrics holds back the rows recorded while an
// evaluation is in flight and writes them after its row, so the order is unchanged too.
//
// Bounded: at most one evaluation is in flight. A request that comes while one is running waits
// for it (WaitIdle), rather than being coalesced, so every evaluation point gets its row; with
// evaluations further apart than one evaluation takes (the defaults: one per epoch) worker 0
// never waits. The snapshot costs worker 0 one copy of the parameters (and of the EMA's).
//
// Cancellation: Cancel() (idempotent, any thread; the trainer calls it with the workers' cancel)
// releases a WaitIdle() at once and makes the running evaluation return kCancelled within one
// chunk of the test set (Evaluator::Evaluate's cancel flag); its pending row is then closed with
// that status, which writes the held rows. Finish() and the destructor join the thread.
//
// Errors: an evaluation's error or the log's (TrainingMetrics::FinishEval) is returned by the next
// WaitIdle()/Submit() (inline: by Submit itself) and by Finish(); kCancelled after Cancel().
//
// Thread-safety: WaitIdle, Submit and Finish from one thread at a time (worker 0 while training,
// then the trainer after joining the workers); Cancel from any thread. The Evaluator is used by
// the evaluator thread only between Submit and the end of that evaluation, so the trainer may use
// it again after Finish().
#ifndef HOGWILD_TRAINER_METRICS_EVAL_RUNNER_H_
#define HOGWILD_TRAINER_METRICS_EVAL_RUNNER_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
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
  // (started here); otherwise on the caller of Submit.
  EvalRunner(Evaluator* evaluator, TrainingMetrics* metrics, bool background);
  EvalRunner(const EvalRunner&) = delete;
  EvalRunner& operator=(const EvalRunner&) = delete;
  // Cancels a running evaluation and joins the thread.
  ~EvalRunner();

  // Blocks until no evaluation is in flight or Cancel(); returns the first error so far (see
  // the file comment), kCancelled after Cancel(), else OK.
  absl::Status WaitIdle();

  // Evaluates `params` ([P] float32, host) and, if not empty, `ema_params` ([P], the weight
  // EMA's shadow), and closes `pending` with the results (TrainingMetrics::FinishEval). Inline:
  // on this thread, returning that status. Background: hands them to the evaluator thread
  // after waiting as WaitIdle() does and returns at once (the first error so far, or OK); after
  // an error, Cancel() or Finish() (kFailedPrecondition) it closes `pending` with that status
  // itself, so no row stays held.
  absl::Status Submit(const TrainingMetrics::PendingEval& pending, std::vector<float> params,
                      std::vector<float> ema_params);

  // Waits for the evaluation in flight (it runs to its end unless cancelled), stops the thread,
  // and returns the first error (kCancelled after Cancel()), or OK. Idempotent.
  absl::Status Finish();

  // See the file comment. Idempotent, thread-safe.
  void Cancel();

 private:
  struct Job {
    TrainingMetrics::PendingEval pending;
    std::vector<float> params;      // [P]
    std::vector<float> ema_params;  // [P] or empty
  };

  // Evaluates the job and closes its pending row; returns FinishEval's status.
  absl::Status Run(const Job& job);
  void Loop();  // the evaluator thread
  absl::Status WaitIdleLocked(std::unique_lock<std::mutex>& lock)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Evaluator* const evaluator_;
  TrainingMetrics* const metrics_;
  const bool background_;
  std::atomic<bool> cancelled_{false};  // read by Evaluator::Evaluate between chunks

  std::mutex mu_;
  std::condition_variable changed_;
  std::optional<Job> job_ ABSL_GUARDED_BY(mu_);  // submitted, not yet taken by the thread
  bool busy_ ABSL_GUARDED_BY(mu_) = false;       // a job submitted and not yet finished
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // background only
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_EVAL_RUNNER_H_
