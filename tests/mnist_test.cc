// The MNIST-family loader (trainer/data/mnist.h): datasets are looked up by name, a split's two
// IDX files load into a Dataset, and missing, mismatched or damaged files get a one-line error
// naming the file and the bad value (and the install command where a file is missing).
//
// Files are written into a fresh directory under testing::TempDir().
#include "trainer/data/mnist.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/idx_files.h"

namespace hogwild {
namespace {

using testing::ExpectError;
using testing::FreshDir;
using testing::Idx;
using testing::Idx3;
using testing::Pixels;
using testing::WriteFile;

TEST(LookupDataset, UnknownDatasetIsRejectedByName) {
  ExpectError(LookupDataset("imagenet").status(), absl::StatusCode::kInvalidArgument,
              {"--dataset=imagenet", "fashion_mnist", "mnist", "cifar10"});
}

// ---- LoadMnistSplit -----------------------------------------------------------------------------

DatasetInfo FashionInfo() { return LookupDataset("fashion_mnist").value(); }

void WriteSplit(const std::string& dir, const std::string& split, const std::string& images,
                const std::string& labels) {
  WriteFile(dir + "/" + split + "-images-idx3-ubyte", images);
  WriteFile(dir + "/" + split + "-labels-idx1-ubyte", labels);
}

TEST(LoadMnistSplit, LoadsAWellFormedSplit) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "t10k", Idx3(3, 28, 28, Pixels(3 * 784)),
             Idx(0x801, {3}, std::string("\x07\x00\x09", 3)));
  auto data = LoadMnistSplit(FashionInfo(), dir, "t10k");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), 3);
  EXPECT_EQ(data->labels, (std::vector<int32_t>{7, 0, 9}));
  EXPECT_EQ(data->features.size(), 3u * 784);
  EXPECT_EQ(data->features[1], 37.0f / 255.0f);
}

TEST(LoadMnistSplit, MissingFilesAreNotFoundWithTheInstallHint) {
  const std::string dir = FreshDir();
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(), absl::StatusCode::kNotFound,
              {dir, "train-images-idx3-ubyte", "sudo apt-get install dataset-fashion-mnist"});
  // Images present, labels missing: the labels file is named.
  WriteFile(dir + "/train-images-idx3-ubyte", Idx3(1, 28, 28, Pixels(784)));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(), absl::StatusCode::kNotFound,
              {"train-labels-idx1-ubyte", "sudo apt-get install dataset-fashion-mnist"});
}

TEST(LoadMnistSplit, RejectsImageAndLabelCountsThatDisagree) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", Idx3(3, 28, 28, Pixels(3 * 784)), Idx(0x801, {2}, "\x01\x02"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {"3 images", "2 labels"});
}

TEST(LoadMnistSplit, RejectsALabelOutOfRangeNamingTheExample) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", Idx3(4, 28, 28, Pixels(4 * 784)), Idx(0x801, {4}, "\x01\x02\x0a\x03"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {"label 10", "example 2", "[0, 10)"});
}

TEST(LoadMnistSplit, RejectsImagesThatAreNot28By28) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", Idx3(2, 27, 28, Pixels(2 * 27 * 28)), Idx(0x801, {2}, "\x01\x02"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {"27x28", "28x28"});
}

TEST(LoadMnistSplit, ReportsACorruptFileByPath) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", "this is not an IDX file", Idx(0x801, {1}, "\x01"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {dir + "/train-images-idx3-ubyte", "magic"});
}

}  // namespace
}  // namespace hogwild
