// One owner's optimizer state (a worker's, or the one copy of sync mode or of Hogwild's shared
// state): the NumStateSlots(optimizer) [P] buffers of kernels/optimizer.h (s0, s1) and the number
// of updates it has taken (Adam's t). Shared by the CPU update policies, with the update of a
// range of plain memory, and the checkpoint layout (owner-major, see PolicyState).
#ifndef HOGWILD_SYNC_OPTIMIZER_SLOTS_H_
#define HOGWILD_SYNC_OPTIMIZER_SLOTS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "sync/grad_clip.h"
#include "sync/update_policy.h"

namespace hogwild {

struct OptimizerSlots {
  std::vector<float> s0;  // [P] when NumStateSlots >= 1, else empty
  std::vector<float> s1;  // [P] when NumStateSlots == 2, else empty
  uint64_t step = 0;      // updates applied with this state

  // Zeroed slots for `options`' optimizer over P parameters.
  OptimizerSlots(const SgdOptions& options, int64_t num_params);
  OptimizerSlots() = default;

  int num_slots() const { return s1.empty() ? (s0.empty() ? 0 : 1) : 2; }
  absl::Span<float> span0() { return absl::MakeSpan(s0); }
  absl::Span<float> span1() { return absl::MakeSpan(s1); }
};

// One update of params ([n] float32, plain host memory, element `lo` of the model's P first)
// from grad ([n]) with learning rate `lr` at step `step` (>= 1) with the optimizer of `options`,
// reading and writing slots' elements [lo, lo + n). The SGD family runs the vectorized
// cpu::SgdUpdate, the others cpu::OptimizerUpdate; both are bitwise the OptimizerFn element by
// element. Parameters in options.no_decay are updated with weight decay 0; those in
// options.moving_stats get the moving average of sync/moving_stats.h instead. Thread-safety: none
// (the caller owns the ranges).
void ApplyOptimizerRange(const SgdOptions& options, float lr, uint64_t step,
                         absl::Span<const float> grad, OptimizerSlots& slots, int64_t lo,
                         absl::Span<float> params);

// One owner's update of its own private parameters (local_sgd's replica) from its own gradient
// grad ([P] float32, host memory, read only): clipped by its own global norm when
// clip_global_norm > 0 (into `clipped`, scratch resized to [P] when needed), then
// ApplyOptimizerRange over all P at the owner's next step (++slots.step). Shared by LocalSgd
// (sync/local_sgd.h) and the simulated local_sgd. Thread-safety: none (the caller owns all).
void ApplyOwnGradient(const SgdOptions& options, float lr, absl::Span<const float> grad,
                      OptimizerSlots& slots, std::vector<float>& clipped, absl::Span<float> params);

// Calls f(begin, count, decays) for consecutive pieces of [lo, lo + n) that together cover it in
// order: decays is false inside options.no_decay and when options.weight_decay is 0 (then the
// whole range is one piece). Pure apart from f.
template <typename F>
void ForEachDecayPiece(const SgdOptions& options, int64_t lo, int64_t n, F f) {
  if (options.no_decay.empty() || options.weight_decay == 0.0f) {
    f(lo, n, options.weight_decay != 0.0f);
    return;
  }
  int64_t at = lo;
  const int64_t end = lo + n;
  for (const auto& [begin, stop] : options.no_decay) {
    if (stop <= at) continue;
    if (begin >= end) break;
    if (begin > at) f(at, begin - at, true);
    const int64_t exempt_end = stop < end ? stop : end;
    const int64_t exempt_begin = begin > at ? begin : at;
    f(exempt_begin, exempt_end - exempt_begin, false);
    at = exempt_end;
  }
  if (at < end) f(at, end - at, true);
}

// Like ForEachDecayPiece, with the moving statistics (options.moving_stats) split out: calls
// trained(begin, count, decays) for the trained pieces and stats(begin, count) for the pieces of
// moving statistics, which together cover [lo, lo + n) in order. Pure apart from the callbacks.
template <typename F, typename G>
void ForEachUpdatePiece(const SgdOptions& options, int64_t lo, int64_t n, F trained, G stats) {
  int64_t at = lo;
  const int64_t end = lo + n;
  for (const auto& [begin, stop] : options.moving_stats) {
    if (stop <= at) continue;
    if (begin >= end) break;
    if (begin > at) ForEachDecayPiece(options, at, begin - at, trained);
    const int64_t stats_begin = begin > at ? begin : at;
    const int64_t stats_end = stop < end ? stop : end;
    stats(stats_begin, stats_end - stats_begin);
    at = stats_end;
  }
  if (at < end) ForEachDecayPiece(options, at, end - at, trained);
}

// Clipping leaves the moving statistics out (their slots hold statistics, not gradient). The sum
// of squares of grad's trained elements ([n] float32, element `lo` of the model's P first), in
// double: SumOfSquares(grad) itself when there are no moving statistics. Pure.
inline double TrainedSumOfSquares(const SgdOptions& options, int64_t lo,
                                  absl::Span<const float> grad) {
  if (options.moving_stats.empty()) return SumOfSquares(grad);
  double sum = 0.0;
  ForEachUpdatePiece(
      options, lo, static_cast<int64_t>(grad.size()),
      [&](int64_t begin, int64_t count, bool) {
        sum += SumOfSquares(grad.subspan(begin - lo, count));
      },
      [](int64_t, int64_t) {});
  return sum;
}

// The factor grad ([n] float32, element `lo` of the model's first) is clipped by:
// ClipScale(TrainedSumOfSquares(...), options.clip_global_norm). Without clipping
// (clip_global_norm <= 0) it is 1 and grad is not read at all: the sum of squares is a pass over
// P in double whose additions form one dependency chain (10% of the 1-worker W1 run's worker
// thread for its 269,322 parameters; benchmarks/results/2026-12-02-one-worker-step-rate.md), and
// its value would be thrown away. Pure.
inline float TrainedClipScale(const SgdOptions& options, int64_t lo, absl::Span<const float> grad) {
  if (options.clip_global_norm <= 0.0f) return 1.0f;
  return ClipScale(TrainedSumOfSquares(options, lo, grad), options.clip_global_norm);
}

// out = scale * grad on the trained elements and out = grad on the moving statistics (grad and
// out: [n] float32, element `lo` of the model's first; out may be grad itself). Pure.
inline void ScaleTrained(const SgdOptions& options, int64_t lo, float scale,
                         absl::Span<const float> grad, absl::Span<float> out) {
  ForEachUpdatePiece(
      options, lo, static_cast<int64_t>(grad.size()),
      [&](int64_t begin, int64_t count, bool) {
        for (int64_t i = begin - lo; i < begin - lo + count; ++i) out[i] = grad[i] * scale;
      },
      [&](int64_t begin, int64_t count) {
        for (int64_t i = begin - lo; i < begin - lo + count; ++i) out[i] = grad[i];
      });
}

// Appends the owner's slot buffers (num_slots() of them) to `buffers`.
void AppendSlotBuffers(const OptimizerSlots& slots, std::vector<std::vector<float>>* buffers);

// Sets the owner's slots from buffers[first, first + num_slots()) (sizes checked by the
// caller) and its step from `steps[owner]` when steps is not empty.
void RestoreSlots(const std::vector<std::vector<float>>& buffers, size_t first,
                  const std::vector<uint64_t>& steps, size_t owner, OptimizerSlots& slots);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_OPTIMIZER_SLOTS_H_
