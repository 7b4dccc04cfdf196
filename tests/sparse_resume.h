// A sparse run resumed from its checkpoint against the same run made at once, for the modes whose
// runs are deterministic (tests of cyclades, buckwild).
#ifndef HOGWILD_TESTS_SPARSE_RESUME_H_
#define HOGWILD_TESTS_SPARSE_RESUME_H_

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "sparse/sparse_train.h"

namespace hogwild::testing {

// Trains `o` (no checkpoint) at once, then its first `first_epochs` epochs with checkpoints in
// `dir` (emptied first) and the rest resumed from them, and expects the resumed run to report
// `first_epochs` resumed epochs and to end with the same weights, bitwise. Returns the options
// of the resumed run (for a further resume a test may try).
inline sparse::SparseTrainOptions ExpectResumeIsBitwise(const sparse::SparseTrainOptions& o,
                                                        const sparse::SparseDataset& data,
                                                        int first_epochs,
                                                        const std::string& dir) {
  using sparse::SparseTrainOptions, sparse::SparseTrainResult, sparse::TrainSparse;
  std::filesystem::remove_all(dir);
  absl::StatusOr<SparseTrainResult> straight = TrainSparse(o, data, nullptr);
  EXPECT_TRUE(straight.ok()) << straight.status();
  SparseTrainOptions first = o;
  first.epochs = first_epochs;
  first.checkpoint.dir = dir;
  EXPECT_TRUE(TrainSparse(first, data, nullptr).ok());
  SparseTrainOptions rest = o;
  rest.checkpoint = {.dir = dir, .resume = true};
  absl::StatusOr<SparseTrainResult> resumed = TrainSparse(rest, data, nullptr);
  EXPECT_TRUE(resumed.ok()) << resumed.status();
  if (straight.ok() && resumed.ok()) {
    EXPECT_EQ(resumed->resumed_epochs, first_epochs);
    EXPECT_EQ(resumed->weights, straight->weights);
  }
  return rest;
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_SPARSE_RESUME_H_
