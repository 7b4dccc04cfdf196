// The update half of the synchronous policies: one optimizer state over the P parameters, sliced
// like the parameters among W workers, and each worker's update of its slice from the averaged
// gradient: clipping by the global norm of the averaged gradient (sync/grad_clip.h), weight-decay
// exemptions and batch norm's moving statistics (sync/optimizer_slots.h), any optimizer of
// kernels/optimizer.h. Shared by the one-process sync policy (sync/tower_average.h) and the one
// across processes (mpi/mpi_tower_average.h), which differ only in how the averaged gradient of
// a slice is formed (the local towers' sum, or the sum over all ranks' towers).
//
// Every step, worker w of W:
//   step = state.step() + 1;            // before the step's first barrier
//   ... the policy's barriers; the averaged gradient becomes readable ...
//   UpdateSlice(w, lr, step, sum_into, barrier, params);
//   if (w == 0) state.set_step(step);   // before the step's closing barrier
//
// Thread-safety: UpdateSlice is called by every worker of the step, each for its own slice, and
// meets the others at `barrier` once when clipping (the partial sums of squares are written
// before it and read after it). Everything else is for one thread while no step runs (or the
// state reads of worker 0 between barriers, as above).
#ifndef HOGWILD_SYNC_SLICED_UPDATE_H_
#define HOGWILD_SYNC_SLICED_UPDATE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/status_macros.h"
#include "sync/grad_clip.h"
#include "sync/optimizer_slots.h"
#include "sync/step_barrier.h"
#include "sync/update_policy.h"

namespace hogwild {

class SlicedUpdate {
 public:
  // Zeroed state for `options`' optimizer over num_params parameters, sliced among
  // num_workers >= 1 workers.
  SlicedUpdate(const SgdOptions& options, int64_t num_params, int num_workers);

  // NumStateSlots of the optimizer (1 with momentum, 2 for Adam, else 0): the checkpoint's
  // buffers, [P] float32 each.
  int num_buffers() const { return slots_.num_slots(); }
  // 1 for the optimizers with a step count (Adam's t), else 0.
  int num_steps() const;
  // Updates applied so far (Adam's t).
  uint64_t step() const { return slots_.step; }
  void set_step(uint64_t step) { slots_.step = step; }

  // The checkpoint's view of the state (owner-major as PolicyState: one owner here).
  std::vector<std::vector<float>> SaveBuffers() const;
  void RestoreBuffers(const std::vector<std::vector<float>>& buffers);
  std::vector<uint64_t> SaveSteps() const;
  void RestoreSteps(const std::vector<uint64_t>& steps);

  // Worker `worker`'s update of its slice [P·worker/W, P·(worker+1)/W) of params ([P] float32,
  // host memory) with learning rate lr at optimizer step `step` (>= 1). sum_into(lo, n, out)
  // writes the averaged gradient's elements [lo, lo + n) to out ([n] float32, n <= 1024), the
  // same values each time it is called for them (it is called twice per element when clipping).
  // With clip_global_norm the worker adds up its slice's trained squares, meets the other
  // workers at `barrier` and every worker sums the W partials in worker order: the same factor
  // everywhere, so the update is bitwise reproducible. Errors: the barrier's (kCancelled).
  template <typename SumInto>
  absl::Status UpdateSlice(int worker, float lr, uint64_t step, SumInto sum_into,
                           StepBarrier& barrier, float* params);

 private:
  const SgdOptions options_;
  const int64_t num_params_;
  const int num_workers_;
  OptimizerSlots slots_;
  // clip_global_norm: each worker's sum of squares of its slice of the averaged gradient,
  // written before the clipping barrier and read by all after it.
  std::vector<double> partial_squares_;
};

template <typename SumInto>
absl::Status SlicedUpdate::UpdateSlice(int worker, float lr, uint64_t step, SumInto sum_into,
                                       StepBarrier& barrier, float* params) {
  const int64_t begin = num_params_ * worker / num_workers_;
  const int64_t end = num_params_ * (worker + 1) / num_workers_;
  // Blocked so the partial sums stay in L1 while they are formed and applied.
  constexpr int64_t kBlock = 1024;
  alignas(64) float sum[kBlock];
  float scale = 1.0f;
  if (options_.clip_global_norm > 0.0f) {
    // Clipping needs the norm of the whole averaged gradient: each worker adds up its slice's
    // squares, the partials meet at a barrier, and every worker sums them in worker order (the
    // same total and factor everywhere), then the slices are formed again and scaled.
    double squares = 0.0;
    for (int64_t lo = begin; lo < end; lo += kBlock) {
      const int64_t n = std::min(kBlock, end - lo);
      sum_into(lo, n, sum);
      squares += TrainedSumOfSquares(options_, lo, absl::MakeConstSpan(sum, n));
    }
    partial_squares_[worker] = squares;
    HOGWILD_RETURN_IF_ERROR(barrier.ArriveAndWait());
    double total = 0.0;
    for (double partial : partial_squares_) total += partial;
    scale = ClipScale(total, options_.clip_global_norm);
  }
  for (int64_t lo = begin; lo < end; lo += kBlock) {
    const int64_t n = std::min(kBlock, end - lo);
    sum_into(lo, n, sum);
    if (scale != 1.0f) {
      ScaleTrained(options_, lo, scale, absl::MakeConstSpan(sum, n), absl::MakeSpan(sum, n));
    }
    ApplyOptimizerRange(options_, lr, step, absl::MakeConstSpan(sum, n), slots_, lo,
                        absl::MakeSpan(params + lo, n));
  }
  return absl::OkStatus();
}

}  // namespace hogwild

#endif  // HOGWILD_SYNC_SLICED_UPDATE_H_
