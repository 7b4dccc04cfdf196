// The synchronous update policy for GPU workers: tower gradient averaging with one parameter
// replica per GPU (TensorFlow's multi-GPU tower model, tf.distribute.MirroredStrategy).
//
// Every step all workers compute their tower gradient from their GPU's replica (unchanged
// during the compute phase), then:
//   1. each worker waits for its own stream (its gradient is complete) and arrives at the step
//      barrier;
//   2. worker 0 alone drives the reduction, on one stream per GPU that this policy owns:
//      a. on each GPU, the sum of that GPU's workers' gradients in worker order (a device copy
//         then Accumulate kernels: several workers on one GPU reduce on that GPU);
//      b. with more than one GPU in the job, an NCCL sum all-reduce of those per-GPU sums, the
//         G local calls inside one ncclGroupStart/ncclGroupEnd because one thread issues them
//         all. One process: one communicator per GPU from ncclCommInitAll. Across processes
//         (a ProcessGroup with R > 1 ranks, each with the same number G of distinct GPUs):
//         rank 0 calls ncclGetUniqueId, the ProcessGroup broadcasts it (MPI_Bcast in
//         mpi/mpi_cluster.h), and every rank calls ncclCommInitRank for each local GPU g
//         (inside ncclGroupStart/ncclGroupEnd) as NCCL rank r·G + g of R·G, so one all-reduce
//         spans every GPU of the job and every replica of every rank gets the same sum;
//      c. the same optimizer update applied to every replica (sync/device_optimizer_slots.h:
//         SgdMomentumFn for sgd and momentum, OptimizerFn for the others; one copy of the
//         optimizer state per replica and one step count), so the replicas stay identical;
//         weight decay skips SgdOptions::no_decay, and SgdOptions::moving_stats get the moving
//         average of sync/moving_stats.h, as on the CPU policies;
//      d. it waits for all those streams;
//   3. everyone arrives at the barrier again, so no tower reads a replica before its update.
// The gradients are pre-scaled by 1/(global batch) (sync/update_policy.h), so the sum is the
// example-weighted average of the towers, whatever the shard sizes (empty shards included).
// Sums run in a fixed order on each GPU, and NCCL's reduction order is fixed for a fixed set
// of GPUs, so runs repeat bitwise on one machine. With W workers and global batch B the
// parameters equal those of one worker with batch B up to float rounding. Across processes the
// same holds for a fixed job layout (ranks, GPUs per rank, hosts, NCCL version): NCCL chooses
// its algorithm (ring or tree) and protocol from the message size and the topology, the same
// choice on every run of one layout; NCCL_ALGO=Ring NCCL_PROTO=Simple pin it. R ranks x G GPUs
// equal one process with R·G GPUs (the same NCCL ranks in the same order) within float
// rounding. THE CROSS-PROCESS PATH IS COMPILED BUT HAS NOT YET BEEN EXECUTED ON A GPU
// (tests/mpi_nccl_test.sh is written, gpu-tagged, and skips without two GPUs). The optimizers other
// than sgd and momentum have not yet been executed on a GPU (tests/gpu_policy_optimizer_test.cc
// is written, gpu-tagged).
//
// Thread-safety: each worker calls BeginStep/FinishStep once per step from its own thread,
// after AttachWorker on that thread. Cancel() releases every waiter (the no-hang guarantee)
// of this process; a peer rank blocked in the NCCL all-reduce is released by the job ending
// (a failing rank aborts the job: mpi/mpi_cluster.h).
#ifndef HOGWILD_SYNC_NCCL_TOWER_AVERAGE_H_
#define HOGWILD_SYNC_NCCL_TOWER_AVERAGE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_buffer.h"
#include "sync/device_optimizer_slots.h"
#include "sync/parameter_store.h"
#include "sync/process_group.h"
#include "sync/step_barrier.h"
#include "sync/update_policy.h"

struct ncclComm;

namespace hogwild {

class NcclTowerAverage final : public UpdatePolicy {
 public:
  // `store` holds the initial parameters (copied to every replica here) and counts the steps;
  // it must outlive this object. worker_devices[w] is the CUDA device of worker w (W >= 1,
  // repeats allowed). options.staleness_aware_lr is ignored.
  // `job`: nullptr (or num_ranks 1) for one process; otherwise the job's processes, and this
  // call is collective: every rank calls it, with the same number of distinct GPUs and the same
  // store contents, and no two ranks on one host may name the same physical GPU (NCCL refuses
  // duplicates; trainer/rank_gpus.h maps a rank's --devices to its own GPUs).
  // Errors: kInvalidArgument for an empty or bad device list; kFailedPrecondition without a
  // usable GPU, or when rank 0 has another number of GPUs than this rank; kResourceExhausted
  // when a replica does not fit; NCCL errors (naming the call, file:line, device, and with a
  // job "rank r of R"); the broadcast's errors. A rank that fails here leaves its peers waiting
  // in the broadcast or in ncclCommInitRank: the caller must end the job (MpiCluster::Abort).
  static absl::StatusOr<std::unique_ptr<NcclTowerAverage>> Create(
      ParameterStore* store, std::vector<int> worker_devices, SgdOptions options,
      const ProcessGroup* job = nullptr);
  ~NcclTowerAverage() override;

  // Distinct GPUs of this process, i.e. replicas.
  int num_replicas() const { return static_cast<int>(gpus_.size()); }
  // The job's ranks (1 without a ProcessGroup) and this process's rank.
  int num_ranks() const { return num_ranks_; }
  int rank() const { return rank_; }
  // NumStateSlots(optimizer) (every replica keeps identical buffers; the first replica's are
  // saved and a restore fills all).
  int num_optimizer_buffers() const override;
  // 1 with adam and adamw (the updates applied), else 0.
  int num_optimizer_steps() const override;

 private:
  // `backend` must be a CudaBackend on worker_devices[worker].
  absl::Status DoAttachWorker(int worker, Backend* backend) override;
  // Copies the first replica (all are equal between steps) to `out`.
  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  // Sparse gradients are for CPU workers.
  const char* DenseOnly() const override { return "NcclTowerAverage (sync on GPU workers)"; }
  void DoCancel() override { barrier_.Cancel(); }
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& buffers) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;
  // Copies the store's parameters to every replica.
  absl::Status DoRestoreParams() override;

  struct PerGpu {
    int device = 0;
    CUstream_st* stream = nullptr;  // owned; the reduction's stream on this GPU
    ncclComm* comm = nullptr;       // owned; null with a single GPU in the job (no NCCL)
    DeviceBuffer replica;           // [P]
    DeviceBuffer sum;               // [P] this GPU's gradient sum, then the global sum
    DeviceOptimizerSlots slots;     // this replica's copy of the state (its step is unused)
    std::vector<int> workers;       // in worker order
  };

  NcclTowerAverage(ParameterStore* store, SgdOptions options, int num_workers);
  // The communicators of step 2b: ncclCommInitAll in one process, or the unique id broadcast
  // and ncclCommInitRank per local GPU across the ranks of `job`. None with one GPU in all.
  absl::Status InitComms(const ProcessGroup* job);
  // `status` with "rank r of R: " in front in a job of several ranks.
  absl::Status OnRank(absl::Status status) const;
  // Steps 2a-2d of the class comment, on worker 0's thread.
  absl::Status Reduce(float lr);

  StepBarrier barrier_;
  std::vector<PerGpu> gpus_;
  std::vector<int> worker_gpu_;            // worker -> index into gpus_
  std::vector<CudaBackend*> backends_;     // set by AttachWorker
  std::vector<const float*> tower_grads_;  // published before the first barrier
  uint64_t step_ = 0;                      // updates applied; worker 0 writes it in Reduce
  int rank_ = 0;                           // in the ProcessGroup; 0 without one
  int num_ranks_ = 1;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_NCCL_TOWER_AVERAGE_H_
