#include "sync/nccl_tower_average.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/devices.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/scoped_device.h"
#include "kernels/optimizer.h"

namespace hogwild {
NcclTowerAverage::NcclTowerAverage(ParameterStore* store, SgdOptions options, int num_workers)
    : UpdatePolicy(Mode::kSync, store, num_workers, options),
      barrier_(num_workers),
      worker_gpu_(num_workers, -1),
      backends_(num_workers, nullptr),
      tower_grads_(num_workers, nullptr) {}

absl::StatusOr<std::unique_ptr<NcclTowerAverage>> NcclTowerAverage::Create(
    ParameterStore* store, std::vector<int> worker_devices, SgdOptions options,
    const ProcessGroup* job) {
  if (worker_devices.empty()) {
    return absl::InvalidArgumentError("NcclTowerAverage: no workers (empty device list)");
  }
  HOGWILD_ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  std::unique_ptr<NcclTowerAverage> policy(
      new NcclTowerAverage(store, options, static_cast<int>(worker_devices.size())));
  if (job != nullptr && job->num_ranks > 1) {
    if (job->rank < 0 || job->rank >= job->num_ranks || !job->broadcast_from_rank0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("NcclTowerAverage: bad process group (rank %d of %d%s)", job->rank,
                          job->num_ranks, job->broadcast_from_rank0 ? "" : ", no broadcast"));
    }
    policy->rank_ = job->rank;
    policy->num_ranks_ = job->num_ranks;
  }
  for (size_t w = 0; w < worker_devices.size(); ++w) {
    const int d = worker_devices[w];
    if (d < 0 || d >= count) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "NcclTowerAverage: GPU %d does not exist; this process sees %d CUDA device(s)", d,
          count));
    }
    int g = 0;
    while (g < policy->num_replicas() && policy->gpus_[g].device != d) ++g;
    if (g == policy->num_replicas()) {
      policy->gpus_.emplace_back();
      policy->gpus_.back().device = d;
    }
    policy->gpus_[g].workers.push_back(static_cast<int>(w));
    policy->worker_gpu_[w] = g;
  }

  const size_t bytes = static_cast<size_t>(store->size()) * sizeof(float);
  for (PerGpu& gpu : policy->gpus_) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpu.device));
    cudaStream_t stream = nullptr;
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    gpu.stream = stream;
    HOGWILD_ASSIGN_OR_RETURN(gpu.replica, DeviceBuffer::Allocate(bytes));
    HOGWILD_ASSIGN_OR_RETURN(gpu.sum, DeviceBuffer::Allocate(bytes));
    if (bytes > 0) {
      HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(gpu.replica.data(), store->unsafe_values().data(),
                                              bytes, cudaMemcpyHostToDevice));
    }
    HOGWILD_ASSIGN_OR_RETURN(gpu.slots, AllocateDeviceOptimizerSlots(options, store->size()));
  }
  HOGWILD_RETURN_IF_ERROR(policy->OnRank(policy->InitComms(job)));
  return policy;
}

absl::Status NcclTowerAverage::InitComms(const ProcessGroup* job) {
  const int local = num_replicas();
  if (num_ranks_ == 1) {
    if (local == 1) return absl::OkStatus();
    std::vector<ncclComm_t> comms(local, nullptr);
    std::vector<int> devices;
    for (const PerGpu& gpu : gpus_) devices.push_back(gpu.device);
    HOGWILD_CUDA_RETURN_IF_ERROR(ncclCommInitAll(comms.data(), local, devices.data()));
    for (int g = 0; g < local; ++g) gpus_[g].comm = comms[g];
    return absl::OkStatus();
  }
  // Rank 0's unique id and GPU count reach every rank; NCCL ranks are rank-major, so the job's
  // GPUs are ordered as one process with R·G GPUs would order them.
  struct Handshake {
    ncclUniqueId id;
    int32_t gpus_per_rank;
  } handshake{};
  handshake.gpus_per_rank = local;
  if (rank_ == 0) HOGWILD_CUDA_RETURN_IF_ERROR(ncclGetUniqueId(&handshake.id));
  HOGWILD_RETURN_IF_ERROR(job->broadcast_from_rank0(
      absl::Span<char>(reinterpret_cast<char*>(&handshake), sizeof(handshake))));
  if (handshake.gpus_per_rank != local) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "NcclTowerAverage: rank 0 runs workers on %d GPU(s), this rank on %d; every rank needs "
        "the same number (the same --devices)",
        handshake.gpus_per_rank, local));
  }
  const int total = num_ranks_ * local;
  // One thread initializes several NCCL ranks: NCCL requires the calls grouped, each with its
  // device current.
  HOGWILD_CUDA_RETURN_IF_ERROR(ncclGroupStart());
  absl::Status issued;
  for (int g = 0; g < local && issued.ok(); ++g) {
    absl::StatusOr<ScopedDevice> on = ScopedDevice::Enter(gpus_[g].device);
    if (!on.ok()) {
      issued = on.status();
      break;
    }
    ncclComm_t comm = nullptr;
    issued = HOGWILD_CUDA_STATUS(ncclCommInitRank(&comm, total, handshake.id, rank_ * local + g));
    gpus_[g].comm = comm;
  }
  // The group must be closed even when a call failed, or NCCL stays in group mode.
  const absl::Status closed = HOGWILD_CUDA_STATUS(ncclGroupEnd());
  HOGWILD_RETURN_IF_ERROR(issued);
  return closed;
}

absl::Status NcclTowerAverage::OnRank(absl::Status status) const {
  if (status.ok() || num_ranks_ == 1) return status;
  return absl::Status(status.code(),
                      absl::StrFormat("rank %d of %d: %s", rank_, num_ranks_, status.message()));
}

NcclTowerAverage::~NcclTowerAverage() {
  for (PerGpu& gpu : gpus_) {
    absl::StatusOr<ScopedDevice> on = ScopedDevice::Enter(gpu.device);
    if (!on.ok()) LogIfError("NcclTowerAverage", on.status());
    if (gpu.comm != nullptr)
      LogIfError("NcclTowerAverage", HOGWILD_CUDA_STATUS(ncclCommDestroy(gpu.comm)));
    if (gpu.stream != nullptr) {
      LogIfError("NcclTowerAverage", HOGWILD_CUDA_STATUS(cudaStreamSynchronize(gpu.stream)));
      LogIfError("NcclTowerAverage", HOGWILD_CUDA_STATUS(cudaStreamDestroy(gpu.stream)));
    }
    gpu.replica.Reset();
    gpu.sum.Reset();
    gpu.slots.s0.Reset();
    gpu.slots.s1.Reset();
  }
}

absl::Status NcclTowerAverage::DoAttachWorker(int worker, Backend* backend) {
  const int device = gpus_[worker_gpu_[worker]].device;
  auto* cuda = dynamic_cast<CudaBackend*>(backend);
  if (cuda == nullptr || cuda->device() != device) {
    return absl::InvalidArgumentError(
        absl::StrFormat("NcclTowerAverage: worker %d must run on a CUDA backend of GPU %d, got %s",
                        worker, device, backend == nullptr ? "none" : backend->name()));
  }
  backends_[worker] = cuda;
  return absl::OkStatus();
}

absl::Status NcclTowerAverage::DoReadParams(absl::Span<float> out) const {
  if (out.empty()) return absl::OkStatus();
  HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpus_[0].device));
  // Blocking copy on the legacy default stream; the last update was waited for (step 2d).
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(out.data(), gpus_[0].replica.data(),
                                          out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> NcclTowerAverage::DoBeginStep(int worker) {
  if (backends_[worker] == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "NcclTowerAverage::BeginStep: worker %d did not call AttachWorker", worker));
  }
  const PerGpu& gpu = gpus_[worker_gpu_[worker]];
  return DeviceSpan<const float>(gpu.replica.as<const float>(), num_params());
}

absl::StatusOr<StepStats> NcclTowerAverage::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                         float lr) {
  // The gradient was written on the worker's stream; waiting here (host-side) orders it before
  // the reduction that worker 0 enqueues on other streams after the barrier.
  HOGWILD_RETURN_IF_ERROR(backends_[worker]->Synchronize());
  tower_grads_[worker] = grad.data();
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  if (worker == 0) {
    // An error here returns at once; the trainer then cancels the barrier, which releases the
    // others from the closing barrier below.
    HOGWILD_RETURN_IF_ERROR(OnRank(Reduce(lr)));
    store()->CompleteUpdate();
    // The step's all-reduce of every GPU's [P] gradient (UpdatePolicy::communication).
    RecordExchanges(1, int64_t{num_workers()} * num_params() * int64_t{sizeof(float)});
  }
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  return StepStats{.staleness = 0, .applied_lr = lr};
}

int NcclTowerAverage::num_optimizer_buffers() const {
  return NumStateSlots(sgd_options().optimizer_params());
}

int NcclTowerAverage::num_optimizer_steps() const {
  return UsesStepCount(sgd_options().optimizer) ? 1 : 0;
}

absl::StatusOr<std::vector<std::vector<float>>> NcclTowerAverage::DoSaveOptimizerState() const {
  std::vector<std::vector<float>> buffers;
  if (num_optimizer_buffers() == 0) return buffers;
  // Every step ends with its update waited for (step 2d), so the buffers are final here, and
  // every replica's are equal: the first is saved.
  HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpus_[0].device));
  HOGWILD_RETURN_IF_ERROR(AppendDeviceSlotBuffers(gpus_[0].slots, num_params(), &buffers));
  return buffers;
}

absl::Status NcclTowerAverage::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& buffers) {
  if (buffers.empty() || num_params() == 0) return absl::OkStatus();
  for (PerGpu& gpu : gpus_) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpu.device));
    HOGWILD_RETURN_IF_ERROR(UploadDeviceOptimizerSlots(buffers, 0, gpu.slots));
  }
  return absl::OkStatus();
}

std::vector<uint64_t> NcclTowerAverage::DoSaveOptimizerSteps() const {
  if (num_optimizer_steps() == 0) return {};
  return {step_};
}

void NcclTowerAverage::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  if (!steps.empty()) step_ = steps[0];
}

absl::Status NcclTowerAverage::DoRestoreParams() {
  if (num_params() == 0) return absl::OkStatus();
  for (PerGpu& gpu : gpus_) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpu.device));
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpy(gpu.replica.data(), store()->unsafe_values().data(),
                                            static_cast<size_t>(num_params()) * sizeof(float),
                                            cudaMemcpyHostToDevice));
  }
  return absl::OkStatus();
}

absl::Status NcclTowerAverage::Reduce(float lr) {
  const int64_t n = store()->size();
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  if (n == 0) return absl::OkStatus();
  // a. Per-GPU sums in worker order.
  for (PerGpu& gpu : gpus_) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpu.device));
    float* sum = gpu.sum.as<float>();
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(sum, tower_grads_[gpu.workers[0]], bytes,
                                                 cudaMemcpyDeviceToDevice, gpu.stream));
    for (size_t i = 1; i < gpu.workers.size(); ++i) {
      HOGWILD_CUDA_RETURN_IF_ERROR(
          LaunchAccumulate(gpu.stream, n, tower_grads_[gpu.workers[i]], sum));
    }
  }
  // b. Across GPUs (of this process and, in a job, of every rank). One thread issues every
  //    local NCCL rank's call, which NCCL requires to be grouped.
  if (gpus_[0].comm != nullptr) {
    HOGWILD_CUDA_RETURN_IF_ERROR(ncclGroupStart());
    absl::Status issued;
    for (PerGpu& gpu : gpus_) {
      issued =
          HOGWILD_CUDA_STATUS(ncclAllReduce(gpu.sum.data(), gpu.sum.data(), static_cast<size_t>(n),
                                            ncclFloat, ncclSum, gpu.comm, gpu.stream));
      if (!issued.ok()) break;
    }
    // The group must be closed even when a call failed, or NCCL stays in group mode.
    const absl::Status closed = HOGWILD_CUDA_STATUS(ncclGroupEnd());
    HOGWILD_RETURN_IF_ERROR(issued);
    HOGWILD_RETURN_IF_ERROR(closed);
  }
  // c. The same update, with the same step count, on every replica.
  const uint64_t step = ++step_;
  for (PerGpu& gpu : gpus_) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpu.device));
    HOGWILD_RETURN_IF_ERROR(LaunchDeviceOptimizerUpdate(gpu.stream, sgd_options(), lr, step, n,
                                                        gpu.sum.as<float>(), gpu.slots,
                                                        gpu.replica.as<float>()));
  }
  // d. Host-side wait, so the closing barrier orders the update before every tower's next read
  //    (the towers run on other streams).
  for (PerGpu& gpu : gpus_) {
    HOGWILD_ASSIGN_OR_RETURN(ScopedDevice on, ScopedDevice::Enter(gpu.device));
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(gpu.stream));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
