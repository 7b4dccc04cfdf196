#include "sparse/sparse_dataset.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"

namespace hogwild::sparse {

namespace {

// ValidateSparseDataset's rules on `data`'s arrays with the indices `indices` of any integer type.
template <typename Index>
absl::Status ValidateCsr(const SparseDataset& data, absl::Span<const Index> indices) {
  const int64_t n = data.num_examples();
  const int64_t nnz = static_cast<int64_t>(indices.size());
  if (data.num_features < 1 || data.num_features > (int64_t{1} << 31) - 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("sparse data set: %d features, expected 1 to 2^31 - 1", data.num_features));
  }
  if (static_cast<int64_t>(data.row_offsets.size()) != n + 1 || data.row_offsets[0] != 0 ||
      data.row_offsets[n] != nnz || data.values.size() != indices.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sparse data set: %d row offsets, %d indices and %d values for %d labels; expected N + 1 "
        "offsets from 0 to the number of indices, as many values as indices",
        data.row_offsets.size(), indices.size(), data.values.size(), n));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(data.labels[i])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("sparse data set: row %d: label is not finite", i));
    }
    if (data.row_offsets[i + 1] < data.row_offsets[i]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("sparse data set: row %d: offsets decrease", i));
    }
    int64_t previous = -1;
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      const int64_t j = static_cast<int64_t>(indices[k]);
      if (j <= previous || j >= data.num_features) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "sparse data set: row %d: index %d after %d; expected strictly increasing indices in "
            "[0, %d)",
            i, j, previous, data.num_features));
      }
      if (!std::isfinite(data.values[k])) {
        return absl::InvalidArgumentError(
            absl::StrFormat("sparse data set: row %d: value of index %d is not finite", i, j));
      }
      previous = j;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSparseDataset(const SparseDataset& data) {
  return ValidateCsr(data, absl::MakeConstSpan(data.indices));
}

absl::StatusOr<SparseDataset> SparseDatasetFromCsr(int64_t num_features,
                                                   std::vector<int64_t> row_offsets,
                                                   absl::Span<const int64_t> indices,
                                                   std::vector<float> values,
                                                   std::vector<float> labels) {
  SparseDataset data;
  data.num_features = num_features;
  data.row_offsets = std::move(row_offsets);
  data.values = std::move(values);
  data.labels = std::move(labels);
  if (const absl::Status ok = ValidateCsr(data, indices); !ok.ok()) return ok;
  // Every index is now in [0, D) with D < 2^31: narrowing keeps its value.
  data.indices.assign(indices.begin(), indices.end());
  return data;
}

}  // namespace hogwild::sparse
