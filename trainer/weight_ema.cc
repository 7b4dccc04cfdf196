#include "trainer/weight_ema.h"

#include <atomic>

#include "core/logging.h"

namespace hogwild {

WeightEma::WeightEma(absl::Span<const float> initial, float decay, bool num_updates_warmup)
    : decay_(decay),
      num_updates_warmup_(num_updates_warmup),
      shadow_(initial.begin(), initial.end()) {}

float WeightEma::DecayAt(float decay, bool num_updates_warmup, uint64_t num_updates) {
  if (!num_updates_warmup) return decay;
  const double n = static_cast<double>(num_updates);
  const float warm = static_cast<float>((1.0 + n) / (10.0 + n));
  return warm < decay ? warm : decay;
}

void WeightEma::Update(absl::Span<const float> params, uint64_t num_updates) {
  HOGWILD_CHECK(params.size() == shadow_.size(), "WeightEma::Update: size");
  const float rate = 1.0f - DecayAt(decay_, num_updates_warmup_, num_updates);
  for (size_t i = 0; i < shadow_.size(); ++i) {
    std::atomic_ref<float> s(shadow_[i]);
    const float old_value = s.load(std::memory_order_relaxed);
    s.store(old_value - rate * (old_value - params[i]), std::memory_order_relaxed);
  }
}

void WeightEma::Read(absl::Span<float> out) const {
  HOGWILD_CHECK(out.size() == shadow_.size(), "WeightEma::Read: size");
  for (size_t i = 0; i < shadow_.size(); ++i) {
    out[i] = std::atomic_ref<float>(shadow_[i]).load(std::memory_order_relaxed);
  }
}

}  // namespace hogwild
