// The processes of a job as a GPU update policy sees them: this process's rank, the rank count
// and a broadcast from rank 0. NcclTowerAverage (sync/nccl_tower_average.h) uses it to set up
// one NCCL communicator over the GPUs of every process; the trainer builds it from its Cluster
// (trainer/cluster.h, MPI in mpi/mpi_cluster.h), so sync/ needs no MPI and mpi/ no CUDA.
#ifndef HOGWILD_SYNC_PROCESS_GROUP_H_
#define HOGWILD_SYNC_PROCESS_GROUP_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace hogwild {

struct ProcessGroup {
  int rank = 0;       // this process, in [0, num_ranks)
  int num_ranks = 1;  // R >= 1
  // Collective (every rank calls it, in the same order, with spans of the same size): copies
  // rank 0's `bytes` into every other rank's. Called from the thread that creates the policy.
  // Errors: the transport's (naming the call and the rank).
  std::function<absl::Status(absl::Span<char> bytes)> broadcast_from_rank0;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_PROCESS_GROUP_H_
