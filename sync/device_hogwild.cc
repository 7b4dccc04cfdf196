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
#include "kernels/cuda/sgd_update.h"

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
    if (w.snapshot.data() == nullptr && w.velocity.data() == nullptr) continue;
    absl::StatusOr<ScopedDevice> on = ScopedDevice::Enter(w.device);
    if (!on.ok()) LogIfError("DeviceHogwild", on.status());
    w.snapshot.Reset();
    w.velocity.Reset();
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
    return absl::InvalidArgumentError(absl::StrFormat(
        "DeviceHogwild: worker %d must run on a CUDA backend of GPU %d, got %s", worker, w.device,
        backend == nullptr ? "none" : backend->name()));
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
  if (sgd_options().momentum != 0.0f) {
    HOGWILD_ASSIGN_OR_RETURN(w.velocity, DeviceBuffer::Allocate(bytes));
    if (w.restored_momentum.empty()) {
      HOGWILD_RETURN_IF_ERROR(cuda->Fill(num_params(), 0.0f, w.velocity.as<float>()));
    } else if (bytes > 0) {
      HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(w.velocity.data(), w.restored_momentum.data(),
                                              bytes, cudaMemcpyHostToDevice));
    }
    w.restored_momentum = {};
  }
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
    return absl::FailedPreconditionError(absl::StrFormat(
        "DeviceHogwild::BeginStep: worker %d did not call AttachWorker", worker));
  }
  w.read_version = store()->version();
  const size_t bytes = static_cast<size_t>(store()->size()) * sizeof(float);
  if (bytes > 0) {
    // cudaMemcpyDefault: unified addressing tells a same-GPU, peer or host-mapped source apart.
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(w.snapshot.data(), master_, bytes,
                                                 cudaMemcpyDefault, w.backend->stream()));
  }
  return DeviceSpan<const float>(w.snapshot.as<const float>(), num_params());
}

absl::StatusOr<StepStats> DeviceHogwild::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                      float lr) {
  PerWorker& w = workers_[worker];
  const StepStats stats =
      AsyncStepStats(store()->version(), w.read_version, lr, sgd_options().staleness_aware_lr);
  HOGWILD_CUDA_RETURN_IF_ERROR(LaunchSgdUpdate(
      w.backend->stream(), store()->size(), stats.applied_lr, sgd_options().momentum,
      sgd_options().weight_decay, grad.data(), w.velocity.as<float>(), master_));
  store()->CompleteUpdate();
  return stats;
}

int DeviceHogwild::num_optimizer_buffers() const {
  return sgd_options().momentum != 0.0f ? num_workers() : 0;
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
  std::vector<std::vector<float>> momentum;
  if (num_optimizer_buffers() == 0) return momentum;
  const size_t bytes = static_cast<size_t>(num_params()) * sizeof(float);
  for (const PerWorker& w : workers_) {
    if (w.velocity.data() == nullptr) {
      // Not attached (yet): the restored momentum, or the zeros it would start from.
      momentum.push_back(w.restored_momentum.empty()
                             ? std::vector<float>(static_cast<size_t>(num_params()), 0.0f)
                             : w.restored_momentum);
      continue;
    }
    momentum.emplace_back(static_cast<size_t>(num_params()));
    if (bytes == 0) continue;
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(w.device));
    HOGWILD_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(momentum.back().data(), w.velocity.data(), bytes, cudaMemcpyDeviceToHost));
  }
  return momentum;
}

absl::Status DeviceHogwild::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& momentum) {
  // Before the workers start (UpdatePolicy::RestoreState's contract): the device buffers do not
  // exist yet; AttachWorker uploads these.
  for (size_t w = 0; w < momentum.size(); ++w) workers_[w].restored_momentum = momentum[w];
  return absl::OkStatus();
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
