// A deterministic RCV1-like sparse binary classification set for scaling runs: by default the
// shape of RCV1-v2's binary training set as used by the Hogwild! paper (Niu et al., NIPS 2011,
// section 5; Lewis et al., JMLR 2004): 100,000 examples, 47,236 features, about 76 non-zeros per
// example, rows of unit L2 norm, labels from a planted linear model with noise.
//
// Row i is generated from its own SplitMix64 stream keyed by (seed, first_example + i), so the set
// depends only on the options (not on the machine's thread count or the order of generation):
//   - its number of non-zeros k is uniform in [1, 2 * mean_nnz - 1] (mean `mean_nnz`);
//   - its k distinct feature indices are floor(D * u^2), u uniform in [0, 1): frequent
//     low-numbered features and a long tail, like a vocabulary's word frequencies, so that
//     concurrent Hogwild! updates do collide on the common features;
//   - its values are exponential(1) + 0.1 (positive, like tf-idf weights), scaled to unit L2 norm;
//   - its label is +1 when w*.x + noise_std * z > 0, else -1, where w*_j and z are standard
//     normal draws (Box-Muller) from the streams keyed by (seed, feature j) and (seed, row i).
//     w*.x has standard deviation about 1, so noise_std = 0.1 flips about 3% of the labels.
#ifndef HOGWILD_SPARSE_SYNTHETIC_H_
#define HOGWILD_SPARSE_SYNTHETIC_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "sparse/sparse_dataset.h"

namespace hogwild::sparse {

struct SyntheticOptions {
  int64_t num_examples = 100000;  // N, in [1, 2^31)
  int64_t num_features = 47236;   // D, in [1, 2^27]
  int mean_nnz = 76;              // in [1, D / 2]: keeps the distinct-index draw quick
  double noise_std = 0.1;         // label noise, in [0, 100]
  uint64_t seed = 1;
  // The set is rows [first_example, first_example + N) of the infinite sequence of rows of this
  // seed: a test set drawn from the same planted model is a later range of rows.
  int64_t first_example = 0;  // in [0, 2^40]
};

struct SyntheticData {
  SparseDataset data;
  std::vector<float> planted_weights;  // [D] float32, w*
};

// The names ValidateSyntheticOptions's errors give the options: the fields' by default, a
// command's flags ("--synthetic_examples") where it passes them.
struct SyntheticOptionNames {
  const char* num_examples = "num_examples";
  const char* num_features = "num_features";
  const char* mean_nnz = "mean_nnz";
  const char* noise_std = "noise_std";
  const char* first_example = "first_example";
};

// OK when every option is in its range above; else kInvalidArgument naming the first one out of
// range (as `names` spells it), its value and the range. Pure.
absl::Status ValidateSyntheticOptions(const SyntheticOptions& options,
                                      const SyntheticOptionNames& names = {});

// Generates the set. Errors: ValidateSyntheticOptions's with the fields' names.
// Memory: about 8 bytes per non-zero (N * mean_nnz); 61 MB for the defaults. Pure function of
// the options; thread-safe.
absl::StatusOr<SyntheticData> GenerateRcv1Like(const SyntheticOptions& options);

// A training set and a test set drawn from the same planted model: the training set of
// `options`, and, when test_examples > 0, the test_examples rows that follow it in the seed's
// sequence (first_example = options.first_example + options.num_examples). Errors:
// ValidateSyntheticOptions's for either set, the test set's size named `test_examples_name`.
struct SyntheticSplit {
  SparseDataset train;
  std::optional<SparseDataset> test;  // absent when test_examples is 0
};
absl::StatusOr<SyntheticSplit> GenerateSyntheticSplit(SyntheticOptions options,
                                                      int64_t test_examples,
                                                      SyntheticOptionNames names = {},
                                                      const char* test_examples_name =
                                                          "test_examples");

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_SYNTHETIC_H_
