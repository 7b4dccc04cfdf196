#include "mpi/mpi_cluster.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/capabilities.h"
#include "core/status_macros.h"
#include "mpi/mpi_status.h"
#include "mpi/mpi_tower_average.h"
#include "mpi/sharded_hogwild.h"

namespace hogwild {

bool MpiCluster::LaunchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

bool MpiCluster::SpeaksBeforeInit() {
  if (!LaunchedByMpi()) return true;
  // Another app context of an MPMD start has its own command line, so its own errors.
  if (const char* app = std::getenv("OMPI_MCA_orte_app_num"); app != nullptr) {
    int app_num = 0;
    if (!absl::SimpleAtoi(app, &app_num) || app_num != 0) return true;
  }
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      int rank = 0;
      return !absl::SimpleAtoi(value, &rank) || rank == 0;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<MpiCluster>> MpiCluster::InitIfLaunched(int* argc, char*** argv) {
  if (!LaunchedByMpi()) return nullptr;
  // Open MPI 4.1 picks its one-sided component by priority: rdma or ucx where they load, which
  // without an RDMA network or the UCX PML fail MPI_Win_allocate between hosts over TCP
  // (MPI_ERR_WIN; measured between two network namespaces, see open-mpi/ompi#13128 for the
  // same family). sm (one host) and pt2pt (point-to-point messages: any network) always work,
  // so they are the default here; a cluster with RDMA sets OMPI_MCA_osc itself (e.g. ucx) and
  // is not overridden. MPICH ignores the variable.
  setenv("OMPI_MCA_osc", "sm,pt2pt", /*overwrite=*/0);
  int provided = MPI_THREAD_SINGLE;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rank = 0;
  int size = 1;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Comm_size(MPI_COMM_WORLD, &size));
  // The ranks of this host (a shared-memory domain), for the GPU mapping (trainer/rank_gpus.h).
  MPI_Comm host = MPI_COMM_NULL;
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
  int local_rank = 0;
  int local_size = 1;
  const int rank_rc = MPI_Comm_rank(host, &local_rank);
  const int size_rc = MPI_Comm_size(host, &local_size);
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Comm_free(&host));
  HOGWILD_MPI_RETURN_IF_ERROR(rank_rc);
  HOGWILD_MPI_RETURN_IF_ERROR(size_rc);
  // Constructed before the check below, so that MPI_Finalize runs when it fails.
  std::unique_ptr<MpiCluster> cluster(new MpiCluster(rank, size, local_rank, local_size));
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "rank %d: the MPI library provides thread level %d, below MPI_THREAD_SERIALIZED (%d), "
        "which the worker threads need",
        rank, provided, MPI_THREAD_SERIALIZED));
  }
  return cluster;
}

absl::Status MpiCluster::BroadcastFromRankZero(absl::Span<char> bytes) {
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD));
  return absl::OkStatus();
}

MpiCluster::~MpiCluster() { MPI_Finalize(); }

void MpiCluster::Abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; in case an implementation does
}

absl::StatusOr<std::unique_ptr<UpdatePolicy>> MpiCluster::CreateUpdatePolicy(
    Mode mode, ParameterStore* store, int local_workers, SgdOptions sgd, int64_t exchange_every) {
  sync_policy_ = nullptr;
  async_policy_ = nullptr;
  switch (mode) {
    case Mode::kSync: {
      auto policy = std::make_unique<MpiTowerAverage>(store, local_workers, sgd, MPI_COMM_WORLD);
      sync_policy_ = policy.get();
      return std::unique_ptr<UpdatePolicy>(std::move(policy));
    }
    case Mode::kAsync: {
      HOGWILD_ASSIGN_OR_RETURN(
          std::unique_ptr<ShardedHogwild> policy,
          ShardedHogwild::Create(store, local_workers, sgd, exchange_every, MPI_COMM_WORLD));
      async_policy_ = policy.get();
      return std::unique_ptr<UpdatePolicy>(std::move(policy));
    }
    default:
      HOGWILD_RETURN_IF_ERROR(CheckSupported(WorkloadKind::kDense, mode, Substrate::kProcesses));
      return absl::InternalError(absl::StrFormat(
          "mode %s runs across processes by the capabilities table (core/capabilities.h), but "
          "MpiCluster::CreateUpdatePolicy has no policy for it",
          ModeName(mode)));
  }
}

absl::Status MpiCluster::FinishTraining(UpdatePolicy& policy) {
  // The step boundaries' last round (started before the end of the data was seen).
  HOGWILD_RETURN_IF_ERROR(FinishOrOverRanks().status());
  if (&policy == async_policy_) return async_policy_->Finish();
  return absl::OkStatus();  // sync: every rank applied the same updates already
}

ExchangeStats MpiCluster::exchange_stats() const {
  ExchangeStats stats;
  if (sync_policy_ != nullptr) {
    stats.exchanges = sync_policy_->exchanges();
    stats.bytes_moved = sync_policy_->bytes_moved();
  } else if (async_policy_ != nullptr) {
    stats.exchanges = async_policy_->exchanges();
    stats.bytes_moved = async_policy_->bytes_moved();
    stats.remote_staleness_mean = async_policy_->remote_staleness_mean();
    stats.remote_staleness_max = async_policy_->remote_staleness_max();
  }
  return stats;
}

absl::StatusOr<int64_t> MpiCluster::SumOverRanks(int64_t value) {
  int64_t sum = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Allreduce(&value, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return sum;
}

absl::StatusOr<int> MpiCluster::MaxOverRanks(int value) {
  int max = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Allreduce(&value, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return max;
}

absl::Status MpiCluster::StartOrOverRanks(uint32_t bits) {
  // async: the policy's rounds, under its MPI lock (its exchanges call MPI from other threads).
  if (async_policy_ != nullptr) {
    HOGWILD_RETURN_IF_ERROR(async_policy_->WaitRound().status());
    return async_policy_->StartRound(bits);
  }
  HOGWILD_RETURN_IF_ERROR(FinishOrOverRanks().status());  // one round at a time
  or_mine_ = bits;
  or_all_ = 0;
  // Non-blocking: it completes inside the step's own collectives (MpiTowerAverage), so the
  // decision costs no rendezvous of its own. With GPU workers (NcclTowerAverage: NCCL, no MPI
  // during steps) it completes in FinishOrOverRanks' MPI_Wait, which every rank reaches between
  // the same two all-reduces, so the MPI and NCCL collectives cannot wait on each other.
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Iallreduce(&or_mine_, &or_all_, 1, MPI_UINT32_T, MPI_BOR, MPI_COMM_WORLD, &or_request_));
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> MpiCluster::FinishOrOverRanks() {
  if (async_policy_ != nullptr) return async_policy_->WaitRound();
  if (or_request_ == MPI_REQUEST_NULL) return 0u;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Wait(&or_request_, MPI_STATUS_IGNORE));
  return or_all_;
}

absl::StatusOr<std::optional<uint32_t>> MpiCluster::TestOrOverRanks() {
  if (async_policy_ != nullptr) return async_policy_->TestRound();
  if (or_request_ == MPI_REQUEST_NULL) return std::nullopt;
  int done = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Test(&or_request_, &done, MPI_STATUS_IGNORE));
  if (done == 0) return std::nullopt;
  return or_all_;
}

absl::StatusOr<Cluster::JobCut> MpiCluster::CheckpointCut(UpdatePolicy& policy,
                                                          const std::vector<int64_t>& next_step) {
  if (&policy != async_policy_) {
    return absl::InvalidArgumentError(
        "MpiCluster::CheckpointCut: only async jobs take a cut (sync ranks hold the same state)");
  }
  HOGWILD_ASSIGN_OR_RETURN(ShardedHogwild::Cut cut, async_policy_->CheckpointCut(next_step));
  return JobCut{.next_step = std::move(cut.next_step),
                .momentum = std::move(cut.momentum),
                .global_step = cut.global_step};
}

absl::Status MpiCluster::AgreeOnStatus(const absl::Status& mine) {
  // The lowest failing rank (num_ranks_ when none) tells every rank its code and message.
  const int failed = mine.ok() ? num_ranks_ : rank_;
  int first = num_ranks_;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (first == num_ranks_) return absl::OkStatus();
  int code = static_cast<int>(mine.code());
  std::string message(mine.message());
  int length = static_cast<int>(message.size());
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD));
  message.resize(static_cast<size_t>(length));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(message.data(), length, MPI_CHAR, first, MPI_COMM_WORLD));
  if (first != 0) message = absl::StrFormat("rank %d of %d: %s", first, num_ranks_, message);
  return MarkJobWide(absl::Status(static_cast<absl::StatusCode>(code), message));
}

absl::Status MpiCluster::CheckSameArguments(const std::vector<std::string>& args) {
  // Rank 0's arguments, NUL-separated, broadcast; every rank compares its own.
  std::string own;
  for (const std::string& a : args) own.append(a).push_back('\0');
  int64_t length = static_cast<int64_t>(own.size());
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
  std::string root = rank_ == 0 ? own : std::string(static_cast<size_t>(length), '\0');
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Bcast(root.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD));
  std::vector<std::string> root_args;
  for (size_t start = 0; start < root.size();) {
    const size_t end = root.find('\0', start);
    root_args.push_back(root.substr(start, end - start));
    start = end + 1;
  }
  // The first differing position on this rank (args.size() + root size when equal).
  int differs = -1;
  for (size_t i = 0; i < std::max(args.size(), root_args.size()); ++i) {
    if (i >= args.size() || i >= root_args.size() || args[i] != root_args[i]) {
      differs = static_cast<int>(i);
      break;
    }
  }
  // The lowest rank that differs: every rank learns it, so all fail together.
  const int mine = differs >= 0 ? rank_ : num_ranks_;
  int first = num_ranks_;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (first == num_ranks_) return absl::OkStatus();
  // That rank tells the others what differs.
  std::string what;
  if (rank_ == first) {
    const auto at = [](const std::vector<std::string>& v, int i) {
      return i < static_cast<int>(v.size()) ? absl::StrFormat("'%s'", v[i]) : "nothing";
    };
    what = absl::StrFormat("argument %d is %s on rank %d but %s on rank 0", differs + 1,
                           at(args, differs), rank_, at(root_args, differs));
  }
  int what_length = static_cast<int>(what.size());
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(&what_length, 1, MPI_INT, first, MPI_COMM_WORLD));
  what.resize(static_cast<size_t>(what_length));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(what.data(), what_length, MPI_CHAR, first, MPI_COMM_WORLD));
  return absl::InvalidArgumentError(absl::StrFormat(
      "the ranks were started with different command lines: %s; every rank must get the same "
      "flags",
      what));
}

}  // namespace hogwild
