#include "sync/device_hogwild.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/devices.h"
#include "kernels/cuda/scoped_device.h"
#include "kernels/optimizer.h"

namespace hogwild {
DeviceHogwild::DeviceHogwild(ParameterStore* store, SgdOptions options,
                             std::vector<int> worker_devices)
    : UpdatePolicy(Mode::kAsync, store, static_cast<int>(worker_devices.size()), options),
      workers_(worker_devices.size()) {
  for (size_t w = 0; w < worker_devices.size(); ++w) workers_[w].device = worker_devices[w];
}

absl::StatusOr<std::unique_ptr<DeviceHogwild>> DeviceHogwild::Create(
    ParameterStore* store, std::vector<int> worker_devices, SgdOptions options,
    bool force_pinned_host) {
  if (worker_devices.empty()) {
    return absl::InvalidArgumentError("DeviceHogwild: no workers (empty device list)");
  }
  HOGWILD_ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  for (int d : worker_devices) {
    if (d < 0 || d >= count) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "DeviceHogwild: GPU %d does not exist; this process sees %d CUDA device(s)", d, count));
    }
  }
  std::unique_ptr<DeviceHogwild> policy(new DeviceHogwild(store, options, worker_devices));
  policy->master_device_ = worker_devices[0];
  const std::set<int> distinct(worker_devices.begin(), worker_devices.end());
  bool all_peers = true;
  for (int d : distinct) {
    if (d == policy->master_device_) continue;
    int can_access = 0;
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&can_access, d, policy->master_device_));
    all_peers = all_peers && can_access != 0;
  }
  policy->placement_ =
      all_peers && !force_pinned_host ? Placement::kDevice : Placement::kPinnedHost;

  const size_t bytes = static_cast<size_t>(store->size()) * sizeof(float);
  const float* initial = store->unsafe_values().data();
  if (policy->placement_ == Placement::kDevice) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(policy->master_device_));
    HOGWILD_ASSIGN_OR_RETURN(policy->master_on_device_, DeviceBuffer::Allocate(bytes));
    policy->master_ = policy->master_on_device_.as<float>();
    if (bytes > 0) {
      HOGWILD_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(policy->master_, initial, bytes, cudaMemcpyHostToDevice));
    }
  } else {
    // Pinned (page-locked) memory is mapped into every device's address space under unified
    // addressing, so kernels on any GPU read and write it through the host pointer.
    HOGWILD_ASSIGN_OR_RETURN(policy->master_on_host_, PinnedHostBuffer::Allocate(bytes));
    policy->master_ = policy->master_on_host_.as<float>();
    if (bytes > 0) std::memcpy(policy->master_, initial, bytes);
  }
  return policy;
}

DeviceHogwild::~DeviceHogwild() {
  // cudaFree under the owning device: the buffers of each GPU are released with it current.
  for (PerWorker& w : workers_) {
    if (w.snapshot.data() == nullptr && w.slots.s0.data() == nullptr) continue;
    absl::StatusOr<ScopedDevice> on = ScopedDevice::Enter(w.device);
    if (!on.ok()) LogIfError("DeviceHogwild", on.status());
    w.snapshot.Reset();
    w.slots.s0.Reset();
    w.slots.s1.Reset();
  }
  if (master_on_device_.data() != nullptr) {
    absl::StatusOr<ScopedDevice> on = ScopedDevice::Enter(master_device_);
    if (!on.ok()) LogIfError("DeviceHogwild", on.status());
    master_on_device_.Reset();
  }
}

absl::Status DeviceHogwild::DoAttachWorker(int worker, Backend* backend) {
  PerWorker& w = workers_[worker];
  auto* cuda = dynamic_cast<CudaBackend*>(backend);
  if (cuda == nullptr || cuda->device() != w.device) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DeviceHogwild: worker %d must run on a CUDA backend of GPU %d, got %s",
                        worker, w.device, backend == nullptr ? "none" : backend->name()));
  }
  if (placement_ == Placement::kDevice && w.device != master_device_) {
    // Peer access is per (device, peer) pair and process-wide: the first worker of each GPU
    // enables it, the others find it enabled.
    const cudaError_t result = cudaDeviceEnablePeerAccess(master_device_, 0);
    if (result == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();  // not sticky; clear it so later checks do not see it
    } else {
      HOGWILD_CUDA_RETURN_IF_ERROR(result);
    }
  }
  const size_t bytes = static_cast<size_t>(store()->size()) * sizeof(float);
  HOGWILD_ASSIGN_OR_RETURN(w.snapshot, DeviceBuffer::Allocate(bytes));
  // The worker's own optimizer state on its GPU: zeros, or the restored buffers; the step count
  // (set by a restore, or 0) is kept.
  const uint64_t step = w.slots.step;
  HOGWILD_ASSIGN_OR_RETURN(w.slots, AllocateDeviceOptimizerSlots(sgd_options(), num_params()));
  w.slots.step = step;
  if (!w.restored_slots.empty()) {
    HOGWILD_RETURN_IF_ERROR(UploadDeviceOptimizerSlots(w.restored_slots, 0, w.slots));
  }
  w.restored_slots = {};
  w.backend = cuda;
  return absl::OkStatus();
}

absl::Status DeviceHogwild::DoReadParams(absl::Span<float> out) const {
  const size_t bytes = out.size() * sizeof(float);
  if (bytes == 0) return absl::OkStatus();
  if (placement_ == Placement::kPinnedHost) {
    // Device kernels may be writing concurrently; each 32-bit element arrives whole (see the
    // contract in the header), and the copy may mix old and new elements like any Hogwild read.
    std::memcpy(out.data(), master_, bytes);
    return absl::OkStatus();
  }
  // A blocking copy on the legacy default stream: the workers' streams are non-blocking, so it
  // neither waits for nor delays their work (a Hogwild snapshot, as on the host).
  HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(master_device_));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(out.data(), master_, bytes, cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> DeviceHogwild::DoBeginStep(int worker) {
  PerWorker& w = workers_[worker];
  if (w.backend == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("DeviceHogwild::BeginStep: worker %d did not call AttachWorker", worker));
  }
  w.read_version = store()->version();
  const size_t bytes = static_cast<size_t>(store()->size()) * sizeof(float);
  if (bytes > 0) {
    // cudaMemcpyDefault: unified addressing tells a same-GPU, peer or host-mapped source apart.
    HOGWILD_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(w.snapshot.data(), master_, bytes, cudaMemcpyDefault, w.backend->stream()));
  }
  return DeviceSpan<const float>(w.snapshot.as<const float>(), num_params());
}

absl::StatusOr<StepStats> DeviceHogwild::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                      float lr) {
  PerWorker& w = workers_[worker];
  const StepStats stats =
      AsyncStepStats(store()->version(), w.read_version, lr, sgd_options(), num_workers());
  // Per-worker state: the step is this worker's count, like the CPU policy's.
  HOGWILD_RETURN_IF_ERROR(
      LaunchDeviceOptimizerUpdate(w.backend->stream(), sgd_options(), stats.applied_lr,
                                  ++w.slots.step, store()->size(), grad.data(), w.slots, master_));
  store()->CompleteUpdate();
  return stats;
}

int DeviceHogwild::num_optimizer_buffers() const {
  return num_workers() * NumStateSlots(sgd_options().optimizer_params());
}

int DeviceHogwild::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? num_workers() : 0;
}

absl::Status DeviceHogwild::DoWaitForUpdates() const {
  const std::set<int> devices = [&] {
    std::set<int> d;
    for (const PerWorker& w : workers_) d.insert(w.device);
    return d;
  }();
  for (int device : devices) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(device));
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> DeviceHogwild::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  const size_t slots = static_cast<size_t>(NumStateSlots(sgd_options().optimizer_params()));
  if (slots == 0) return buffers;
  for (const PerWorker& w : workers_) {
    if (w.backend == nullptr) {
      // Not attached (yet): the restored state, or the zeros it would start from.
      for (size_t k = 0; k < slots; ++k) {
        buffers.push_back(w.restored_slots.empty()
                              ? std::vector<float>(static_cast<size_t>(num_params()), 0.0f)
                              : w.restored_slots[k]);
      }
      continue;
    }
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(w.device));
    HOGWILD_RETURN_IF_ERROR(AppendDeviceSlotBuffers(w.slots, num_params(), &buffers));
  }
  return buffers;
}

absl::Status DeviceHogwild::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& buffers) {
  // Before the workers start (UpdatePolicy::RestoreState's contract): the device buffers do not
  // exist yet; AttachWorker uploads these.
  const size_t slots = static_cast<size_t>(NumStateSlots(sgd_options().optimizer_params()));
  if (slots == 0) return absl::OkStatus();
  for (size_t w = 0; w < workers_.size() && (w + 1) * slots <= buffers.size(); ++w) {
    workers_[w].restored_slots.assign(buffers.begin() + static_cast<ptrdiff_t>(w * slots),
                                      buffers.begin() + static_cast<ptrdiff_t>((w + 1) * slots));
  }
  return absl::OkStatus();
}

std::vector<uint64_t> DeviceHogwild::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  std::vector<uint64_t> steps;
  for (const PerWorker& w : workers_) steps.push_back(w.slots.step);
  return steps;
}

void DeviceHogwild::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  for (size_t w = 0; w < workers_.size() && w < steps.size(); ++w)
    workers_[w].slots.step = steps[w];
}

absl::Status DeviceHogwild::DoRestoreParams() {
  const size_t bytes = static_cast<size_t>(num_params()) * sizeof(float);
  if (bytes == 0) return absl::OkStatus();
  const float* restored = store()->unsafe_values().data();
  if (placement_ == Placement::kPinnedHost) {
    std::memcpy(master_, restored, bytes);
    return absl::OkStatus();
  }
  HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(master_device_));
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(master_, restored, bytes, cudaMemcpyHostToDevice));
  return absl::OkStatus();
}

}  // namespace hogwild
