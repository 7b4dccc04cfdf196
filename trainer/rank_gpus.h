// Which physical GPUs a rank of a job of several processes trains on, from its --devices list.
//
// Every rank gets the same command line (mpi/mpi_cluster.h checks it), so `--devices gpu:0`
// cannot name a different GPU per rank by itself. The rule, Horovod's "one GPU block per local
// rank" made explicit:
//   - one rank on this host: the listed devices as they are;
//   - several ranks on this host (L of them, this one the l-th, MPI_COMM_TYPE_SHARED order) and
//     at least L·B visible GPUs, where B = (largest listed index) + 1 is the block one rank's
//     list spans: listed index d becomes l·B + d, so rank l of the host takes block l
//     (`mpirun -np 2 train --devices gpu:0` on a host with 2 GPUs: rank 0 on GPU 0, rank 1 on
//     GPU 1; `--devices gpu:0,1` with 4 GPUs: GPUs 0,1 and 2,3);
//   - fewer than L·B visible GPUs but CUDA_VISIBLE_DEVICES set: the launcher or a wrapper
//     gave each rank its own GPUs, so the listed devices are used as they are (indices into
//     the rank's visible set);
//   - otherwise the ranks would share GPUs (NCCL refuses two ranks of one communicator on one
//     GPU): an error saying what to do.
// "Visible" is what the CUDA runtime reports (after CUDA_VISIBLE_DEVICES).
#ifndef HOGWILD_TRAINER_RANK_GPUS_H_
#define HOGWILD_TRAINER_RANK_GPUS_H_

#include <vector>

#include "absl/status/statusor.h"

namespace hogwild {

// Where a rank runs, as the rule above needs it.
struct RankHost {
  int local_rank = 0;    // this rank's index among the ranks on its host, in [0, local_ranks)
  int local_ranks = 1;   // L >= 1: ranks of the job on this host
  int visible_gpus = 0;  // CUDA devices this process sees
  bool visible_gpus_restricted = false;  // CUDA_VISIBLE_DEVICES is set for this process
};

// The physical device (CUDA ordinal of this process) of each entry of `listed` (the --devices
// GPU indices, distinct, >= 0), in the same order, by the rule of the file comment.
// Errors: kInvalidArgument for an empty list, a negative or repeated index, or a bad `host`;
// kFailedPrecondition when the ranks of this host would share GPUs or an index is not below
// visible_gpus, naming the ranks, the GPUs needed and seen, and the two ways out (fewer ranks
// per host, or CUDA_VISIBLE_DEVICES per rank). Pure; thread-safe.
absl::StatusOr<std::vector<int>> RankGpus(const std::vector<int>& listed, const RankHost& host);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_RANK_GPUS_H_
