// The asynchronous policy across processes: Hogwild! inside each process, a parameter server
// sharded over the ranks in MPI-3 windows between them (Downpour-style, Dean et al., NIPS 2012,
// with MPI one-sided communication in the place of the server processes).
//
// Inside the process the W local workers run Hogwild (sync/hogwild.h) on the rank's local copy
// of the parameters, with its contract (sync/parameter_store.h). Between processes:
// - The global parameters x ([P]) are sharded: rank q holds [P·q/R, P·(q+1)/R) in an MPI window
//   (MPI_Win_allocate), initialized with the initial parameters (the same on every rank).
// - Every `exchange_every` = k local updates (the local version crossing a multiple of k), the
//   worker whose update crossed it exchanges, while the other local workers keep training:
//     S     = a Hogwild read of the local copy
//     push: MPI_Accumulate(S - B, MPI_SUM) into every owner's shard, B the copy's value at the
//           last exchange (so each local update is pushed exactly once)
//     pull: G = MPI_Get_accumulate(MPI_NO_OP) of every shard
//     local copy += G - S (Hogwild updates, so local updates made meanwhile are kept); B = G.
//   All in one passive-target epoch opened at creation (MPI_Win_lock_all) and completed by
//   MPI_Win_flush_all after the push and after the pull. Where the one-sided operations are
//   messages the owner's MPI library must answer (Open MPI's osc/pt2pt, the default over TCP
//   between hosts, mpi/mpi_cluster.h), the owner answers only from inside an MPI call; so each
//   rank runs a progress thread that enters MPI (MPI_Iprobe) every millisecond while its
//   workers compute, and no rank waits for another rank's compute.
//   If an exchange is already running when another worker crosses a multiple, that one is
//   skipped (its updates go with the next push).
//
// The cross-process contract:
// - May be lost: nothing that reached a push. Accumulates to one element add up, whatever the
//   order (MPI_SUM in any order: float rounding differs, no update is dropped). What is lost
//   stays within the process: local Hogwild updates that collide in the local copy (its
//   contract), and those that land between S and the copy's += G - S for the same element.
// - Never happens: a torn global value. MPI_Accumulate and MPI_Get_accumulate with the same
//   basic datatype are element-wise atomic with respect to each other (MPI-3.1 §11.7.1), so
//   every pulled element is a sum of whole pushes.
// - No order between ranks: a pull sees another rank's push whole, partly (elements of other
//   shards may come later) or not yet.
// - Staleness has two parts. Local: as Hogwild (updates by the other local workers between a
//   worker's read and its update: StepStats::staleness, the log's staleness columns). Remote:
//   at each exchange, the pushes by other ranks that reached the global parameters since this
//   rank's previous pull (a job-wide push counter on rank 0, MPI_Fetch_and_op); with R ranks
//   pushing at the same rate it is about R-1, and each push carries k local updates.
//   StepStats::remote_staleness of the step that exchanged carries it to the convergence log
//   (remote_staleness_mean/max columns); MpiCluster::exchange_stats() gives its mean and max for
//   the summary.
// - At the end (Finish(), collective): every rank pushes what is left, all meet at MPI_Barrier,
//   and each pulls, so every rank ends with the same parameters: x = x0 + every pushed update.
//
// Checkpoints of the job (the trainer's StepBoundary drives them; docs/mpi.md):
// - The ranks decide together in rounds of a non-blocking bitwise OR (StartRound, TestRound,
//   WaitRound), polled at step boundaries without waiting: round k+1 starts only after every
//   rank saw round k complete, so every rank acts on the same rounds, in the same order, whatever
//   its speed. A rank whose workers have all finished keeps joining rounds until every rank has
//   finished (StepBoundary's busy bit).
// - When a round asks for a checkpoint, every rank parks its local workers at a step boundary
//   (the in-process StepBoundary) and calls CheckpointCut: it pushes its pending update (and
//   waits for it to reach the owners: MPI_Win_flush_all), all ranks meet at MPI_Barrier, and
//   each pulls the global parameters G and makes them its local copy and its base. So at the
//   cut x = x0 + every update of every rank, every rank holds exactly x, and no update is in
//   flight; rank 0 gathers every worker's momentum buffer (per worker) and data position. The
//   workers resume from x: the cut is also an exchange.
// - Resume (RestoreState on every rank, collective): every rank's local copy, base and own
//   shard become the checkpoint's parameters before any rank's first push (MPI_Barrier). Async
//   progress differs between runs, so the continuation is not bitwise that of an uninterrupted
//   run; the state it starts from is exact.
//
// What this policy does not take yet (trainer/trainer.cc refuses each by name across processes,
// in async mode; sync mode across processes takes all of them, mpi/mpi_tower_average.h):
// - other optimizers than SGD/momentum: per-worker state kept locally with only the parameter
//   deltas pushed is sound (each worker's Adam sees its own gradients, as in one process), but
//   the job's checkpoint cut (CheckpointCut) gathers no step counts (Adam's t) and the
//   trainer's resume hands each rank one buffer per worker (momentum's layout), so Adam would
//   not resume; enabling it needs the cut and the resume to carry NumStateSlots buffers and the
//   step count of every worker, and a multi-process test of both.
// - sgd.shared_optimizer_state: one state per process would be shared by its workers only,
//   not by the job: neither A3C's shared state nor per-worker state.
// - batch norm's moving statistics (cnn_bn): a push adds the rank's change of each statistic,
//   so R ranks move it by about R times the momentum per round (unstable once R·momentum > 1)
//   instead of averaging; the statistics would need their own averaging exchange.
// - ema_decay: the ranks' parameters differ between exchanges, so no EMA is the job's, and the
//   cut does not carry one.
// - clip_global_norm and weight_decay_biases=false act on each worker's own gradient and would
//   work through the local Hogwild, but have no multi-process test yet.
// - lr.scaling: the trainer's global batch counts one rank's workers (batch_size·W), not the
//   job's R·W.
//
// Thread-safety: as Hogwild for the steps. MPI is called by one thread at a time (a mutex: the
// exchanging worker or the progress thread), so the process needs MPI_THREAD_SERIALIZED;
// Finish() only after every local worker stopped.
#ifndef HOGWILD_MPI_SHARDED_HOGWILD_H_
#define HOGWILD_MPI_SHARDED_HOGWILD_H_

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "sync/hogwild.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class ShardedHogwild final : public UpdatePolicy {
 public:
  // Collective over `comm` (MPI_ERRORS_RETURN; must outlive the result): allocates the windows.
  // `store` holds the initial parameters, the same on every rank, and must outlive the result.
  // num_workers >= 1 local workers; exchange_every >= 1.
  // Errors: kInvalidArgument for exchange_every < 1; MPI errors (mpi/mpi_status.h).
  static absl::StatusOr<std::unique_ptr<ShardedHogwild>> Create(ParameterStore* store,
                                                                int num_workers, SgdOptions options,
                                                                int64_t exchange_every,
                                                                MPI_Comm comm);
  // After a successful Finish(): closes the epochs and frees the windows (collective: every
  // rank destroys its policy). Otherwise (a failed run, whose rank must end the job with
  // MpiCluster::Abort) it makes no MPI call, so it cannot wait for ranks that never come.
  ~ShardedHogwild() override;

  // W with momentum (each local worker's own buffer), else 0.
  int num_optimizer_buffers() const override;

  // The last exchange (see the top of this file). Collective; call after every local worker
  // stopped. Errors: MPI errors.
  absl::Status Finish();

  // The job's decision rounds (see the top of this file). StartRound(bits) starts the bitwise
  // OR of `bits` over all ranks and returns at once (kFailedPrecondition while one is pending);
  // TestRound() returns that OR once the round completed (then none is pending), nullopt while
  // it has not or when none is pending; WaitRound() waits for it (0 when none is pending).
  // Collective in order (every rank starts, and completes, the same rounds). Any thread, one at
  // a time with the others (they share the policy's MPI lock with the exchanges). Errors: MPI.
  absl::Status StartRound(uint32_t bits);
  absl::StatusOr<std::optional<uint32_t>> TestRound();
  absl::StatusOr<uint32_t> WaitRound();

  // What CheckpointCut gathers on rank 0 (empty vectors on the other ranks).
  struct Cut {
    std::vector<int64_t> next_step;            // [R·W] every worker's next step, rank-major
    std::vector<std::vector<float>> momentum;  // [R·W][P] with momentum, else empty
    int64_t global_step = 0;  // every rank: updates of the job (start + every rank's since)
  };
  // The consistent cut (see the top of this file). Collective; call while every local worker
  // is parked or finished. `next_step` [W]: this rank's workers' next steps. Errors: MPI.
  absl::StatusOr<Cut> CheckpointCut(const std::vector<int64_t>& next_step);

  // Exchanges so far, payload bytes moved between this rank and the others by its exchanges
  // (pushed plus pulled, own shard excluded), and the remote staleness of the exchanges (mean,
  // max). Thread-safe.
  int64_t exchanges() const { return exchanges_.load(std::memory_order_relaxed); }
  int64_t bytes_moved() const { return bytes_moved_.load(std::memory_order_relaxed); }
  double remote_staleness_mean() const;
  int64_t remote_staleness_max() const { return stale_max_.load(std::memory_order_relaxed); }

 private:
  ShardedHogwild(ParameterStore* store, int num_workers, SgdOptions options, int64_t exchange_every,
                 MPI_Comm comm);
  absl::Status OpenWindows();

  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  void DoCancel() override {
    local_.Cancel();
    stop_progress_.store(true, std::memory_order_release);  // joined by the destructor
  }
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  // The restored parameters become the local base and this rank's shard; collective (barrier).
  absl::Status DoRestoreParams() override;

  // Push S - B; returns the remote staleness. Caller holds exchange_mu_.
  absl::StatusOr<int64_t> Push();
  // pulled_ = G. Caller holds exchange_mu_.
  absl::Status Pull();
  // Push, pull, local copy += G - S, B = G; returns the remote staleness. Caller holds
  // exchange_mu_.
  absl::StatusOr<int64_t> Exchange();

  // The progress thread's loop; StopProgress() ends and joins it (idempotent).
  void Progress();
  void StopProgress();

  Hogwild local_;  // the in-process Hogwild on the same store
  const int64_t exchange_every_;
  const MPI_Comm comm_;
  int rank_ = 0;
  int num_ranks_ = 1;
  std::vector<int> counts_;   // [R] shard q's length
  std::vector<int> offsets_;  // [R] shard q's first element
  MPI_Win params_win_ = MPI_WIN_NULL;
  float* shard_ = nullptr;  // this rank's shard, window memory
  MPI_Win counter_win_ = MPI_WIN_NULL;
  int64_t* counter_ = nullptr;  // rank 0: pushes so far, window memory
  bool finished_ = false;       // Finish() succeeded: the destructor frees the windows
  uint64_t start_version_ = 0;  // the store's version at the start (restored or 0)

  std::mutex exchange_mu_;  // held by whoever calls MPI: an exchange, Finish, the progress thread
  std::atomic<bool> stop_progress_{false};
  std::thread progress_;
  std::atomic<uint64_t> next_exchange_at_;
  // Guarded by exchange_mu_:
  std::vector<float> base_;      // [P] B
  std::vector<float> snapshot_;  // [P] S
  std::vector<float> scratch_;   // [P] S - B, then S - G
  std::vector<float> pulled_;    // [P] G
  int64_t pushes_seen_ = 0;      // the push counter after this rank's last pull
  std::atomic<int64_t> exchanges_{0};
  std::atomic<int64_t> bytes_moved_{0};
  std::atomic<int64_t> stale_max_{0};
  std::atomic<int64_t> stale_total_{0};
  // The pending decision round (guarded by exchange_mu_).
  MPI_Request round_ = MPI_REQUEST_NULL;
  uint32_t round_mine_ = 0;
  uint32_t round_all_ = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_MPI_SHARDED_HOGWILD_H_
