// The CIFAR-10 binary reader (trainer/data/cifar10.h) on small files the test writes: records
// decoded channel-major with their labels, the five training batches in order, the splits
// standardized like MNIST's, a cnn built for the 3x32x32 examples, and each bad file refused
// naming the file and the record.
#include "trainer/data/cifar10.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/idx_files.h"
#include "trainer/data/mnist.h"
#include "trainer/model/model.h"

namespace hogwild {
namespace {

using ::hogwild::testing::ExpectError;
using ::hogwild::testing::FreshDir;
using ::hogwild::testing::WriteFile;

// `n` records; record r has label (first_label + r) % 10 and pixel i = (r + i) % 256.
std::string Records(int n, int first_label = 0) {
  std::string bytes;
  for (int r = 0; r < n; ++r) {
    bytes.push_back(static_cast<char>((first_label + r) % 10));
    for (int i = 0; i < 3072; ++i) bytes.push_back(static_cast<char>((r + i) % 256));
  }
  return bytes;
}

Dataset Empty() {
  Dataset d;
  d.example_shape = {3, 32, 32};
  d.num_classes = 10;
  return d;
}

TEST(Cifar10, DecodesLabelsAndChannelMajorPixels) {
  Dataset d = Empty();
  ASSERT_TRUE(ParseCifar10Records(Records(3, 7), "f.bin", d).ok());
  ASSERT_EQ(d.size(), 3);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{7, 8, 9}));
  ASSERT_EQ(d.features.size(), 3u * 3072);
  // Record 1, green channel (offset 1024), row 2, column 5: byte (1 + 1024 + 2*32 + 5) % 256.
  const int i = 1024 + 2 * 32 + 5;
  EXPECT_EQ(d.features[3072 + i], static_cast<float>((1 + i) % 256) / 255.0f);
}

TEST(Cifar10, RefusesBadRecordsNamingTheFileAndRecord) {
  Dataset d = Empty();
  ExpectError(ParseCifar10Records(Records(2).substr(0, 3073 + 100), "f.bin", d),
              absl::StatusCode::kInvalidArgument,
              {"f.bin", "record 1 is truncated", "100 of 3073 bytes"});
  std::string bad = Records(4);
  bad[2 * 3073] = 10;
  ExpectError(ParseCifar10Records(bad, "g.bin", d), absl::StatusCode::kInvalidArgument,
              {"g.bin", "record 2 has label 10"});
  ExpectError(ParseCifar10Records("", "e.bin", d), absl::StatusCode::kInvalidArgument,
              {"e.bin", "empty"});
  EXPECT_EQ(d.size(), 0) << "a refused file must leave the dataset unchanged";
}

TEST(Cifar10, LoadsTheFiveTrainingBatchesInOrderAndTheTestBatch) {
  const std::string dir = FreshDir();
  for (int b = 1; b <= 5; ++b) {
    WriteFile(dir + "/data_batch_" + std::to_string(b) + ".bin", Records(2, b));
  }
  WriteFile(dir + "/test_batch.bin", Records(3));
  auto train = LoadCifar10Split(dir, "train");
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->name, "cifar10");
  EXPECT_EQ(train->example_shape, (Shape{3, 32, 32}));
  EXPECT_EQ(train->labels, (std::vector<int32_t>{1, 2, 2, 3, 3, 4, 4, 5, 5, 6}));
  auto info = LookupDataset("cifar10");
  ASSERT_TRUE(info.ok());
  auto splits = LoadTrainTest(*info, dir, 0, "--train_examples");
  ASSERT_TRUE(splits.ok()) << splits.status();
  EXPECT_EQ(splits->test.size(), 3);
  // Standardized with the training set's statistics, like MNIST: mean 0, variance 1.
  double sum = 0, squares = 0;
  for (float x : splits->train.features) sum += x, squares += double{x} * x;
  const double n = static_cast<double>(splits->train.features.size());
  EXPECT_NEAR(sum / n, 0.0, 1e-4);
  EXPECT_NEAR(squares / n, 1.0, 1e-3);
  // The cnn takes its input shape from the dataset.
  auto cnn = Model::Create({.name = "cnn", .hidden = {}, .input_shape = train->example_shape});
  ASSERT_TRUE(cnn.ok()) << cnn.status();
  EXPECT_EQ((*cnn)->layers().front()->input_shape(), (Shape{3, 32, 32}));
  // conv 3->32 (2,432), conv 32->64 (51,264), dense 64x8x8->256 (1,048,832), dense 256->10.
  EXPECT_EQ((*cnn)->num_params(), 1105098);
}

TEST(Cifar10, RefusesMissingAndDamagedFilesNamingThem) {
  const std::string dir = FreshDir();
  WriteFile(dir + "/data_batch_1.bin", Records(1));
  ExpectError(LoadCifar10Split(dir, "train").status(), absl::StatusCode::kNotFound,
              {dir + "/data_batch_2.bin", "cifar-10-binary.tar.gz"});
  for (int b = 2; b <= 5; ++b) {
    WriteFile(dir + "/data_batch_" + std::to_string(b) + ".bin", Records(1));
  }
  WriteFile(dir + "/data_batch_4.bin", Records(3).substr(0, 3 * 3073 - 1));
  ExpectError(LoadCifar10Split(dir, "train").status(), absl::StatusCode::kInvalidArgument,
              {dir + "/data_batch_4.bin", "record 2 is truncated"});
  ExpectError(LoadCifar10Split(dir + "/data_batch_1.bin", "test").status(),
              absl::StatusCode::kInvalidArgument, {"is a file"});
}

}  // namespace
}  // namespace hogwild
