// The MPI side of a job of several processes: MPI's start and end, and the Cluster
// (trainer/cluster.h) that Train() uses to create the cross-process policies.
//
//   absl::StatusOr<std::unique_ptr<MpiCluster>> cluster = MpiCluster::InitIfLaunched(&argc, &argv);
//   if (!cluster.ok()) ...                  // MPI_Init_thread failed
//   options.cluster = cluster->get();        // nullptr when not started by mpirun
//
// A plain start (no mpirun: none of the launchers' environment variables below) calls no MPI
// function at all, so it behaves exactly as the single-process trainer. Only the standard's
// calls are used (MPI-3: one-sided windows, MPI_Get_accumulate), so the code builds with Open
// MPI or MPICH, whichever Debian's mpi alternative names.
//
// Errors inside the job: the communicator and windows return errors (MPI_ERRORS_RETURN), which
// become statuses naming the call, file:line and rank (mpi/mpi_status.h). A rank whose run fails
// must call Abort(): its peers may be blocked in a collective or a window epoch that would never
// complete, and MPI_Abort ends every rank of the job (mpirun reports the rank and exit code).
#ifndef HOGWILD_MPI_MPI_CLUSTER_H_
#define HOGWILD_MPI_MPI_CLUSTER_H_

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/cluster.h"

namespace hogwild {

class MpiCluster final : public Cluster {
 public:
  // True when this process was started by an MPI launcher: Open MPI's mpirun
  // (OMPI_COMM_WORLD_SIZE), MPICH's Hydra (PMI_SIZE) or a PMIx launcher such as srun
  // (PMIX_RANK). Reads the environment only.
  static bool LaunchedByMpi();

  // True when this process should print the errors it finds before MPI starts (Abseil's
  // flag-parse errors, the command line's own checks): a plain start; rank 0 (by the launcher's
  // OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK, read as LaunchedByMpi() reads its variables);
  // a rank whose rank variable is missing or unreadable; or a rank started with another command
  // line than rank 0's (Open MPI's MPMD form `mpirun -np 1 a : -np 1 b`, OMPI_MCA_orte_app_num
  // != 0), whose errors rank 0 may not share. Every rank of one command line finds the same
  // errors, so the other ranks stay silent and end with the same status: the error is printed
  // once, not once per rank. Reads the environment only; thread-safe as getenv(3).
  static bool SpeaksBeforeInit();

  // nullptr when !LaunchedByMpi(); otherwise calls MPI_Init_thread (asking for
  // MPI_THREAD_SERIALIZED: worker threads make the calls, one at a time) and returns the
  // cluster of MPI_COMM_WORLD. Before it, sets OMPI_MCA_osc=sm,pt2pt in the environment unless
  // it is set: Open MPI 4.1's default one-sided components fail between hosts over TCP
  // (mpi/mpi_cluster.cc). Call once, from main, before any other thread starts.
  // Errors: kInternal when MPI_Init_thread fails; kFailedPrecondition when the library offers
  // less than MPI_THREAD_SERIALIZED.
  static absl::StatusOr<std::unique_ptr<MpiCluster>> InitIfLaunched(int* argc, char*** argv);

  // MPI_Finalize (after a successful run on every rank).
  ~MpiCluster() override;

  int rank() const override { return rank_; }
  int num_ranks() const override { return num_ranks_; }
  // From MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) at start-up: the ranks that share this
  // rank's host, in world-rank order (portable: not a launcher's environment variable).
  int local_rank() const override { return local_rank_; }
  int num_local_ranks() const override { return num_local_ranks_; }
  // MPI_Bcast of MPI_BYTEs from rank 0 on MPI_COMM_WORLD.
  absl::Status BroadcastFromRankZero(absl::Span<char> bytes) override;

  // async: ShardedHogwild (mpi/sharded_hogwild.h); sync: MpiTowerAverage
  // (mpi/mpi_tower_average.h).
  absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateUpdatePolicy(Mode mode, ParameterStore* store,
                                                                   int local_workers,
                                                                   SgdOptions sgd,
                                                                   int64_t exchange_every) override;
  absl::Status FinishTraining(UpdatePolicy& policy) override;
  ExchangeStats exchange_stats() const override;
  absl::StatusOr<int64_t> SumOverRanks(int64_t value) override;
  absl::Status StartOrOverRanks(uint32_t bits) override;
  absl::StatusOr<uint32_t> FinishOrOverRanks() override;
  absl::StatusOr<std::optional<uint32_t>> TestOrOverRanks() override;
  absl::StatusOr<JobCut> CheckpointCut(UpdatePolicy& policy,
                                       const std::vector<int64_t>& next_step) override;
  absl::Status AgreeOnStatus(const absl::Status& mine) override;

  // Collective: checks that every rank was given the same command line `args` (the flags, in
  // order). Errors: kInvalidArgument on every rank, naming the first rank whose argument differs
  // from rank 0's, and both arguments.
  absl::Status CheckSameArguments(const std::vector<std::string>& args);

  // The largest `value` over all ranks (e.g. the signal that stopped the job, 0 on a rank that
  // received none). Collective.
  absl::StatusOr<int> MaxOverRanks(int value);

  // Ends every rank of the job (MPI_Abort on MPI_COMM_WORLD) with exit code `code`. Never
  // returns.
  [[noreturn]] void Abort(int code);

 private:
  MpiCluster(int rank, int num_ranks, int local_rank, int num_local_ranks)
      : rank_(rank),
        num_ranks_(num_ranks),
        local_rank_(local_rank),
        num_local_ranks_(num_local_ranks) {}

  const int rank_;
  const int num_ranks_;
  const int local_rank_;
  const int num_local_ranks_;
  // The policy this cluster created (Train() owns it and keeps it alive until the end of the
  // run; its stats are read through these).
  class MpiTowerAverage* sync_policy_ = nullptr;
  class ShardedHogwild* async_policy_ = nullptr;
  // The pending round of StartOrOverRanks (MPI_REQUEST_NULL: none) and its buffers.
  MPI_Request or_request_ = MPI_REQUEST_NULL;
  uint32_t or_mine_ = 0;
  uint32_t or_all_ = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_MPI_MPI_CLUSTER_H_
