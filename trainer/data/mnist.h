// Loads MNIST-format datasets (MNIST, Fashion-MNIST): IDX files
//   <dir>/<split>-images-idx3-ubyte[.gz]   (N, 28, 28) unsigned bytes
//   <dir>/<split>-labels-idx1-ubyte[.gz]   (N) unsigned bytes in [0, 10)
// with split "train" or "t10k". Pixels become float32 x / 255; Normalize() then standardizes
// with the training set's mean and standard deviation (PyTorch's transforms.Normalize recipe).
#ifndef HOGWILD_TRAINER_DATA_MNIST_H_
#define HOGWILD_TRAINER_DATA_MNIST_H_

#include <string>

#include "absl/status/statusor.h"
#include "trainer/data/dataset.h"

namespace hogwild {

struct DatasetInfo {
  std::string name;          // "fashion_mnist", "mnist" or "cifar10" (trainer/data/cifar10.h)
  std::string default_dir;   // where tools/setup.sh installs it
  std::string install_hint;  // the command that installs it
};

// Errors: kInvalidArgument naming the known datasets. (cifar10 is not installable from Debian:
// its hint says where to download it.)
absl::StatusOr<DatasetInfo> LookupDataset(const std::string& name);

// Loads one split. Errors: kNotFound with the install hint when files are missing;
// kInvalidArgument for corrupt files, image and label counts that disagree, images not 28x28,
// or a label outside [0, 10) (naming the example index).
absl::StatusOr<Dataset> LoadMnistSplit(const DatasetInfo& info, const std::string& dir,
                                       const std::string& split);

// Standardizes both datasets' features in place with the mean and standard deviation of
// `train` (over all pixels). Returns {mean, stddev} of the raw [0, 1] pixels.
std::pair<float, float> Normalize(Dataset& train, Dataset& test);

// Both splits as every front end (the train and simulate commands, the Python module) trains
// on them: loaded, the training set cut to its first `train_examples` examples (0: all), then
// standardized with its statistics (Normalize). cifar10 reads the CIFAR-10 binary batches
// (LoadCifar10Split), the others the IDX files (LoadMnistSplit). Errors: LoadMnistSplit's;
// kInvalidArgument
// "<train_examples_name>=N is larger than the training set: ..." when N exceeds it (the caller
// names its own flag or keyword).
struct TrainTestSplits {
  Dataset train;
  Dataset test;
};
absl::StatusOr<TrainTestSplits> LoadTrainTest(const DatasetInfo& info, const std::string& dir,
                                              int64_t train_examples,
                                              const std::string& train_examples_name);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_MNIST_H_
