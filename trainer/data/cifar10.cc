#include "trainer/data/cifar10.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

constexpr int kClasses = 10;
constexpr int64_t kPixels = kCifar10RecordBytes - 1;

std::vector<std::string> SplitFiles(const std::string& split) {
  if (split == "test") return {"test_batch.bin"};
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) files.push_back(absl::StrFormat("data_batch_%d.bin", i));
  return files;
}

}  // namespace

absl::Status ParseCifar10Records(absl::string_view bytes, absl::string_view origin, Dataset& out) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is empty; a CIFAR-10 batch holds records of %d bytes", origin, kCifar10RecordBytes));
  }
  const int64_t records = static_cast<int64_t>(bytes.size()) / kCifar10RecordBytes;
  const int64_t tail = static_cast<int64_t>(bytes.size()) % kCifar10RecordBytes;
  if (tail != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: record %d is truncated: %d of %d bytes",
                                                      origin, records, tail, kCifar10RecordBytes));
  }
  // Every label first, so a bad file leaves `out` unchanged.
  for (int64_t r = 0; r < records; ++r) {
    const auto label = static_cast<uint8_t>(bytes[r * kCifar10RecordBytes]);
    if (label >= kClasses) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: record %d has label %d; CIFAR-10 labels are 0 to 9", origin, r, label));
    }
  }
  const size_t first = out.features.size();
  out.features.resize(first + records * kPixels);
  out.labels.reserve(out.labels.size() + records);
  for (int64_t r = 0; r < records; ++r) {
    const char* record = bytes.data() + r * kCifar10RecordBytes;
    out.labels.push_back(static_cast<uint8_t>(record[0]));
    float* x = out.features.data() + first + r * kPixels;
    for (int64_t i = 0; i < kPixels; ++i) {
      x[i] = static_cast<float>(static_cast<uint8_t>(record[1 + i])) / 255.0f;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Dataset> LoadCifar10Split(const std::string& dir, const std::string& split) {
  if (split != "train" && split != "test") {
    return absl::InvalidArgumentError(
        absl::StrFormat("CIFAR-10 split '%s' is unknown; use train or test", split));
  }
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--data_dir=%s is a file; it must be the directory holding the CIFAR-10 .bin files", dir));
  }
  Dataset data;
  data.name = "cifar10";
  data.example_shape = {3, 32, 32};
  data.num_classes = kClasses;
  for (const std::string& name : SplitFiles(split)) {
    const std::string path = dir + "/" + name;
    if (!std::filesystem::exists(path, ec)) {
      return absl::NotFoundError(absl::StrFormat(
          "%s: missing CIFAR-10 data (%s); download the binary version "
          "(cifar-10-binary.tar.gz) from https://www.cs.toronto.edu/~kriz/cifar.html, unpack "
          "it and point --data_dir at the folder holding %s",
          path, split, name));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: cannot open the file", path));
    }
    std::stringstream content;
    content << in.rdbuf();
    if (!in.good() && !in.eof()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: cannot read the file", path));
    }
    const absl::Status parsed = ParseCifar10Records(content.str(), path, data);
    if (!parsed.ok()) return parsed;
  }
  return data;
}

}  // namespace hogwild
