#include "trainer/data/cuda_batch_feed.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "kernels/cuda/cuda_status.h"

namespace hogwild {
absl::StatusOr<std::unique_ptr<CudaBatchFeed>> CudaBatchFeed::Create(InputPipeline* pipeline,
                                                                     int worker,
                                                                     CudaBackend* backend,
                                                                     int64_t max_batch,
                                                                     int64_t features) {
  if (max_batch < 1 || features < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CudaBatchFeed: bad sizes (max_batch %d, features %d)", max_batch, features));
  }
  std::unique_ptr<CudaBatchFeed> feed(
      new CudaBatchFeed(pipeline, worker, backend, max_batch, features));
  cudaStream_t stream = nullptr;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  feed->copy_stream_ = stream;
  const size_t feature_bytes = static_cast<size_t>(max_batch * features) * sizeof(float);
  const size_t label_bytes = static_cast<size_t>(max_batch) * sizeof(int32_t);
  for (Slot& slot : feed->slots_) {
    HOGWILD_ASSIGN_OR_RETURN(slot.features_host, PinnedHostBuffer::Allocate(feature_bytes));
    HOGWILD_ASSIGN_OR_RETURN(slot.labels_host, PinnedHostBuffer::Allocate(label_bytes));
    HOGWILD_ASSIGN_OR_RETURN(slot.features, DeviceBuffer::Allocate(feature_bytes));
    HOGWILD_ASSIGN_OR_RETURN(slot.labels, DeviceBuffer::Allocate(label_bytes));
    cudaEvent_t copied = nullptr;
    cudaEvent_t consumed = nullptr;
    // No timing: cheaper to record and wait on.
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    slot.copied = copied;
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    slot.consumed = consumed;
  }
  int device = 0;
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  feed->stager_ = std::thread([raw = feed.get(), device] {
    // The staging thread issues CUDA calls for the worker's GPU.
    const absl::Status s = HOGWILD_CUDA_STATUS(cudaSetDevice(device));
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(raw->mu_);
      raw->slots_[0].state = SlotState::kReady;
      raw->slots_[0].end = true;
      raw->slots_[0].status = s;
      raw->changed_.notify_all();
      return;
    }
    raw->StageLoop();
  });
  return feed;
}

CudaBatchFeed::~CudaBatchFeed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (stager_.joinable()) stager_.join();
  if (copy_stream_ != nullptr) {
    LogIfError("CudaBatchFeed", HOGWILD_CUDA_STATUS(cudaStreamSynchronize(copy_stream_)));
  }
  for (Slot& slot : slots_) {
    if (slot.copied != nullptr) LogIfError("CudaBatchFeed", HOGWILD_CUDA_STATUS(cudaEventDestroy(slot.copied)));
    if (slot.consumed != nullptr) {
      LogIfError("CudaBatchFeed", HOGWILD_CUDA_STATUS(cudaEventDestroy(slot.consumed)));
    }
  }
  if (copy_stream_ != nullptr) LogIfError("CudaBatchFeed", HOGWILD_CUDA_STATUS(cudaStreamDestroy(copy_stream_)));
}

void CudaBatchFeed::StageLoop() {
  for (int s = 0;; s ^= 1) {
    Slot& slot = slots_[s];
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return stop_ || slot.state == SlotState::kFree; });
      if (stop_) return;
      slot.state = SlotState::kFilling;
    }
    absl::Status status;
    bool end = false;
    absl::StatusOr<std::optional<Batch>> batch = pipeline_->Next(worker_);
    if (!batch.ok()) {
      status = batch.status();
    } else if (!batch->has_value()) {
      end = true;
    } else {
      status = Stage(slot, **batch);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot.status = status;
      slot.end = end || !status.ok();
      slot.state = SlotState::kReady;
    }
    changed_.notify_all();
    if (end || !status.ok()) return;
  }
}

absl::Status CudaBatchFeed::Stage(Slot& slot, const Batch& batch) {
  const int64_t n = batch.size();
  if (n > max_batch_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CudaBatchFeed: batch of %d examples exceeds the feed's %d", n, max_batch_));
  }
  // The pinned buffer may still be the source of this slot's previous upload: wait for it
  // (normally long done, since the compute stream waited for it before using the batch).
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(slot.copied));
  const size_t feature_bytes = static_cast<size_t>(n * features_) * sizeof(float);
  const size_t label_bytes = static_cast<size_t>(n) * sizeof(int32_t);
  if (feature_bytes > 0) std::memcpy(slot.features_host.data(), batch.features.data(), feature_bytes);
  if (label_bytes > 0) std::memcpy(slot.labels_host.data(), batch.labels.data(), label_bytes);
  // The device buffers may still be read by ops the worker enqueued on the previous batch of
  // this slot: the copy stream waits for them (an event never recorded is already complete).
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(copy_stream_, slot.consumed, 0));
  if (feature_bytes > 0) {
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot.features.data(), slot.features_host.data(),
                                                 feature_bytes, cudaMemcpyHostToDevice,
                                                 copy_stream_));
  }
  if (label_bytes > 0) {
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot.labels.data(), slot.labels_host.data(),
                                                 label_bytes, cudaMemcpyHostToDevice,
                                                 copy_stream_));
  }
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.copied, copy_stream_));
  slot.view = BatchView{.epoch = batch.epoch,
                        .step = batch.step,
                        .global_size = batch.global_size,
                        .size = n,
                        .features = slot.features.as<const float>(),
                        .labels = slot.labels.as<const int32_t>()};
  return absl::OkStatus();
}

absl::StatusOr<std::optional<BatchView>> CudaBatchFeed::Next() {
  if (finished_) {
    if (!final_status_.ok()) return final_status_;
    return std::nullopt;
  }
  if (returned_ >= 0) {
    // Everything the worker enqueued so far may use the released batch: mark that point.
    HOGWILD_CUDA_RETURN_IF_ERROR(cudaEventRecord(slots_[returned_].consumed, backend_->stream()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      slots_[returned_].state = SlotState::kFree;
    }
    changed_.notify_all();
    returned_ = -1;
  }
  Slot& slot = slots_[next_read_];
  BatchView view;
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return slot.state == SlotState::kReady; });
    if (slot.end) {
      finished_ = true;
      final_status_ = slot.status;
      if (!final_status_.ok()) return final_status_;
      return std::nullopt;
    }
    view = slot.view;
  }
  // The compute stream (not the host) waits for the upload.
  HOGWILD_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(backend_->stream(), slot.copied, 0));
  returned_ = next_read_;
  next_read_ ^= 1;
  return view;
}

}  // namespace hogwild
