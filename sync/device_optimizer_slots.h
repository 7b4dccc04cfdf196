// One owner's optimizer state on a GPU (the device twin of sync/optimizer_slots.h: a Hogwild
// worker's own state, or one replica's copy of the sync state) and the update of a device range
// through the optimizer kernels, for the GPU policies (sync/device_hogwild.h,
// sync/nccl_tower_average.h).
//
// The update follows ApplyOptimizerRange piece by piece (ForEachUpdatePiece): the SGD family
// launches the SgdMomentumFn kernel (kernels/cuda/sgd_update.h, bitwise what the GPU policies ran
// before the other optimizers existed), the others the OptimizerFn kernel
// (kernels/cuda/optimizer_update.h); parameters in SgdOptions::no_decay get weight decay 0 and
// those in SgdOptions::moving_stats the moving average of sync/moving_stats.h. With neither
// (the default), the whole range is one launch.
//
// Thread-safety: none; an owner's slots belong to the thread that launches its updates.
#ifndef HOGWILD_SYNC_DEVICE_OPTIMIZER_SLOTS_H_
#define HOGWILD_SYNC_DEVICE_OPTIMIZER_SLOTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cuda/device_buffer.h"
#include "sync/update_policy.h"

struct CUstream_st;

namespace hogwild {

struct DeviceOptimizerSlots {
  DeviceBuffer s0;    // [P] float32 on the owner's GPU when NumStateSlots >= 1, else empty
  DeviceBuffer s1;    // [P] float32 on the owner's GPU when NumStateSlots == 2, else empty
  uint64_t step = 0;  // updates applied with this state (Adam's t)
  int count = 0;      // NumStateSlots: the buffers above in use (allocated unless P == 0)

  int num_slots() const { return count; }
};

// NumStateSlots(options' optimizer) zeroed [num_params] buffers on the calling thread's current
// device (cudaMalloc, cudaMemset, then cudaDeviceSynchronize so streams of that device see the
// zeros), step 0. num_params == 0 allocates nothing.
// Errors: kResourceExhausted when a buffer does not fit; other CUDA errors converted.
absl::StatusOr<DeviceOptimizerSlots> AllocateDeviceOptimizerSlots(const SgdOptions& options,
                                                                  int64_t num_params);

// Copies host buffers[first, first + slots.num_slots()) (each [P] float32; sizes checked by the
// caller, UpdatePolicy::RestoreState) into the slots, then waits for the device (so the copies
// are complete for every stream); the calling thread's
// current device must be the slots' device. Errors: CUDA errors converted.
absl::Status UploadDeviceOptimizerSlots(const std::vector<std::vector<float>>& buffers,
                                        size_t first, DeviceOptimizerSlots& slots);

// Appends the slots' num_slots() buffers ([num_params] float32 each, host memory) to `buffers`
// with blocking copies (legacy default stream; the caller waits for the owner's updates first);
// the calling thread's current device must be the slots' device. Errors: CUDA errors converted.
absl::Status AppendDeviceSlotBuffers(const DeviceOptimizerSlots& slots, int64_t num_params,
                                     std::vector<std::vector<float>>* buffers);

// Enqueues on `stream` the update of params ([num_params] float32, device memory reachable from
// the stream's GPU: its own, a peer's or pinned host memory) from grad ([num_params], device)
// with learning rate `lr` at step `step` (>= 1; read by adam and adamw only), reading and writing
// the slots' elements. Each element is read and written by one thread with plain 32-bit accesses
// (the Hogwild contract of sync/device_hogwild.h). Returns before the device runs it.
// Errors: the launch error, converted.
absl::Status LaunchDeviceOptimizerUpdate(CUstream_st* stream, const SgdOptions& options, float lr,
                                         uint64_t step, int64_t num_params, const float* grad,
                                         DeviceOptimizerSlots& slots, float* params);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_DEVICE_OPTIMIZER_SLOTS_H_
