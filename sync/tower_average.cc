#include "sync/tower_average.h"

#include <algorithm>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/status_macros.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"

namespace hogwild {

TowerAverage::TowerAverage(ParameterStore* store, int num_workers, SgdOptions options)
    : UpdatePolicy(Mode::kSync, store, num_workers, options),
      barrier_(num_workers),
      tower_grads_(num_workers, nullptr) {
  if (options.momentum != 0.0f) velocity_.assign(store->size(), 0.0f);
}

int TowerAverage::num_momentum_buffers() const { return velocity_.empty() ? 0 : 1; }

absl::Status TowerAverage::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> TowerAverage::DoSaveMomentum() const {
  if (velocity_.empty()) return std::vector<std::vector<float>>{};
  return std::vector<std::vector<float>>{velocity_};
}

absl::Status TowerAverage::DoRestoreMomentum(const std::vector<std::vector<float>>& momentum) {
  if (!momentum.empty()) velocity_ = momentum[0];
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
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());

  const int64_t begin = num_params * worker / num_workers();
  const int64_t end = num_params * (worker + 1) / num_workers();
  float* params = store()->unsafe_values().data();
  float* velocity = velocity_.empty() ? nullptr : velocity_.data();
  const SgdMomentumFn sgd{lr, sgd_options().momentum, sgd_options().weight_decay};
  // Blocked so the partial sums stay in L1 while all towers are added in worker order.
  constexpr int64_t kBlock = 1024;
  alignas(64) float sum[kBlock];
  for (int64_t lo = begin; lo < end; lo += kBlock) {
    const int64_t n = std::min(kBlock, end - lo);
    AddTowers(lo, n, sum);
    cpu::SgdUpdate(sgd, absl::MakeConstSpan(sum, n),
                   velocity == nullptr ? absl::Span<float>() : absl::MakeSpan(velocity + lo, n),
                   absl::MakeSpan(params + lo, n));
  }
  if (worker == 0) store()->CompleteUpdate();
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  return StepStats{.staleness = 0, .applied_lr = lr};
}

}  // namespace hogwild
