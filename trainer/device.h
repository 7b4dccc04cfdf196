// Which devices the workers run on: parsing of --devices, the default choice, and the factory
// that creates a worker's Backend on the worker's own thread. GPUs are reached through the
// registered GPU runtime (trainer/gpu_runtime.h); in a program without one (not linked with
// //trainer:gpu, e.g. a CPU-only build) the default is cpu and GPUs are kFailedPrecondition.
//
//   --devices=cpu        CPU workers (their number is --workers, one per core by default)
//   --devices=gpu        every visible GPU
//   --devices=gpu:0,2    the listed GPUs
//   --devices= (empty)   every GPU if there is one, else cpu
// With GPUs, --workers_per_device workers share each GPU (one stream and cuBLAS handle each).
//
// Thread-safety: all functions are thread-safe.
#ifndef HOGWILD_TRAINER_DEVICE_H_
#define HOGWILD_TRAINER_DEVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "trainer/data/batch_feed.h"
#include "trainer/data/input_pipeline.h"

namespace hogwild {

struct DeviceSpec {
  enum class Kind { kCpu, kGpu };
  Kind kind = Kind::kCpu;
  int index = 0;  // the CUDA device ordinal for kGpu; 0 for kCpu

  static DeviceSpec Cpu() { return DeviceSpec{}; }
  static DeviceSpec Gpu(int index) { return DeviceSpec{Kind::kGpu, index}; }
  bool is_gpu() const { return kind == Kind::kGpu; }
  // "cpu" or "gpu:<index>".
  std::string ToString() const;
  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

// Reports how many GPUs this process sees, or why there are none (GpuRuntime::DeviceCount's
// contract). Injectable so parsing is tested without GPUs.
using GpuCounter = std::function<absl::StatusOr<int>()>;

// Parses a --devices value (see the file comment) against the GPUs `count_gpus` reports.
// Returns {cpu} or one entry per selected GPU, in the order given.
// Errors (kInvalidArgument, the message names the flag, the value and what is allowed): an
// unknown device kind, an empty, non-numeric, negative or duplicate GPU index; an index not
// below the number of GPUs (the message gives that number). kFailedPrecondition when GPUs are
// asked for explicitly and there are none, with the reason and the hint --devices=cpu.
absl::StatusOr<std::vector<DeviceSpec>> ParseDevices(const std::string& value,
                                                     const GpuCounter& count_gpus);

// ParseDevices with the real GPU count: the GPU runtime's DeviceCount(), or, without a GPU
// runtime, GpuRuntimeOrError's "built without CUDA" status as the reason there are none.
absl::StatusOr<std::vector<DeviceSpec>> ResolveDevices(const std::string& value);

// "cpu", or "gpu:0,1" (the --devices spelling of the list).
std::string DevicesToString(const std::vector<DeviceSpec>& devices);

// Creates the Backend of one worker on `device`. Call it on the worker's own thread: a GPU
// backend makes its device current on the calling thread (cudaSetDevice) and creates its
// stream and cuBLAS handle there. Errors: GpuRuntimeOrError's for a GPU in a program without
// the GPU runtime; CudaBackend::Create's.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const DeviceSpec& device);

// Creates worker `worker`'s batch feed for a backend made by CreateBackend(device), on the same
// thread: HostBatchFeed on the CPU, the GPU runtime's CudaBatchFeed (pinned staging,
// double-buffered copies of batches of up to max_batch x features floats) on a GPU. `pipeline`
// must outlive the feed. Errors: as CreateBackend's, and GpuRuntime::CreateBatchFeed's.
absl::StatusOr<std::unique_ptr<BatchFeed>> CreateBatchFeed(const DeviceSpec& device,
                                                           Backend* backend,
                                                           InputPipeline* pipeline, int worker,
                                                           int64_t max_batch, int64_t features);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DEVICE_H_
