// The command-line flags of the RCV1-like synthetic set (sparse/synthetic.h), declared once for
// every command that generates it (//sparse:train, the study runner): --synthetic_examples,
// --synthetic_test_examples, --synthetic_features, --synthetic_nnz, --synthetic_noise.
#ifndef HOGWILD_SPARSE_SYNTHETIC_FLAGS_H_
#define HOGWILD_SPARSE_SYNTHETIC_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "sparse/synthetic.h"

ABSL_DECLARE_FLAG(int64_t, synthetic_examples);
ABSL_DECLARE_FLAG(int64_t, synthetic_test_examples);
ABSL_DECLARE_FLAG(int64_t, synthetic_features);
ABSL_DECLARE_FLAG(int32_t, synthetic_nnz);
ABSL_DECLARE_FLAG(double, synthetic_noise);

namespace hogwild::sparse {

// The names of the flags above, for "applies to ... only" refusals.
inline constexpr const char* kSyntheticFlagNames[] = {
    "synthetic_examples", "synthetic_test_examples", "synthetic_features", "synthetic_nnz",
    "synthetic_noise"};

// The training set and (with --synthetic_test_examples > 0) the test set the flags describe,
// drawn from `seed`'s planted model. Errors: one line naming the flag out of range
// (GenerateSyntheticSplit with the flags' names). Reads the flags: call after parsing them.
absl::StatusOr<SyntheticSplit> SyntheticSplitFromFlags(uint64_t seed);

// The flags' values as one string ("N,M,D,nnz,noise"), for a run's key or a report.
std::string SyntheticFlagsText();

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_SYNTHETIC_FLAGS_H_
