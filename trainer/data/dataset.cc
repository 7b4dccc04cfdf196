#include "trainer/data/dataset.h"

#include <algorithm>

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

}  // namespace hogwild
