// A labelled classification dataset held in memory, features already normalized.
//   features: [N, D] float32 row-major, D = NumElements(example_shape)
//   labels:   [N] int32 in [0, num_classes)
#ifndef HOGWILD_TRAINER_DATA_DATASET_H_
#define HOGWILD_TRAINER_DATA_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/shape.h"

namespace hogwild {

struct Dataset {
  std::string name;
  Shape example_shape;  // e.g. {1, 28, 28}
  int64_t num_classes = 0;
  std::vector<float> features;  // [N, D]
  std::vector<int32_t> labels;  // [N]

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t feature_dim() const { return NumElements(example_shape); }
  // Bytes held by features and labels.
  int64_t bytes() const {
    return static_cast<int64_t>(features.size() * sizeof(float) + labels.size() * sizeof(int32_t));
  }

  // The first `count` examples (all when count >= size()).
  Dataset Head(int64_t count) const;
};

// The first `count` examples of `data`, for count in [1, data.size()]; unlike Head(), a count
// outside that range is an error rather than cut to fit. Errors: kInvalidArgument naming the
// count and the dataset's size.
absl::StatusOr<Dataset> FirstExamples(const Dataset& data, int64_t count);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_DATASET_H_
