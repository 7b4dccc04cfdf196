#include "trainer/data/batch_feed.h"

#include "core/status_macros.h"

namespace hogwild {

absl::StatusOr<std::optional<BatchView>> HostBatchFeed::Next() {
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
