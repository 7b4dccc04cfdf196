// The processes of one training job, as Train() sees them: the seam between the trainer and the
// engine that joins processes (MPI: mpi/mpi_cluster.h). The trainer has no MPI dependency; a
// program that is started by mpirun passes a Cluster in TrainerOptions::cluster, and a program
// that is not passes none (nullptr: one process, exactly the single-process trainer).
//
// A job of R ranks, each with W local workers, is one run of R·W workers: rank r's local worker
// w is the job's worker r·W + w for the data plan (trainer/data/input_pipeline.h), so every
// rank reads its own distinct shard of each epoch and the global batch of sync mode is split
// over ranks × workers exactly as over R·W workers of one process.
//
// Thread-safety: rank() and num_ranks() from any thread. The other calls are collective (every
// rank makes them, in the same order) and come from the thread that runs Train(), while no
// worker of this rank is inside the policy; the policies it creates do their own communication
// from the worker threads (see their headers).
#ifndef HOGWILD_TRAINER_CLUSTER_H_
#define HOGWILD_TRAINER_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/types/span.h"
#include "core/mode.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

// What this rank's communication did so far (the summary and benchmarks/).
struct ExchangeStats {
  int64_t exchanges = 0;  // sync: all-reduces (one per step); async: push/pull exchanges
  // Payload bytes between this rank and the others caused by its calls: sync, what it sends
  // (reduce-scatter and all-gather); async, what it pushes plus what it pulls.
  int64_t bytes_moved = 0;
  // async: pushes by other ranks that reached the global parameters between two pulls of this
  // rank (counted at this rank's push); 0 in sync.
  double remote_staleness_mean = 0.0;
  int64_t remote_staleness_max = 0;
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  // This process's rank in [0, num_ranks()), and R >= 1.
  virtual int rank() const = 0;
  virtual int num_ranks() const = 0;

  // The ranks of the job on this process's host (>= 1) and this rank's index among them, in
  // [0, num_local_ranks()): how a rank picks its GPUs (trainer/rank_gpus.h).
  virtual int local_rank() const = 0;
  virtual int num_local_ranks() const = 0;

  // Copies rank 0's `bytes` into every rank's (the NCCL unique id of a sync job on GPUs:
  // sync/process_group.h). Collective, with spans of the same size on every rank; from the
  // thread that runs Train(). Errors: communication errors.
  virtual absl::Status BroadcastFromRankZero(absl::Span<char> bytes) = 0;

  // The update policy of this rank's `local_workers` CPU workers over `store` (which holds the
  // initial parameters, the same on every rank, and must outlive the policy), for `mode`:
  // async and sync (see the implementation's headers for the cross-process contracts). GPU
  // workers get theirs from the GPU runtime with a ProcessGroup built on this cluster (sync
  // only: NcclTowerAverage); the calls below work with either policy.
  // `exchange_every` (>= 1): async only, the local steps between two push/pull exchanges.
  // Collective. Errors: kInvalidArgument for another mode; communication errors.
  virtual absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(
      Mode mode, ParameterStore* store, int local_workers, SgdOptions sgd,
      int64_t exchange_every) = 0;

  // After this rank's workers stopped without error: the policy's last exchange, so that every
  // rank ends with the same parameters (async: push what is left, wait for every rank's last
  // push, pull). `policy` is one CreateUpdatePolicy returned. Collective.
  virtual absl::Status FinishTraining(UpdatePolicy& policy) = 0;

  // This rank's communication so far. Thread-safe.
  virtual ExchangeStats exchange_stats() const = 0;

  // The sum of `value` over all ranks (examples trained, for the summary). Collective.
  virtual absl::StatusOr<int64_t> SumOverRanks(int64_t value) = 0;

  // The job's decision at sync step boundaries (trainer/checkpoint/step_boundary.h: stop,
  // checkpoint due), in rounds that overlap the next step's compute and exchange instead of
  // adding a rendezvous per step: StartOrOverRanks(bits) starts the bitwise OR of `bits` over
  // all ranks and returns at once; FinishOrOverRanks() waits for the round started last and
  // returns its OR, the same on every rank (0 when no round is pending). Collective, in the
  // same order on every rank; called from worker 0's thread while training (between two steps
  // of the sync policy, which makes its calls from that thread too). A round still pending
  // when training ends is completed by FinishTraining.
  virtual absl::Status StartOrOverRanks(uint32_t bits) = 0;
  virtual absl::StatusOr<uint32_t> FinishOrOverRanks() = 0;

  // async jobs with checkpoints use the same rounds, polled instead of awaited (the ranks' steps
  // do not line up): TestOrOverRanks() returns the OR of the round started last once it has
  // completed (then none is pending), nullopt while it has not or when none is pending; it never
  // waits. In async mode the three round calls come from any worker's thread (one at a time) or
  // from the thread that runs Train() after the workers stopped.
  virtual absl::StatusOr<std::optional<uint32_t>> TestOrOverRanks() = 0;

  // An async job's consistent cut for a checkpoint (mpi/sharded_hogwild.h): every rank's pending
  // update reaches the global parameters, every rank's local copy becomes them, and rank 0
  // learns every worker's data position and momentum. Collective; called while every local
  // worker is parked or finished. `policy` is one CreateUpdatePolicy returned for async;
  // `next_step` [W]: this rank's workers' next steps. Errors: kInvalidArgument for a sync
  // policy; communication errors.
  struct JobCut {
    std::vector<int64_t> next_step;            // rank 0: [R·W], rank-major; else empty
    std::vector<std::vector<float>> momentum;  // rank 0 with momentum: [R·W][P]; else empty
    int64_t global_step = 0;                   // every rank: the job's updates so far
  };
  virtual absl::StatusOr<JobCut> CheckpointCut(UpdatePolicy& policy,
                                               const std::vector<int64_t>& next_step) = 0;

  // Every rank passes the outcome of its own checks (a refused flag, an unusable checkpoint);
  // returns OK on every rank when every rank's was OK, else on every rank the error of the
  // lowest failing rank (its code and message), marked with MarkJobWide. Collective. Errors:
  // communication errors (not marked).
  virtual absl::Status AgreeOnStatus(const absl::Status& mine) = 0;
};

// The payload that marks an error every rank of the job returned together (AgreeOnStatus): the
// program may let one rank report it and end every rank normally (MPI_Finalize, exit status 1)
// instead of aborting the job, since no peer is left waiting in a collective.
inline constexpr char kJobWideErrorUrl[] = "hogwild/job-wide-error";

// `status` marked as job-wide. OK stays OK.
inline absl::Status MarkJobWide(absl::Status status) {
  if (!status.ok()) status.SetPayload(kJobWideErrorUrl, absl::Cord("1"));
  return status;
}

// Whether `status` came from AgreeOnStatus (every rank has it).
inline bool IsJobWide(const absl::Status& status) {
  return status.GetPayload(kJobWideErrorUrl).has_value();
}

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLUSTER_H_
