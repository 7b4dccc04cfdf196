#include "trainer/data/batch_feed.h"

#include <utility>

#include "core/status_macros.h"

namespace hogwild {

absl::StatusOr<std::optional<BatchView>> HostBatchFeed::Next() {
  // The previous batch is released now (the contract of Next()): its buffers go back to the
  // producer, to be refilled rather than allocated and zeroed again.
  if (current_) pipeline_->Recycle(worker_, *std::move(current_));
  HOGWILD_ASSIGN_OR_RETURN(current_, pipeline_->Next(worker_));
  if (!current_) return std::nullopt;
  return BatchView{.epoch = current_->epoch,
                   .step = current_->step,
                   .global_size = current_->global_size,
                   .size = current_->size(),
                   .features = current_->features.data(),
                   .labels = current_->labels.data()};
}

}  // namespace hogwild
