#include "trainer/workloads/workload.h"

#include "absl/strings/str_format.h"

namespace hogwild {

absl::Status CheckGradientArgs(absl::string_view workload, int64_t num_params, int64_t max_batch,
                               absl::Span<const float> params, const WorkerBatch& batch,
                               absl::Span<float> grad) {
  const auto rows = static_cast<int64_t>(batch.rows.size());
  if (static_cast<int64_t>(params.size()) == num_params &&
      static_cast<int64_t>(grad.size()) == num_params && rows <= max_batch) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s gradient: params [%d], grad [%d] and %d rows; expected [%d], [%d] and at most %d rows",
      workload, params.size(), grad.size(), rows, num_params, num_params, max_batch));
}

}  // namespace hogwild
