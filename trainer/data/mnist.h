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
  std::string name;          // "fashion_mnist" or "mnist"
  std::string default_dir;   // where tools/setup.sh installs it
  std::string install_hint;  // the command that installs it
};

// Errors: kInvalidArgument naming the known datasets.
absl::StatusOr<DatasetInfo> LookupDataset(const std::string& name);

// Loads one split. Errors: kNotFound with the install hint when files are missing;
// kInvalidArgument for corrupt files, image and label counts that disagree, images not 28x28,
// or a label outside [0, 10) (naming the example index).
absl::StatusOr<Dataset> LoadMnistSplit(const DatasetInfo& info, const std::string& dir,
                                       const std::string& split);

// Standardizes both datasets' features in place with the mean and standard deviation of
// `train` (over all pixels). Returns {mean, stddev} of the raw [0, 1] pixels.
std::pair<float, float> Normalize(Dataset& train, Dataset& test);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_MNIST_H_
