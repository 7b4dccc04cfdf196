#include "kernels/cpu/optimizer_update.h"

#include <atomic>
#include <bit>
#include <cstdint>

#include "core/logging.h"

namespace hogwild::cpu {
namespace {

void CheckSizes(const char* call, int num_slots, size_t n, absl::Span<const float> grad,
                absl::Span<float> s0, absl::Span<float> s1) {
  HOGWILD_CHECK(grad.size() == n, call);
  HOGWILD_CHECK(num_slots < 1 || s0.size() == n, call);
  HOGWILD_CHECK(num_slots < 2 || s1.size() == n, call);
}

inline float Load(float* element) {
  return std::atomic_ref<float>(*element).load(std::memory_order_relaxed);
}

inline void Store(float* element, float value) {
  std::atomic_ref<float>(*element).store(value, std::memory_order_relaxed);
}

template <bool kSharedState>
void SharedLoop(const OptimizerFn& fn, int num_slots, int64_t n, const float* grad, float* s0,
                float* s1, float* shared, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    float a = 0.0f;
    float b = 0.0f;
    if (num_slots >= 1) a = kSharedState ? Load(s0 + i) : s0[i];
    if (num_slots >= 2) b = kSharedState ? Load(s1 + i) : s1[i];
    const float old_value = Load(shared + i);
    const float new_value = fn(old_value, grad[i], a, b);
    if (std::bit_cast<uint32_t>(old_value) != std::bit_cast<uint32_t>(new_value)) {
      Store(shared + i, new_value);
    }
    out[i] = new_value;
    if (num_slots >= 1) kSharedState ? Store(s0 + i, a) : void(s0[i] = a);
    if (num_slots >= 2) kSharedState ? Store(s1 + i, b) : void(s1[i] = b);
  }
}

}  // namespace

void OptimizerUpdate(const OptimizerFn& fn, int num_slots, absl::Span<const float> grad,
                     absl::Span<float> s0, absl::Span<float> s1, absl::Span<float> params) {
  CheckSizes("OptimizerUpdate: sizes differ", num_slots, params.size(), grad, s0, s1);
  float unused0 = 0.0f;
  float unused1 = 0.0f;
  for (size_t i = 0; i < params.size(); ++i) {
    params[i] =
        fn(params[i], grad[i], num_slots >= 1 ? s0[i] : unused0, num_slots >= 2 ? s1[i] : unused1);
  }
}

void SharedOptimizerUpdateAndRead(const OptimizerFn& fn, int num_slots,
                                  absl::Span<const float> grad, absl::Span<float> s0,
                                  absl::Span<float> s1, bool shared_state, float* shared,
                                  absl::Span<float> out) {
  CheckSizes("SharedOptimizerUpdateAndRead: sizes differ", num_slots, out.size(), grad, s0, s1);
  const int64_t n = static_cast<int64_t>(out.size());
  if (shared_state) {
    SharedLoop<true>(fn, num_slots, n, grad.data(), s0.data(), s1.data(), shared, out.data());
  } else {
    SharedLoop<false>(fn, num_slots, n, grad.data(), s0.data(), s1.data(), shared, out.data());
  }
}

}  // namespace hogwild::cpu
