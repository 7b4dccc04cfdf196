// What happens between two training steps: periodic checkpoints and orderly stops (SIGINT,
// SIGTERM, or any caller's stop request). Every worker calls AtBoundary() before each step.
//
// sync mode: worker 0 alone decides. When it reaches its boundary the closing barrier of the
//   last step has passed, so every parameter slice and the momentum buffer are final, and no
//   one can write them until worker 0 arrives at the next step's barrier: the state is exactly
//   the step-boundary state, and a run resumed from it is bitwise equal to an uninterrupted one.
//   On a stop, worker 0 writes the checkpoint, then releases its peers (blocked at the barrier
//   or computing) through `release_peers` (cancelling the policy and the pipeline).
// async mode: the first worker that finds a checkpoint or a stop due becomes the coordinator:
//   it asks the others to park at their next boundary, waits until every other worker is parked
//   or finished, snapshots, and lets them go (or tells them to stop). The snapshot is therefore
//   a consistent cut, not a racy copy: parameters, every worker's momentum and its next batch
//   are from one instant at which no update was in flight. Resuming it with one worker is
//   bitwise equal to the uninterrupted run; with several, the continuation interleaves
//   differently (as two async runs with the same seed do), so only the state is exact.
//
// sync mode across processes (Options::start_agreement set): worker 0 of every rank calls
//   AtBoundary before every step and the ranks decide together: at boundary k each rank starts
//   a round with its requests (a stop, a checkpoint due), and at boundary k+1 every rank acts on
//   that round's OR before starting the next. So every rank checkpoints or stops after the same
//   step, whoever saw the signal or the clock first, one step after the request (the round
//   overlaps the step instead of adding a rendezvous per step). Sync ranks hold the same
//   parameters and momentum after each step and every worker of the job is at the same step, so
//   the rank with Options::writes_checkpoints (rank 0) writes the whole job's checkpoint from
//   its own state; the others only take part in the decision.
// async mode across processes with checkpoints (Options::test_agreement set): the ranks' steps
//   do not line up, so the job decides in rounds that are polled (at most every
//   Options::poll_period), never awaited: every rank keeps one round pending (StartAgreement before
//   training), and at each boundary the worker that finds it complete acts on its OR, the same on
//   every rank: a checkpoint (it parks the other local workers as above, and the snapshot function
//   takes the job's collective cut: mpi/sharded_hogwild.h), a stop, or nothing; then it starts the
//   next round with this rank's requests and kBusyBit. After the workers returned,
//   FinishAgreement() keeps joining rounds without kBusyBit until a round shows every rank finished
//   (or a stop), so a rank that ran out of data still takes part in the checkpoints the others
//   decide. Every rank calls the snapshot function of every checkpoint; only the writer writes.
// The modes without checkpoints (core/mode.h SupportsCheckpoints; checkpoint_dir must be empty):
//   only orderly stops: the first worker that finds a stop requested returns true and releases
//   its peers through `release_peers`, whatever they wait on (the ssp bound, a barrier).
//
// Due: every `every_steps` global steps (sync: when the next step is a multiple; async: when the
// store's version has advanced that much since the last checkpoint) and/or every
// `every_seconds` seconds; a stop request always checkpoints first (when a directory is set).
//
// Thread-safety: AtBoundary(w)/Finished(w) from worker w's thread; Cancel() from any thread.
// Every wait in here is released by Cancel(), which the trainer calls on the first error.
#ifndef HOGWILD_TRAINER_CHECKPOINT_STEP_BOUNDARY_H_
#define HOGWILD_TRAINER_CHECKPOINT_STEP_BOUNDARY_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/data/input_pipeline.h"

namespace hogwild {

class StepBoundary {
 public:
  struct Options {
    Mode mode = Mode::kAsync;
    int num_workers = 1;
    std::string checkpoint_dir;  // "" = no checkpoints (stops still work)
    int64_t every_steps = 0;     // 0 = not by steps
    double every_seconds = 0.0;  // 0 = not by time
    const std::atomic<bool>* stop_requested = nullptr;  // may be null
    // The global step at the start (the resumed checkpoint's, or 0). A snapshot still at this
    // step (nothing trained yet: a stop during start-up, a resume with nothing left) is not
    // written, so it can never replace a checkpoint that holds training.
    int64_t start_global_step = 0;
    std::vector<int64_t> start_next_step;  // [W]: each worker's first step index
    // sync mode in a job of several processes (both set, or neither): start_agreement(requests)
    // starts the job's round with this rank's request bits (kStopBit, kDueBit);
    // finish_agreement() waits for the round started last and returns the OR of every rank's
    // bits (0 when none is pending). Collective: worker 0 calls them at every boundary (never
    // with mu_ held); an error fails worker 0's step. Null: one process.
    std::function<absl::Status(uint32_t requests)> start_agreement;
    std::function<absl::StatusOr<uint32_t>()> finish_agreement;
    // async mode in a job of several processes with checkpoints: test_agreement() returns the
    // OR of the round started last once it completed, nullopt while it has not (never waits);
    // start_agreement and finish_agreement as above. Any worker's thread calls them, one at a
    // time, with mu_ held (they must not call back into this object). Null: see above.
    std::function<absl::StatusOr<std::optional<uint32_t>>()> test_agreement;
    // With test_agreement: a rank polls at most this often (the boundaries in between make no
    // call), so a decision reaches it up to this much later. 0: at every boundary.
    std::chrono::microseconds poll_period{1000};
    // false on the ranks that take part in the job's checkpoints without writing them.
    bool writes_checkpoints = true;
  };
  static constexpr uint32_t kStopBit = 1;
  static constexpr uint32_t kDueBit = 2;
  static constexpr uint32_t kBusyBit = 4;  // async across processes: this rank still trains
  // Builds the checkpoint of the current (quiescent) state, global step included, given each
  // worker's next step index. An error (a device error reading the state back) fails the save
  // like a failed write: the previous checkpoint is kept.
  using SnapshotFn =
      std::function<absl::StatusOr<Checkpoint>(const std::vector<int64_t>& next_step)>;

  StepBoundary(Options options, SnapshotFn snapshot, std::function<void()> release_peers);

  // Worker `worker` is between steps: `next_step` is the index of its next batch, global_step
  // the store's version. Writes a checkpoint when one is due (see above). Returns true when the
  // worker must stop now (an orderly stop; its state is in the checkpoint).
  // Errors: a failed checkpoint write (the previous checkpoint is kept); kCancelled after
  // Cancel().
  absl::StatusOr<bool> AtBoundary(int worker, int64_t next_step, int64_t global_step);

  // Worker `worker` has no more data; `next_step` is one past its last step.
  void Finished(int worker, int64_t next_step);

  // async across processes (Options::test_agreement): starts the job's first round; every rank
  // calls it once, before its workers start. Collective. No-op otherwise.
  absl::Status StartAgreement();
  // async across processes: after every local worker returned and before WriteFinal(), joins
  // the job's rounds (and the checkpoints they decide) until every rank has finished or a stop
  // is decided. Collective. Errors: communication errors, a failed checkpoint. No-op otherwise.
  absl::Status FinishAgreement();

  // Releases every waiter with kCancelled. Idempotent, never blocks long.
  void Cancel();

  // True once an orderly stop has been decided.
  bool stopped() const;
  // Global step of the last checkpoint written by this run, or -1 (also when the only snapshot
  // was untrained and so not written).
  int64_t last_checkpoint_step() const;

  // After every worker has returned: writes the checkpoint of the final state unless an
  // orderly stop already wrote it, no directory is set or this rank does not write
  // (Options::writes_checkpoints).
  absl::Status WriteFinal();

 private:
  absl::StatusOr<bool> SyncBoundary(int64_t next_step, int64_t global_step);
  absl::StatusOr<bool> AsyncBoundary(int worker, int64_t next_step, int64_t global_step);
  // SyncBoundary across processes (Options::start_agreement). Requires mu_ (held on return).
  absl::StatusOr<bool> AgreedSyncBoundary(std::unique_lock<std::mutex>& lock, int64_t global_step);
  // AsyncBoundary across processes (Options::test_agreement). Requires mu_ (held on return).
  absl::StatusOr<bool> AgreedAsyncBoundary(std::unique_lock<std::mutex>& lock, int64_t global_step);
  absl::StatusOr<bool> StopOnlyBoundary();
  bool StopRequested() const;
  bool DueLocked(int64_t global_step) const;  // requires mu_
  // A checkpoint another rank writes: the schedule moves on as if written here. Requires mu_.
  void SkipWriteLocked(int64_t global_step);
  // Snapshots and writes with mu_ released (the state is quiescent by the callers' protocol).
  absl::Status WriteLocked(std::unique_lock<std::mutex>& lock);

  const Options options_;
  const SnapshotFn snapshot_;
  const std::function<void()> release_peers_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Everything below is guarded by mu_.
  std::vector<int64_t> next_step_;  // [W]
  int parked_ = 0;
  int finished_ = 0;
  bool pausing_ = false;
  bool cancelled_ = false;
  bool stopped_ = false;
  bool final_written_ = false;
  bool round_pending_ = false;  // async across processes: this rank's round is in flight
  std::chrono::steady_clock::time_point last_poll_;  // async across processes: the last poll
  int64_t last_checkpoint_step_ = -1;
  int64_t next_due_step_ = 0;  // async: global step of the next step-based checkpoint
  std::chrono::steady_clock::time_point last_checkpoint_time_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CHECKPOINT_STEP_BOUNDARY_H_
