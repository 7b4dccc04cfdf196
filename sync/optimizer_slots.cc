#include "sync/optimizer_slots.h"

#include "kernels/cpu/optimizer_update.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"
#include "sync/moving_stats.h"

namespace hogwild {

OptimizerSlots::OptimizerSlots(const SgdOptions& options, int64_t num_params) {
  const int slots = NumStateSlots(options.optimizer_params());
  if (slots >= 1) s0.assign(static_cast<size_t>(num_params), 0.0f);
  if (slots >= 2) s1.assign(static_cast<size_t>(num_params), 0.0f);
}

namespace {

void ApplyPiece(const SgdOptions& options, float weight_decay, float lr, uint64_t step,
                absl::Span<const float> grad, OptimizerSlots& slots, int64_t lo,
                absl::Span<float> params) {
  const size_t n = params.size();
  const absl::Span<float> s0 =
      slots.s0.empty() ? absl::Span<float>() : absl::MakeSpan(slots.s0.data() + lo, n);
  const absl::Span<float> s1 =
      slots.s1.empty() ? absl::Span<float>() : absl::MakeSpan(slots.s1.data() + lo, n);
  if (options.is_sgd_momentum()) {
    cpu::SgdUpdate(SgdMomentumFn{lr, options.momentum, weight_decay}, grad, s0, params);
    return;
  }
  OptimizerParams p = options.optimizer_params();
  p.weight_decay = weight_decay;
  cpu::OptimizerUpdate(MakeOptimizerFn(p, lr, step), slots.num_slots(), grad, s0, s1, params);
}

}  // namespace

void ApplyOptimizerRange(const SgdOptions& options, float lr, uint64_t step,
                         absl::Span<const float> grad, OptimizerSlots& slots, int64_t lo,
                         absl::Span<float> params) {
  ForEachUpdatePiece(
      options, lo, static_cast<int64_t>(params.size()),
      [&](int64_t begin, int64_t count, bool decays) {
        const size_t at = static_cast<size_t>(begin - lo);
        ApplyPiece(options, decays ? options.weight_decay : 0.0f, lr, step, grad.subspan(at, count),
                   slots, begin, params.subspan(at, count));
      },
      [&](int64_t begin, int64_t count) {
        const size_t at = static_cast<size_t>(begin - lo);
        cpu::SgdUpdate(MovingStatsFn(options.moving_stats_momentum), grad.subspan(at, count),
                       absl::Span<float>(), params.subspan(at, count));
      });
}

void ApplyOwnGradient(const SgdOptions& options, float lr, absl::Span<const float> grad,
                      OptimizerSlots& slots, std::vector<float>& clipped,
                      absl::Span<float> params) {
  if (const float scale = TrainedClipScale(options, 0, grad); scale != 1.0f) {
    clipped.resize(grad.size());
    ScaleTrained(options, 0, scale, grad, absl::MakeSpan(clipped));
    grad = absl::MakeConstSpan(clipped);
  }
  ApplyOptimizerRange(options, lr, ++slots.step, grad, slots, 0, params);
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
