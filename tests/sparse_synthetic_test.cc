// The RCV1-like synthetic set: its shape, unit rows, planted labels, determinism, and a
// round trip through the LIBSVM writer and reader.
#include <cmath>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "sparse/libsvm_reader.h"
#include "sparse/libsvm_writer.h"
#include "sparse/synthetic.h"
#include "tests/expect_error.h"

namespace hogwild::sparse {
namespace {

TEST(Synthetic, DefaultsHaveRcv1sShapeUnitRowsAndPlantedLabels) {
  absl::StatusOr<SyntheticData> out = GenerateRcv1Like({});
  ASSERT_TRUE(out.ok()) << out.status();
  const SparseDataset& data = out->data;
  ASSERT_TRUE(ValidateSparseDataset(data).ok()) << ValidateSparseDataset(data);
  EXPECT_EQ(data.num_examples(), 100000);
  EXPECT_EQ(data.num_features, 47236);
  const double mean_nnz = static_cast<double>(data.nnz()) / data.num_examples();
  EXPECT_NEAR(mean_nnz, 76.0, 0.5);
  int64_t agree = 0;
  int64_t positive = 0;
  for (int64_t i = 0; i < data.num_examples(); ++i) {
    double norm2 = 0.0;
    double margin = 0.0;
    const auto idx = data.row_indices(i);
    const auto val = data.row_values(i);
    for (size_t k = 0; k < idx.size(); ++k) {
      norm2 += double{val[k]} * val[k];
      margin += double{val[k]} * out->planted_weights[idx[k]];
    }
    ASSERT_NEAR(norm2, 1.0, 1e-5) << "row " << i;
    agree += (margin > 0) == (data.labels[i] > 0);
    positive += data.labels[i] > 0;
  }
  // Noise 0.1 flips a few percent of the labels, not none and not many.
  EXPECT_GT(agree, 93000);
  EXPECT_LT(agree, 99900);
  EXPECT_NEAR(positive / 100000.0, 0.5, 0.05);
}

TEST(Synthetic, TheSameSeedGivesTheSameSetAnotherSeedAnother) {
  const SyntheticOptions options{.num_examples = 500, .num_features = 1000, .mean_nnz = 10};
  absl::StatusOr<SyntheticData> a = GenerateRcv1Like(options);
  absl::StatusOr<SyntheticData> b = GenerateRcv1Like(options);
  SyntheticOptions other = options;
  other.seed = 2;
  absl::StatusOr<SyntheticData> c = GenerateRcv1Like(other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->data.indices, b->data.indices);
  EXPECT_EQ(a->data.values, b->data.values);
  EXPECT_EQ(a->data.labels, b->data.labels);
  EXPECT_EQ(a->planted_weights, b->planted_weights);
  EXPECT_NE(a->data.indices, c->data.indices);
  // A later range of rows: the same planted model, other rows; its first row is row 100 of a
  // set that starts at 0.
  SyntheticOptions later = options;
  later.first_example = 100;
  absl::StatusOr<SyntheticData> d = GenerateRcv1Like(later);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->planted_weights, a->planted_weights);
  EXPECT_EQ(d->data.row_indices(0), a->data.row_indices(100));
  EXPECT_EQ(d->data.row_values(0), a->data.row_values(100));
  EXPECT_EQ(d->data.labels[0], a->data.labels[100]);
}

TEST(Synthetic, WrittenAsLibsvmItReadsBackBitwise) {
  absl::StatusOr<SyntheticData> out =
      GenerateRcv1Like({.num_examples = 300, .num_features = 5000, .mean_nnz = 20});
  ASSERT_TRUE(out.ok());
  for (const char* name : {"synthetic.svm", "synthetic.svm.gz"}) {
    const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
    ASSERT_TRUE(WriteLibsvmFile(out->data, path).ok());
    absl::StatusOr<SparseDataset> read = ReadLibsvmFile(path, {.num_features = 5000});
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->indices, out->data.indices);
    EXPECT_EQ(read->values, out->data.values);
    EXPECT_EQ(read->labels, out->data.labels);
    EXPECT_EQ(read->row_offsets, out->data.row_offsets);
  }
  testing::ExpectError(WriteLibsvmFile(out->data, "/nonexistent/dir/x.svm"),
                       absl::StatusCode::kInvalidArgument, {"/nonexistent/dir/x.svm"});
  testing::ExpectError(WriteLibsvmFile(out->data, "/dev/full"), absl::StatusCode::kInvalidArgument,
                       {"/dev/full", "write failed"});
}

TEST(Synthetic, OptionsOutOfRangeAreRefusedByName) {
  testing::ExpectError(GenerateRcv1Like({.num_examples = 0}).status(),
                       absl::StatusCode::kInvalidArgument, {"num_examples"});
  testing::ExpectError(GenerateRcv1Like({.num_features = 10, .mean_nnz = 6}).status(),
                       absl::StatusCode::kInvalidArgument, {"mean_nnz"});
  testing::ExpectError(GenerateRcv1Like({.noise_std = -1}).status(),
                       absl::StatusCode::kInvalidArgument, {"noise_std"});
  // A command's flags in place of the fields: "--flag=value", ranges in the flags' terms too.
  const SyntheticOptionNames flags{.num_examples = "--examples",
                                   .num_features = "--features",
                                   .mean_nnz = "--nnz",
                                   .noise_std = "--noise",
                                   .first_example = "--first_example"};
  testing::ExpectError(ValidateSyntheticOptions({.num_examples = 0}, flags),
                       absl::StatusCode::kInvalidArgument, {"--examples=0", "[1, 2^31)"});
  testing::ExpectError(ValidateSyntheticOptions({.num_features = 10, .mean_nnz = 6}, flags),
                       absl::StatusCode::kInvalidArgument, {"--nnz=6", "[1, --features / 2]"});
  testing::ExpectError(ValidateSyntheticOptions({.first_example = -1}, flags),
                       absl::StatusCode::kInvalidArgument, {"--first_example=-1"});
  EXPECT_TRUE(ValidateSyntheticOptions({}, flags).ok());
}

}  // namespace
}  // namespace hogwild::sparse
