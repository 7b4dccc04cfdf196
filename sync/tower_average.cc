#include "sync/tower_average.h"

#include <algorithm>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/status_macros.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"
#include "sync/grad_clip.h"

namespace hogwild {

TowerAverage::TowerAverage(ParameterStore* store, int num_workers, SgdOptions options)
    : UpdatePolicy(Mode::kSync, store, num_workers, options),
      barrier_(num_workers),
      tower_grads_(num_workers, nullptr),
      partial_squares_(num_workers, 0.0) {
  slots_ = OptimizerSlots(options, store->size());
}

int TowerAverage::num_optimizer_buffers() const { return slots_.num_slots(); }

int TowerAverage::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? 1 : 0;
}

std::vector<uint64_t> TowerAverage::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  return {slots_.step};
}

void TowerAverage::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  if (!steps.empty()) slots_.step = steps[0];
}

absl::Status TowerAverage::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> TowerAverage::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  AppendSlotBuffers(slots_, &buffers);
  return buffers;
}

absl::Status TowerAverage::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& momentum) {
  RestoreSlots(momentum, 0, {}, 0, slots_);
  return absl::OkStatus();
}

void TowerAverage::AddTowers(int64_t lo, int64_t n, float* sum) const {
  const float* g0 = tower_grads_[0] + lo;
  int64_t i = 0;
#if defined(__SSE2__)
  // The same sums in the same worker order as the scalar loop below, four elements at a time.
  for (; i + 4 <= n; i += 4) {
    __m128 acc = _mm_loadu_ps(g0 + i);
    for (int w = 1; w < num_workers(); ++w) {
      acc = _mm_add_ps(acc, _mm_loadu_ps(tower_grads_[w] + lo + i));
    }
    _mm_storeu_ps(sum + i, acc);
  }
#endif
  for (; i < n; ++i) {
    float acc = g0[i];
    for (int w = 1; w < num_workers(); ++w) acc += tower_grads_[w][lo + i];
    sum[i] = acc;
  }
}

absl::StatusOr<DeviceSpan<const float>> TowerAverage::DoBeginStep(int /*worker*/) {
  // Nobody writes the array between the closing barrier of the last step and the opening
  // barrier of this one, so every tower reads it in place: no copy.
  return DeviceSpan<const float>(store()->unsafe_values());
}

absl::StatusOr<StepStats> TowerAverage::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                     float lr) {
  // A CPU policy: the gradient is in host memory.
  const int64_t num_params = store()->size();
  tower_grads_[worker] = grad.data();
  // This update's step count, read before the barrier: worker 0 advances it after the barrier
  // (below), and the previous step's closing barrier ordered its last write before this read.
  const uint64_t step = slots_.step + 1;
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());

  const int64_t begin = num_params * worker / num_workers();
  const int64_t end = num_params * (worker + 1) / num_workers();
  float* params = store()->unsafe_values().data();
  // Blocked so the partial sums stay in L1 while all towers are added in worker order.
  constexpr int64_t kBlock = 1024;
  alignas(64) float sum[kBlock];
  float scale = 1.0f;
  if (sgd_options().clip_global_norm > 0.0f) {
    // Clipping needs the norm of the whole averaged gradient: each worker adds up its slice's
    // squares, the partials meet at a barrier, and every worker sums them in worker order (the
    // same total and factor everywhere), then the slices are summed again and scaled.
    double squares = 0.0;
    for (int64_t lo = begin; lo < end; lo += kBlock) {
      const int64_t n = std::min(kBlock, end - lo);
      AddTowers(lo, n, sum);
      squares += TrainedSumOfSquares(sgd_options(), lo, absl::MakeConstSpan(sum, n));
    }
    partial_squares_[worker] = squares;
    HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
    double total = 0.0;
    for (double partial : partial_squares_) total += partial;
    scale = ClipScale(total, sgd_options().clip_global_norm);
  }
  for (int64_t lo = begin; lo < end; lo += kBlock) {
    const int64_t n = std::min(kBlock, end - lo);
    AddTowers(lo, n, sum);
    if (scale != 1.0f) {
      ScaleTrained(sgd_options(), lo, scale, absl::MakeConstSpan(sum, n), absl::MakeSpan(sum, n));
    }
    ApplyOptimizerRange(sgd_options(), lr, step, absl::MakeConstSpan(sum, n), slots_, lo,
                        absl::MakeSpan(params + lo, n));
  }
  if (worker == 0) {
    store()->CompleteUpdate();
    slots_.step = step;
  }
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  return StepStats{.staleness = 0, .applied_lr = lr};
}

}  // namespace hogwild
