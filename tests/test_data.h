// Small synthetic classification data for tests that need no real dataset.
#ifndef HOGWILD_TESTS_TEST_DATA_H_
#define HOGWILD_TESTS_TEST_DATA_H_

#include <random>

#include "trainer/data/dataset.h"

namespace hogwild::testing {

// `n` examples of `dim` standard-normal features; the label is the argmax of a fixed random
// linear map plus noise, so the data is learnable but not trivially.
inline Dataset SyntheticDataset(int64_t n, int64_t dim, int64_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> w(dim * classes);
  for (float& v : w) v = normal(rng);
  Dataset d;
  d.name = "synthetic";
  d.example_shape = {dim};
  d.num_classes = classes;
  d.features.resize(n * dim);
  d.labels.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    float* x = d.features.data() + i * dim;
    for (int64_t j = 0; j < dim; ++j) x[j] = normal(rng);
    int best = 0;
    float best_score = -1e30f;
    for (int64_t k = 0; k < classes; ++k) {
      float score = 0.3f * normal(rng);
      for (int64_t j = 0; j < dim; ++j) score += x[j] * w[j * classes + k];
      if (score > best_score) best_score = score, best = static_cast<int>(k);
    }
    d.labels[i] = best;
  }
  return d;
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_TEST_DATA_H_
