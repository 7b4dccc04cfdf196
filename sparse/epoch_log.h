// The convergence-log rows of a sparse or matrix-factorization epoch (trainer/metrics/
// convergence_log.h's schema), shared by //sparse:train and the study runner.
#ifndef HOGWILD_SPARSE_EPOCH_LOG_H_
#define HOGWILD_SPARSE_EPOCH_LOG_H_

#include "absl/status/status.h"
#include "sparse/sparse_train.h"
#include "trainer/metrics/convergence_log.h"

namespace hogwild::sparse {

// Writes an epoch's rows into `log` (nothing when it is null): a train row (worker -1, the
// whole training set's loss at the epoch's end) and, with a test set, an eval row; `wall_s` is
// the seconds since the run started. The accuracies of a matrix factorization are absent (its
// losses are RMSEs). Errors: the log's write errors. Thread-compatible (the log's contract).
absl::Status WriteEpochRows(ConvergenceLog* log, const SparseEpochReport& report, double wall_s);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_EPOCH_LOG_H_
