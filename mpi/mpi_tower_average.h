// The synchronous policy across processes: the example-weighted tower average over all workers
// of all ranks, one identical update per step on every rank.
//
// Rank r runs W local workers; the job has R ranks. Every step:
//   1. the local workers meet at the step barrier; worker w adds its slice
//      [P·w/W, P·(w+1)/W) of the W local tower gradients, in worker order 0..W-1, into the
//      rank's partial sum s_r ([P]);
//   2. worker 0 exchanges the partial sums with the other ranks (below), giving the global sum
//      g = s_0 + s_1 + ... + s_{R-1} ([P]) on every rank;
//   3. worker w applies the optimizer with g to its slice of the parameters and of the one
//      optimizer state (replicated: every rank holds the same), exactly as the one-process
//      policy does (sync/sliced_update.h, shared with TowerAverage): any optimizer of
//      kernels/optimizer.h, clipping by the global norm of g (the averaged gradient, never a
//      rank's part), the weight-decay exemptions and batch norm's moving statistics (whose
//      slots hold the batch statistics, averaged over all towers like the gradient); then the
//      workers meet again. Adam's step count advances once per step on every rank.
// Each gradient is pre-scaled by 1/(global batch), so g is the example-weighted average over the
// R·W towers of the step (uneven splits and empty shards included).
//
// The reduction order is fixed, so two runs with the same R, W and seed give bitwise the same
// parameters whatever MPI implementation, algorithm or network: the exchange is a reduce-scatter
// followed by an all-gather that move bytes only. Rank q owns the slice
// [P·q/R, P·(q+1)/R); MPI_Alltoallv sends every rank's part of s_r for that slice to rank q,
// which adds the R parts in rank order 0..R-1 itself; MPI_Allgatherv then gives every rank all
// R summed slices. (MPI_Allreduce does not fix the association of its sums: the standard only
// recommends reproducibility, and Open MPI picks ring, recursive doubling or Rabenseifner by
// message size and rank count, so its result could change with either. The two calls send
// 2·(R-1)/R·4P bytes per rank and step, what a ring all-reduce sends.)
// Against one process with R·W workers at the same global batch the parameters agree within
// float rounding: the same towers are added, associated as (towers of rank 0) + (towers of
// rank 1) + ... instead of one left-to-right sum.
//
// Checkpoints: every rank holds the same optimizer state, so rank 0's (saved by the trainer) is
// the job's; a resume restores it on every rank, and continues bitwise.
//
// Thread-safety: as TowerAverage (sync/tower_average.h); MPI is called by worker 0 only, between
// two barriers, so the process needs MPI_THREAD_SERIALIZED. Cancel() releases local waiters;
// a peer rank blocked in the exchange is released by the job ending (MpiCluster aborts the job
// when a rank fails).
#ifndef HOGWILD_MPI_MPI_TOWER_AVERAGE_H_
#define HOGWILD_MPI_MPI_TOWER_AVERAGE_H_

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "sync/parameter_store.h"
#include "sync/sliced_update.h"
#include "sync/step_barrier.h"
#include "sync/update_policy.h"

namespace hogwild {

class MpiTowerAverage final : public UpdatePolicy {
 public:
  // `store` must outlive this object and hold the same initial parameters on every rank of
  // `comm` (which must outlive it too, with MPI_ERRORS_RETURN). num_workers >= 1 local workers.
  // options.staleness_aware_lr is ignored; options.no_decay and options.moving_stats are the
  // model's ranges, as for TowerAverage.
  MpiTowerAverage(ParameterStore* store, int num_workers, SgdOptions options, MPI_Comm comm);

  // NumStateSlots of the one state: 1 with momentum, 2 for Adam, ...
  int num_optimizer_buffers() const override;
  // 1 for the optimizers with a step count (Adam), else 0.
  int num_optimizer_steps() const override;

  // Payload bytes handed to MPI for other ranks so far, and the exchanges (steps). Thread-safe.
  int64_t bytes_moved() const { return bytes_moved_.load(std::memory_order_relaxed); }
  int64_t exchanges() const { return exchanges_.load(std::memory_order_relaxed); }

 private:
  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  void DoCancel() override { barrier_.Cancel(); }
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;

  // partial_[lo, hi) = the local towers' sum in worker order.
  void AddLocalTowers(int64_t lo, int64_t hi);
  // global_ = the sum of every rank's partial_, in rank order (step 2 above). Worker 0 only.
  absl::Status Exchange();

  const MPI_Comm comm_;
  int rank_ = 0;
  int num_ranks_ = 1;
  StepBarrier barrier_;
  std::vector<const float*> tower_grads_;  // [W], this step's local gradients
  std::vector<float> partial_;             // [P] s_r
  std::vector<float> global_;              // [P] g
  std::vector<float> received_;            // [R, own slice] the ranks' parts of the own slice
  std::vector<int> counts_;                // [R] slice q's length
  std::vector<int> offsets_;               // [R] slice q's first element
  SlicedUpdate update_;                    // the one optimizer state and the slice update
  std::atomic<int64_t> bytes_moved_{0};
  std::atomic<int64_t> exchanges_{0};
};

}  // namespace hogwild

#endif  // HOGWILD_MPI_MPI_TOWER_AVERAGE_H_
