#include "sync/device_optimizer_slots.h"

#include <cuda_runtime_api.h>

#include "core/status_macros.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/optimizer_update.h"
#include "kernels/cuda/sgd_update.h"
#include "kernels/optimizer.h"
#include "sync/moving_stats.h"
#include "sync/optimizer_slots.h"

namespace hogwild {
namespace {

absl::StatusOr<DeviceBuffer> ZeroedBuffer(int64_t num_params) {
  const size_t bytes = static_cast<size_t>(num_params) * sizeof(float);
  HOGWILD_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(bytes));
  if (bytes > 0) {
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemset(buffer.data(), 0, bytes));
    // cudaMemset may return before the device ran it, and the updates run on non-blocking
    // streams, which do not wait for the legacy default stream.
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  }
  return buffer;
}

float* At(const DeviceBuffer& buffer, int64_t begin) {
  return buffer.data() == nullptr ? nullptr : buffer.as<float>() + begin;
}

}  // namespace

absl::StatusOr<DeviceOptimizerSlots> AllocateDeviceOptimizerSlots(const SgdOptions& options,
                                                                  int64_t num_params) {
  DeviceOptimizerSlots slots;
  const int count = NumStateSlots(options.optimizer_params());
  slots.count = count;
  if (count >= 1) {
    HOGWILD_ASSIGN_OR_RETURN(slots.s0, ZeroedBuffer(num_params));
  }
  if (count >= 2) {
    HOGWILD_ASSIGN_OR_RETURN(slots.s1, ZeroedBuffer(num_params));
  }
  return slots;
}

absl::Status UploadDeviceOptimizerSlots(const std::vector<std::vector<float>>& buffers,
                                        size_t first, DeviceOptimizerSlots& slots) {
  for (int k = 0; k < slots.num_slots(); ++k) {
    DeviceBuffer* slot = k == 0 ? &slots.s0 : &slots.s1;
    const std::vector<float>& host = buffers[first + static_cast<size_t>(k)];
    if (host.empty()) continue;
    HOGWILD_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(slot->data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  // A copy from pageable memory may return before the device has the data (see above).
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return absl::OkStatus();
}

absl::Status AppendDeviceSlotBuffers(const DeviceOptimizerSlots& slots, int64_t num_params,
                                     std::vector<std::vector<float>>* buffers) {
  for (int k = 0; k < slots.num_slots(); ++k) {
    const DeviceBuffer* slot = k == 0 ? &slots.s0 : &slots.s1;
    buffers->emplace_back(static_cast<size_t>(num_params));
    if (num_params == 0) continue;
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(buffers->back().data(), slot->data(),
                                            buffers->back().size() * sizeof(float),
                                            cudaMemcpyDeviceToHost));
  }
  return absl::OkStatus();
}

absl::Status LaunchDeviceOptimizerUpdate(CUstream_st* stream, const SgdOptions& options, float lr,
                                         uint64_t step, int64_t num_params, const float* grad,
                                         DeviceOptimizerSlots& slots, float* params) {
  absl::Status status;
  const auto trained = [&](int64_t begin, int64_t count, bool decays) {
    if (!status.ok()) return;
    const float weight_decay = decays ? options.weight_decay : 0.0f;
    if (options.is_sgd_momentum()) {
      status =
          HOGWILD_CUDA_STATUS(LaunchSgdUpdate(stream, count, lr, options.momentum, weight_decay,
                                              grad + begin, At(slots.s0, begin), params + begin));
      return;
    }
    OptimizerParams p = options.optimizer_params();
    p.weight_decay = weight_decay;
    status = HOGWILD_CUDA_STATUS(LaunchOptimizerUpdate(
        stream, count, MakeOptimizerFn(p, lr, step), slots.num_slots(), grad + begin,
        At(slots.s0, begin), At(slots.s1, begin), params + begin));
  };
  // Moving statistics (batch norm): the SgdMomentumFn form of sync/moving_stats.h, no state.
  const auto stats = [&](int64_t begin, int64_t count) {
    if (!status.ok()) return;
    const SgdMomentumFn fn = MovingStatsFn(options.moving_stats_momentum);
    status = HOGWILD_CUDA_STATUS(LaunchSgdUpdate(stream, count, fn.lr, fn.momentum, fn.weight_decay,
                                                 grad + begin, nullptr, params + begin));
  };
  ForEachUpdatePiece(options, 0, num_params, trained, stats);
  return status;
}

}  // namespace hogwild
