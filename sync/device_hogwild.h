// The asynchronous update policy for GPU workers: Hogwild! (Niu et al., NIPS 2011) with the
// shared parameters in GPU-reachable memory and every worker's update kernel writing them in
// place, with no lock and no barrier.
//
// Placement (DESIGN.md, "Where the parameters live"):
// - every worker on one GPU (k workers, one stream each): the master array lives on that GPU;
// - workers on several GPUs: one master array on the first worker's GPU (normally GPU 0) when
//   every other GPU has peer access to it (cudaDeviceCanAccessPeer; peer access is enabled by
//   each worker in AttachWorker), else in pinned host memory, which every GPU reaches over PCIe
//   through unified addressing (the host pointer is the device pointer).
// Each step, worker w:
//   BeginStep:  enqueues a copy master -> its private snapshot ([P], its own GPU) on its stream
//               ("pull"), and records the version counter;
//   FinishStep: enqueues the optimizer's update of master[i] from grad[i] and the worker's state
//               for every i on its stream (sync/device_optimizer_slots.h: SgdMomentumFn for sgd
//               and momentum, OptimizerFn for the others; the "push": a kernel on the worker's
//               GPU reading and writing the master through a peer or host-mapped pointer), then
//               advances the version counter.
// Both return before the device has run the work; the worker's later ops on the same stream
// are ordered after it. The optimizer state (momentum, Adam's moments, RMSprop's and Adagrad's
// accumulators; NumStateSlots buffers) and its step count (Adam's t: this worker's updates) are
// private to the worker, its state on its GPU (PyTorch's Hogwild example: each process its own
// optimizer). Shared optimizer state (--optimizer_state=shared) is CPU-only for now.
// Weight decay skips SgdOptions::no_decay, and SgdOptions::moving_stats get the moving average
// of sync/moving_stats.h, as on the CPU policies. Not yet executed on a GPU for the optimizers
// other than sgd and momentum (tests/gpu_policy_optimizer_test.cc is written, gpu-tagged).
//
// The Hogwild contract on the device (compare sync/parameter_store.h for the host):
// - Lost updates are allowed: the update kernel reads an element and writes it back with plain
//   32-bit loads and stores; another worker's kernel (another stream, maybe another GPU)
//   updating the same element in between loses one of the two updates.
// - Torn values are impossible in practice: each element is an aligned 32-bit float written by
//   one thread with one 32-bit store, which the GPU's memory system (and PCIe / NVLink for a
//   master in host memory or on a peer) performs as a single transaction. Unlike on the host,
//   this rests on that hardware property, not on a language-level atomic: the accesses are
//   plain (weak) accesses in the PTX memory model, and the racing reads (the snapshot copy,
//   ReadParams) may see any mix of old and new elements.
// - Unlike the host store, the kernel writes every element back even when its value does not
//   change, so a worker with a zero gradient for an element can still overwrite a concurrent
//   update of it (DESIGN.md invariant 4 holds on the host only).
// - Staleness counts updates *enqueued* by other workers between this worker's BeginStep and
//   FinishStep (host-side version counter of the store); kernels may complete later.
// With one worker the result is sequential minibatch SGD, equal to the CPU run up to the
// difference in float rounding between the backends (cuBLAS GEMM summation order, FMA).
//
// Thread-safety: worker w's calls come from its own thread, after AttachWorker(w, ...) on it.
// ReadParams() and Cancel() from any thread.
#ifndef HOGWILD_SYNC_DEVICE_HOGWILD_H_
#define HOGWILD_SYNC_DEVICE_HOGWILD_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_buffer.h"
#include "sync/device_optimizer_slots.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class DeviceHogwild final : public UpdatePolicy {
 public:
  enum class Placement { kDevice, kPinnedHost };

  // `store` holds the initial parameters (copied to the master here) and counts the updates;
  // it must outlive this object. worker_devices[w] is the CUDA device of worker w (W >= 1
  // entries, repeats allowed: several workers per GPU). force_pinned_host puts the master in
  // pinned host memory even when a GPU could hold it (for tests of that path on one GPU).
  // Errors: kInvalidArgument for an empty or negative device list; kFailedPrecondition without
  // a usable GPU; kResourceExhausted (bytes asked and free) when the master does not fit.
  static absl::StatusOr<std::unique_ptr<DeviceHogwild>> Create(ParameterStore* store,
                                                               std::vector<int> worker_devices,
                                                               SgdOptions options,
                                                               bool force_pinned_host = false);
  ~DeviceHogwild() override;

  Placement placement() const { return placement_; }
  // The GPU holding the master, or -1 when it is in pinned host memory.
  int master_device() const { return placement_ == Placement::kDevice ? master_device_ : -1; }
  // W * NumStateSlots(optimizer) (each worker's own buffers, on its GPU).
  int num_optimizer_buffers() const override;
  // W with adam and adamw (each worker's update count), else 0.
  int num_optimizer_steps() const override;

 private:
  // `backend` must be a CudaBackend on worker_devices[worker]; allocates the worker's snapshot
  // and optimizer state on it (zeros, or the restored state) and enables peer access to the
  // master's GPU where needed.
  absl::Status DoAttachWorker(int worker, Backend* backend) override;
  absl::Status DoReadParams(absl::Span<float> out) const override;
  absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) override;
  absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                         float lr) override;
  // Sparse gradients are for CPU workers.
  const char* DenseOnly() const override { return "DeviceHogwild (async on GPU workers)"; }
  // cudaDeviceSynchronize on every worker's GPU: their update kernels have landed.
  absl::Status DoWaitForUpdates() const override;
  // Worker-major, NumStateSlots buffers each. A worker that has not attached yet has no device
  // buffer: its state is the restored one (or zeros), kept on the host until it attaches.
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& buffers) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;
  // Copies the store's parameters to the master.
  absl::Status DoRestoreParams() override;

  struct PerWorker {
    int device = 0;
    CudaBackend* backend = nullptr;  // set by AttachWorker
    DeviceBuffer snapshot;           // [P] on `device`
    DeviceOptimizerSlots slots;      // on `device` once attached; its step counts from the start
    uint64_t read_version = 0;
    std::vector<std::vector<float>> restored_slots;  // [slots][P] until AttachWorker uploads it
  };

  DeviceHogwild(ParameterStore* store, SgdOptions options, std::vector<int> worker_devices);

  Placement placement_ = Placement::kDevice;
  int master_device_ = 0;
  DeviceBuffer master_on_device_;    // [P] when placement_ == kDevice
  PinnedHostBuffer master_on_host_;  // [P] when placement_ == kPinnedHost
  float* master_ = nullptr;          // one of the two above (a device pointer in both cases)
  std::vector<PerWorker> workers_;
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_DEVICE_HOGWILD_H_
