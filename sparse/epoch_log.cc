#include "sparse/epoch_log.h"

#include "core/status_macros.h"

namespace hogwild::sparse {

absl::Status WriteEpochRows(ConvergenceLog* log, const SparseEpochReport& r, double wall_s) {
  if (log == nullptr) return absl::OkStatus();
  LogRow row{.wall_time_s = wall_s,
             .epoch = static_cast<double>(r.epoch),
             .step = r.updates,
             .examples_seen = r.examples,
             .worker = -1,
             .train_loss = r.train_loss,
             .lr = r.lr,
             .exchanges = r.communication.exchanges,
             .bytes_per_worker = r.communication.bytes_per_worker,
             .outer_step_norm = r.communication.last_outer_step_norm};
  HOGWILD_RETURN_IF_ERROR(log->Write(row));
  if (!r.test_loss) return absl::OkStatus();
  row.eval = true;
  row.test_loss = r.test_loss;
  row.test_accuracy = r.test_accuracy;
  return log->Write(row);
}

}  // namespace hogwild::sparse
