#include "sync/sliced_update.h"

#include "kernels/optimizer.h"

namespace hogwild {

SlicedUpdate::SlicedUpdate(const SgdOptions& options, int64_t num_params, int num_workers)
    : options_(options),
      num_params_(num_params),
      num_workers_(num_workers),
      slots_(options, num_params),
      partial_squares_(num_workers, 0.0) {}

int SlicedUpdate::num_steps() const { return UsesStepCount(options_.optimizer) ? 1 : 0; }

std::vector<std::vector<float>> SlicedUpdate::SaveBuffers() const {
  std::vector<std::vector<float>> buffers;
  AppendSlotBuffers(slots_, &buffers);
  return buffers;
}

void SlicedUpdate::RestoreBuffers(const std::vector<std::vector<float>>& buffers) {
  RestoreSlots(buffers, 0, {}, 0, slots_);
}

std::vector<uint64_t> SlicedUpdate::SaveSteps() const {
  if (num_steps() == 0) return {};
  return {slots_.step};
}

void SlicedUpdate::RestoreSteps(const std::vector<uint64_t>& steps) {
  if (!steps.empty()) slots_.step = steps[0];
}

}  // namespace hogwild
