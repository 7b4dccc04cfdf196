// The update half of the synchronous policies: one optimizer state over the P parameters, sliced
// like the parameters among W workers, and each worker's update of its slice from the averaged
// gradient: clipping by the global norm of the averaged gradient (sync/grad_clip.h), weight-decay
// exemptions and batch norm's moving statistics (sync/optimizer_slots.h), any optimizer of
// kernels/optimizer.h. Shared by the one-process sync policy (sync/tower_average.h), the one
// across processes (mpi/mpi_tower_average.h), which differ only in how the averaged gradient of
// a slice is formed (the local towers' sum, or the sum over all ranks' towers; both
// sync/tower_sum.h), and the simulated sync policy (UpdateAllSlices, from one thread).
//
// The update arithmetic itself (the blocked sum of squares, the clip factor, the optimizer over
// a range) is the free functions below, which backup's single-threaded update (sync/
// backup_sync.h) and the simulated backup policy call too. Every step, worker w of W:
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
  // writes the averaged gradient's elements [lo, lo + n) to out ([n] float32, n <= kUpdateBlock),
  // the same values each time it is called for them (it is called twice per element when clipping).
  // With clip_global_norm the worker adds up its slice's trained squares, meets the other
  // workers at `barrier` and every worker sums the W partials in worker order: the same factor
  // everywhere, so the update is bitwise reproducible. Errors: the barrier's (kCancelled).
  template <typename SumInto>
  absl::Status UpdateSlice(int worker, float lr, uint64_t step, SumInto sum_into,
                           StepBarrier& barrier, float* params);

  // What the W workers' UpdateSlice calls of one step do together, from one thread (no
  // barrier): every slice's squares, the clip factor from their sum in worker order, then every
  // slice's update; bitwise the W threads' result. For the simulated sync policy (sim/), which
  // runs the W workers on one thread.
  template <typename SumInto>
  void UpdateAllSlices(float lr, uint64_t step, SumInto sum_into, float* params);

 private:
  // The first parameter of worker w's slice (w in [0, W]; SliceBegin(W) = P).
  int64_t SliceBegin(int worker) const { return num_params_ * worker / num_workers_; }
  // ClipScale of the sum of partial_squares_ in worker order.
  float PartialsClipScale() const {
    double total = 0.0;
    for (double partial : partial_squares_) total += partial;
    return ClipScale(total, options_.clip_global_norm);
  }

  const SgdOptions options_;
  const int64_t num_params_;
  const int num_workers_;
  OptimizerSlots slots_;
  // clip_global_norm: each worker's sum of squares of its slice of the averaged gradient,
  // written before the clipping barrier and read by all after it.
  std::vector<double> partial_squares_;
};

// The two halves of the update of params[begin, end) from the averaged gradient, blocked so
// the partial sums stay in L1 while they are formed and applied (kUpdateBlock elements from
// `begin`; the blocks also fix how the sum of squares is associated, so every caller of the
// same range gets the same clip factor bitwise). sum_into(lo, n, out) writes the averaged
// gradient's elements [lo, lo + n) to out ([n] float32, n <= kUpdateBlock), the same values
// each time it is called for them.
inline constexpr int64_t kUpdateBlock = 1024;

// The sum of squares of the trained elements of the averaged gradient's [begin, end), in
// double, block by block (clipping's half before the norm is known). Pure apart from sum_into.
template <typename SumInto>
double AveragedSquares(const SgdOptions& options, int64_t begin, int64_t end, SumInto sum_into) {
  alignas(64) float sum[kUpdateBlock];
  double squares = 0.0;
  for (int64_t lo = begin; lo < end; lo += kUpdateBlock) {
    const int64_t n = std::min(kUpdateBlock, end - lo);
    sum_into(lo, n, sum);
    squares += TrainedSumOfSquares(options, lo, absl::MakeConstSpan(sum, n));
  }
  return squares;
}

// params[begin, end) ([P] float32, host memory) updated from the averaged gradient multiplied
// by the clip factor `scale` on its trained elements (1: not clipped), with the optimizer of
// `options` at optimizer step `step` (>= 1) and learning rate lr, the weight-decay exemptions
// and the moving statistics (ApplyOptimizerRange). Reads and writes slots' elements
// [begin, end). Thread-safety: the caller owns the range.
template <typename SumInto>
void UpdateAveragedRange(const SgdOptions& options, float lr, uint64_t step, float scale,
                         int64_t begin, int64_t end, SumInto sum_into, OptimizerSlots& slots,
                         float* params) {
  alignas(64) float sum[kUpdateBlock];
  for (int64_t lo = begin; lo < end; lo += kUpdateBlock) {
    const int64_t n = std::min(kUpdateBlock, end - lo);
    sum_into(lo, n, sum);
    if (scale != 1.0f) {
      ScaleTrained(options, lo, scale, absl::MakeConstSpan(sum, n), absl::MakeSpan(sum, n));
    }
    ApplyOptimizerRange(options, lr, step, absl::MakeConstSpan(sum, n), slots, lo,
                        absl::MakeSpan(params + lo, n));
  }
}

// One thread's update of all P parameters from the averaged gradient: clipped by the whole
// averaged gradient's norm (when clip_global_norm > 0), then UpdateAveragedRange over [0, P).
// Backup's closing contributor (sync/backup_sync.h) and the simulated backup policy.
template <typename SumInto>
void UpdateAveraged(const SgdOptions& options, float lr, uint64_t step, SumInto sum_into,
                    OptimizerSlots& slots, absl::Span<float> params) {
  const int64_t num_params = static_cast<int64_t>(params.size());
  float scale = 1.0f;
  if (options.clip_global_norm > 0.0f) {
    scale = ClipScale(AveragedSquares(options, 0, num_params, sum_into), options.clip_global_norm);
  }
  UpdateAveragedRange(options, lr, step, scale, 0, num_params, sum_into, slots, params.data());
}

template <typename SumInto>
absl::Status SlicedUpdate::UpdateSlice(int worker, float lr, uint64_t step, SumInto sum_into,
                                       StepBarrier& barrier, float* params) {
  const int64_t begin = SliceBegin(worker);
  const int64_t end = SliceBegin(worker + 1);
  float scale = 1.0f;
  if (options_.clip_global_norm > 0.0f) {
    // Clipping needs the norm of the whole averaged gradient: each worker adds up its slice's
    // squares, the partials meet at a barrier, and every worker sums them in worker order (the
    // same total and factor everywhere), then the slices are formed again and scaled.
    partial_squares_[worker] = AveragedSquares(options_, begin, end, sum_into);
    HOGWILD_RETURN_IF_ERROR(barrier.ArriveAndWait());
    scale = PartialsClipScale();
  }
  UpdateAveragedRange(options_, lr, step, scale, begin, end, sum_into, slots_, params);
  return absl::OkStatus();
}

template <typename SumInto>
void SlicedUpdate::UpdateAllSlices(float lr, uint64_t step, SumInto sum_into, float* params) {
  float scale = 1.0f;
  if (options_.clip_global_norm > 0.0f) {
    for (int w = 0; w < num_workers_; ++w) {
      partial_squares_[w] = AveragedSquares(options_, SliceBegin(w), SliceBegin(w + 1), sum_into);
    }
    scale = PartialsClipScale();
  }
  for (int w = 0; w < num_workers_; ++w) {
    UpdateAveragedRange(options_, lr, step, scale, SliceBegin(w), SliceBegin(w + 1), sum_into,
                        slots_, params);
  }
}

}  // namespace hogwild

#endif  // HOGWILD_SYNC_SLICED_UPDATE_H_
