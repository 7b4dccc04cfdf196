#include "sparse/synthetic_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"

ABSL_FLAG(int64_t, synthetic_examples, 100000, "synthetic set: examples N");
ABSL_FLAG(int64_t, synthetic_test_examples, 0,
          "synthetic set: test examples (the rows after the training rows; 0: no test set)");
ABSL_FLAG(int64_t, synthetic_features, 47236, "synthetic set: features D");
ABSL_FLAG(int32_t, synthetic_nnz, 76, "synthetic set: mean non-zeros per example");
ABSL_FLAG(double, synthetic_noise, 0.1, "synthetic set: label noise (std of the margin's noise)");

namespace hogwild::sparse {

absl::StatusOr<SyntheticSplit> SyntheticSplitFromFlags(uint64_t seed) {
  const SyntheticOptions options{.num_examples = absl::GetFlag(FLAGS_synthetic_examples),
                                 .num_features = absl::GetFlag(FLAGS_synthetic_features),
                                 .mean_nnz = absl::GetFlag(FLAGS_synthetic_nnz),
                                 .noise_std = absl::GetFlag(FLAGS_synthetic_noise),
                                 .seed = seed};
  return GenerateSyntheticSplit(options, absl::GetFlag(FLAGS_synthetic_test_examples),
                                {.num_examples = "--synthetic_examples",
                                 .num_features = "--synthetic_features",
                                 .mean_nnz = "--synthetic_nnz",
                                 .noise_std = "--synthetic_noise",
                                 .first_example = "--synthetic_examples"},
                                "--synthetic_test_examples");
}

std::string SyntheticFlagsText() {
  return absl::StrFormat("%d,%d,%d,%d,%.17g", absl::GetFlag(FLAGS_synthetic_examples),
                         absl::GetFlag(FLAGS_synthetic_test_examples),
                         absl::GetFlag(FLAGS_synthetic_features),
                         absl::GetFlag(FLAGS_synthetic_nnz), absl::GetFlag(FLAGS_synthetic_noise));
}

}  // namespace hogwild::sparse
