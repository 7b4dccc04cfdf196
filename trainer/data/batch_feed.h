// A worker's batches, delivered in the memory of its Backend.
//
// HostBatchFeed (CPU workers) hands the pipeline's batches through unchanged. CudaBatchFeed
// (trainer/cuda_batch_feed.h) stages them through pinned host buffers and copies them to the
// GPU ahead of time, so the copy of batch k+1 overlaps the compute of batch k.
//
// Thread-safety: Next() is called by one worker thread only.
#ifndef HOGWILD_TRAINER_DATA_BATCH_FEED_H_
#define HOGWILD_TRAINER_DATA_BATCH_FEED_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "trainer/data/input_pipeline.h"

namespace hogwild {

// One batch, in the worker's backend memory, valid until the next Next() call.
struct BatchView {
  int64_t epoch = 0;
  int64_t step = 0;                 // as Batch::step
  int64_t global_size = 0;          // as Batch::global_size
  int64_t size = 0;                 // examples in this batch (0 for an empty sync shard)
  const float* features = nullptr;  // [size, D] float32, backend memory
  const int32_t* labels = nullptr;  // [size] int32, backend memory
};

class BatchFeed {
 public:
  virtual ~BatchFeed() = default;
  // The worker's next batch, std::nullopt after its last one. Ops that the worker enqueues on
  // its backend after this returns see the batch's data. Calling Next() again releases the
  // previous batch: the caller must not use it any more (ops already enqueued may still read
  // it; the feed orders its reuse after them).
  // Errors: the pipeline's (kCancelled after Cancel), and device errors of the copies.
  virtual absl::StatusOr<std::optional<BatchView>> Next() = 0;
};

// The CPU workers' feed: the pipeline's host batches, unchanged (no copy); each batch's buffers
// go back to the pipeline (InputPipeline::Recycle) when the next one is taken.
class HostBatchFeed final : public BatchFeed {
 public:
  // `pipeline` must outlive the feed.
  HostBatchFeed(InputPipeline* pipeline, int worker) : pipeline_(pipeline), worker_(worker) {}
  absl::StatusOr<std::optional<BatchView>> Next() override;

 private:
  InputPipeline* pipeline_;
  int worker_;
  std::optional<Batch> current_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_BATCH_FEED_H_
