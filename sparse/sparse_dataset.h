// A sparse binary-classification data set in compressed sparse row (CSR) form: what the LIBSVM
// reader (sparse/libsvm_reader.h) and the synthetic generator (sparse/synthetic.h) produce and
// the sparse linear trainer (sparse/sparse_train.h) reads.
//
// Shapes (N examples, D features, Z non-zeros in all), host memory:
//   row_offsets: [N + 1] int64, row_offsets[0] = 0, non-decreasing, row_offsets[N] = Z
//   indices:     [Z] int32, 0-based feature indices in [0, D), strictly increasing within a row
//   values:      [Z] float32, finite
//   labels:      [N] float32, finite; the trainer reads label > 0 as the positive class (+1) and
//                every other label as the negative class (-1), LIBSVM's {+1, -1} and {1, 0} alike
#ifndef HOGWILD_SPARSE_SPARSE_DATASET_H_
#define HOGWILD_SPARSE_SPARSE_DATASET_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hogwild::sparse {

struct SparseDataset {
  int64_t num_features = 0;             // D
  std::vector<int64_t> row_offsets{0};  // [N + 1]
  std::vector<int32_t> indices;         // [Z]
  std::vector<float> values;            // [Z]
  std::vector<float> labels;            // [N]

  int64_t num_examples() const { return static_cast<int64_t>(labels.size()); }
  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  // Row i's feature indices and values ([nnz of row i] each). i in [0, N).
  absl::Span<const int32_t> row_indices(int64_t i) const {
    return absl::MakeConstSpan(indices.data() + row_offsets[i],
                               row_offsets[i + 1] - row_offsets[i]);
  }
  absl::Span<const float> row_values(int64_t i) const {
    return absl::MakeConstSpan(values.data() + row_offsets[i], row_offsets[i + 1] - row_offsets[i]);
  }
};

// OK when `data` satisfies every invariant above; else kInvalidArgument naming the first broken
// one (and the row). O(N + Z). Readers establish these; the trainer checks them once, so a data
// set built by hand cannot make it read out of bounds.
absl::Status ValidateSparseDataset(const SparseDataset& data);

// A data set from CSR arrays whose feature indices may be wider than int32 (numpy's and scipy's
// int64): checked by ValidateSparseDataset's rules on the wide values, then narrowed, so that
// index 2^32 + 49 is refused as outside [0, D) instead of read as 49. `row_offsets` [N + 1],
// `indices` [Z], `values` [Z], `labels` [N]. Errors: those of ValidateSparseDataset.
absl::StatusOr<SparseDataset> SparseDatasetFromCsr(int64_t num_features,
                                                   std::vector<int64_t> row_offsets,
                                                   absl::Span<const int64_t> indices,
                                                   std::vector<float> values,
                                                   std::vector<float> labels);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_SPARSE_DATASET_H_
