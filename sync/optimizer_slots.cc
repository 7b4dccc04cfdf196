#include "sync/optimizer_slots.h"

#include "kernels/cpu/optimizer_update.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"

namespace hogwild {

OptimizerSlots::OptimizerSlots(const SgdOptions& options, int64_t num_params) {
  const int slots = NumStateSlots(options.optimizer_params());
  if (slots >= 1) s0.assign(static_cast<size_t>(num_params), 0.0f);
  if (slots >= 2) s1.assign(static_cast<size_t>(num_params), 0.0f);
}

void ApplyOptimizerRange(const SgdOptions& options, float lr, uint64_t step,
                         absl::Span<const float> grad, OptimizerSlots& slots, int64_t lo,
                         absl::Span<float> params) {
  const size_t n = params.size();
  const absl::Span<float> s0 =
      slots.s0.empty() ? absl::Span<float>() : absl::MakeSpan(slots.s0.data() + lo, n);
  const absl::Span<float> s1 =
      slots.s1.empty() ? absl::Span<float>() : absl::MakeSpan(slots.s1.data() + lo, n);
  if (options.is_sgd_momentum()) {
    cpu::SgdUpdate(SgdMomentumFn{lr, options.momentum, options.weight_decay}, grad, s0, params);
    return;
  }
  cpu::OptimizerUpdate(MakeOptimizerFn(options.optimizer_params(), lr, step), slots.num_slots(),
                       grad, s0, s1, params);
}

void AppendSlotBuffers(const OptimizerSlots& slots, std::vector<std::vector<float>>* buffers) {
  if (!slots.s0.empty()) buffers->push_back(slots.s0);
  if (!slots.s1.empty()) buffers->push_back(slots.s1);
}

void RestoreSlots(const std::vector<std::vector<float>>& buffers, size_t first,
                  const std::vector<uint64_t>& steps, size_t owner, OptimizerSlots& slots) {
  size_t b = first;
  if (!slots.s0.empty()) slots.s0 = buffers[b++];
  if (!slots.s1.empty()) slots.s1 = buffers[b++];
  if (owner < steps.size()) slots.step = steps[owner];
}

}  // namespace hogwild
