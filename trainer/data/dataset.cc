#include "trainer/data/dataset.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace hogwild {

Dataset Dataset::Head(int64_t count) const {
  const int64_t n = std::clamp<int64_t>(count, 0, size());
  Dataset head;
  head.name = name;
  head.example_shape = example_shape;
  head.num_classes = num_classes;
  head.features.assign(features.begin(), features.begin() + n * feature_dim());
  head.labels.assign(labels.begin(), labels.begin() + n);
  return head;
}

absl::StatusOr<Dataset> FirstExamples(const Dataset& data, int64_t count) {
  if (count < 1 || count > data.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("asked for the first %d examples of %s, which has %d", count,
                        data.name.empty() ? "the dataset" : data.name, data.size()));
  }
  return data.Head(count);
}

}  // namespace hogwild
