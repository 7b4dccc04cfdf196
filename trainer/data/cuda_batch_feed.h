// The GPU workers' batch feed: double-buffered host-to-device copies that overlap compute.
//
// A staging thread per worker takes the worker's batches from the input pipeline, copies each
// into one of two pinned (page-locked) host buffers and enqueues its host-to-device copy into
// the matching device buffer on a copy stream of its own, then records an event. Next() makes
// the worker's compute stream wait for that event (no host wait) and hands out the device
// buffer, while the staging thread already fills the other slot with the following batch. A
// slot is refilled only after the ops the worker enqueued on the previous batch have run (an
// event recorded on the compute stream when Next() releases it), so nothing is overwritten in
// use. So the host gather, the pinned copy and the PCIe transfer of batch k+1 all overlap the
// GPU compute of batch k.
//
//   slot 0: [pinned features, labels] --copy stream--> [device features, labels]
//   slot 1: the same; staging and compute alternate between the two.
//
// Thread-safety: Next() from the worker's thread (the one that created the backend). The
// staging thread is the only caller of pipeline->Next(worker).
#ifndef HOGWILD_TRAINER_DATA_CUDA_BATCH_FEED_H_
#define HOGWILD_TRAINER_DATA_CUDA_BATCH_FEED_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_buffer.h"
#include "trainer/data/batch_feed.h"
#include "trainer/data/input_pipeline.h"

struct CUevent_st;

namespace hogwild {

class CudaBatchFeed final : public BatchFeed {
 public:
  // Allocates two slots of max_batch x features floats (pinned and on the backend's GPU) and
  // starts the staging thread. Call on the worker's thread. pipeline and backend must outlive
  // the feed. Errors: allocation (kResourceExhausted with the bytes) and CUDA errors.
  static absl::StatusOr<std::unique_ptr<CudaBatchFeed>> Create(InputPipeline* pipeline,
                                                               int worker, CudaBackend* backend,
                                                               int64_t max_batch,
                                                               int64_t features);
  // Stops the staging thread (after the batch it may be fetching), waits for the copy stream.
  ~CudaBatchFeed() override;

  absl::StatusOr<std::optional<BatchView>> Next() override;

 private:
  enum class SlotState { kFree, kFilling, kReady };
  struct Slot {
    PinnedHostBuffer features_host;  // [max_batch, D]
    PinnedHostBuffer labels_host;    // [max_batch]
    DeviceBuffer features;           // [max_batch, D]
    DeviceBuffer labels;             // [max_batch]
    CUevent_st* copied = nullptr;    // recorded on the copy stream after the upload
    CUevent_st* consumed = nullptr;  // recorded on the compute stream when released
    // Guarded by mu_:
    SlotState state = SlotState::kFree;
    bool end = false;      // no batch: the pipeline is exhausted (or `status` is an error)
    absl::Status status;
    BatchView view;
  };

  CudaBatchFeed(InputPipeline* pipeline, int worker, CudaBackend* backend, int64_t max_batch,
                int64_t features)
      : pipeline_(pipeline),
        worker_(worker),
        backend_(backend),
        max_batch_(max_batch),
        features_(features) {}
  void StageLoop();
  absl::Status Stage(Slot& slot, const Batch& batch);

  InputPipeline* const pipeline_;
  const int worker_;
  CudaBackend* const backend_;
  const int64_t max_batch_;
  const int64_t features_;
  CUstream_st* copy_stream_ = nullptr;
  Slot slots_[2];

  std::mutex mu_;
  std::condition_variable changed_;
  bool stop_ = false;  // guarded by mu_

  // Worker thread only.
  int next_read_ = 0;
  int returned_ = -1;  // slot handed out by the last Next(), or -1
  bool finished_ = false;
  absl::Status final_status_;

  std::thread stager_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_CUDA_BATCH_FEED_H_
