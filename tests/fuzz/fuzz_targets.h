// The bodies of the fuzz targets, shared by the libFuzzer binaries (tools/fuzz.sh) and the
// regression test that replays the corpus under Bazel (tests/fuzz_regression_test.cc).
// Each must never crash, leak or hit undefined behaviour on any input, and checks properties
// that a correct parser has: an accepted IDX array is exactly as large as its dimensions say,
// and the streaming file reader accepts and reads exactly what the in-memory parser does; an
// accepted checkpoint serializes back to the same bytes; an accepted LIBSVM text is a valid
// sparse data set, read identically from a file; an accepted CIFAR-10 batch has one example per
// 3073-byte record, labels in [0, 9] and pixels in [0, 1], and a refused one leaves the data set
// unchanged.
#ifndef HOGWILD_TESTS_FUZZ_FUZZ_TARGETS_H_
#define HOGWILD_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sparse/libsvm_reader.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/data/cifar10.h"
#include "trainer/data/idx_reader.h"

namespace hogwild::fuzz {

inline void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
  }
}

// The bytes as a file that ReadIdxFile can open: one anonymous in-memory file per process
// (memfd), rewritten for each input and opened through /proc/self/fd.
inline std::string AsFile(absl::string_view bytes) {
  static const int fd = memfd_create("idx_fuzz", 0);
  Check(fd >= 0, "memfd_create");
  Check(ftruncate(fd, 0) == 0, "ftruncate");
  Check(pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()), "pwrite");
  return "/proc/self/fd/" + std::to_string(fd);
}

inline void FuzzIdx(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // zlib reads a plain file as is and a file starting with the gzip magic as gzip; only the
  // plain ones must agree with ParseIdx byte for byte.
  const bool plain = size < 2 || data[0] != 0x1f || data[1] != 0x8b;
  const std::string path = AsFile(bytes);
  for (int ndims : {1, 3}) {
    absl::StatusOr<IdxArray> array = ParseIdx(bytes, ndims, "fuzz");
    // The streaming reader (header first, payload chunk by chunk) on the same bytes.
    absl::StatusOr<IdxArray> streamed = ReadIdxFile(path, ndims);
    if (plain) {
      Check(array.ok() == streamed.ok(), "ReadIdxFile accepts exactly what ParseIdx accepts");
      if (array.ok()) {
        Check(array->dims == streamed->dims && array->data == streamed->data,
              "ReadIdxFile reads what ParseIdx parses");
      }
    }
    if (!array.ok()) continue;
    int64_t total = 1;
    for (int64_t d : array->dims) total *= d;
    Check(static_cast<int>(array->dims.size()) == ndims, "IDX rank");
    Check(static_cast<int64_t>(array->data.size()) == total, "IDX size = product of dims");
    Check(total <= kMaxIdxBytes, "IDX size limit");
  }
}

// Rewrites the header's size and checksum fields to match the payload, so that mutations reach
// the payload parser instead of all stopping at the checksum.
inline std::string FixChecksums(std::string bytes) {
  if (bytes.size() < 32) return bytes;
  const uint64_t payload_size = bytes.size() - 32;
  std::memcpy(bytes.data() + 16, &payload_size, 8);
  const uint32_t payload_crc = static_cast<uint32_t>(
      crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data() + 32),
            static_cast<uInt>(payload_size)));
  std::memcpy(bytes.data() + 24, &payload_crc, 4);
  const uint32_t header_crc = static_cast<uint32_t>(
      crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()), 28));
  std::memcpy(bytes.data() + 28, &header_crc, 4);
  return bytes;
}

inline void FuzzCheckpoint(const uint8_t* data, size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  for (const std::string& bytes : {raw, FixChecksums(raw)}) {
    absl::StatusOr<Checkpoint> checkpoint = ParseCheckpoint(bytes, "fuzz");
    if (!checkpoint.ok()) {
      Check(!checkpoint.status().message().empty(), "error without a message");
      continue;
    }
    Check(SerializeCheckpoint(*checkpoint) == bytes, "accepted checkpoint round-trips");
    Check(CheckSignature(checkpoint->signature, checkpoint->signature, "fuzz").ok(),
          "signature matches itself");
  }
}

inline void FuzzLibsvm(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const bool plain = size < 2 || data[0] != 0x1f || data[1] != 0x8b;
  const std::string path = AsFile(text);
  // Inferred D, and a small fixed D that mutations easily exceed.
  for (int64_t num_features : {int64_t{0}, int64_t{50}}) {
    const sparse::LibsvmOptions options{.num_features = num_features};
    absl::StatusOr<sparse::SparseDataset> parsed = sparse::ParseLibsvm(text, options, "fuzz");
    absl::StatusOr<sparse::SparseDataset> read = sparse::ReadLibsvmFile(path, options);
    if (plain) {
      Check(parsed.ok() == read.ok(), "ReadLibsvmFile accepts exactly what ParseLibsvm accepts");
      if (parsed.ok()) {
        Check(parsed->labels == read->labels && parsed->indices == read->indices &&
                  parsed->values == read->values && parsed->row_offsets == read->row_offsets &&
                  parsed->num_features == read->num_features,
              "ReadLibsvmFile reads what ParseLibsvm parses");
      } else {
        // The same line and reason after the origin ("fuzz" / the path).
        Check(parsed.status().message().substr(4) == read.status().message().substr(path.size()),
              "ReadLibsvmFile refuses with ParseLibsvm's line and reason");
      }
    }
    if (!parsed.ok()) {
      Check(!parsed.status().message().empty(), "error without a message");
      Check(parsed.status().message().find('\n') == absl::string_view::npos, "error of one line");
      continue;
    }
    Check(sparse::ValidateSparseDataset(*parsed).ok(), "accepted LIBSVM text is a valid data set");
    Check(parsed->num_features <= sparse::kMaxLibsvmFeatures, "feature limit");
    Check(num_features == 0 || parsed->num_features == num_features, "given D is kept");
  }
}

inline void FuzzCifar10(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  Dataset dataset;
  dataset.example_shape = {3, 32, 32};
  dataset.num_classes = 10;
  dataset.labels = {4};  // one example already there, as after a previous batch
  dataset.features.assign(3072, 0.5f);
  const absl::Status status = ParseCifar10Records(bytes, "fuzz", dataset);
  if (!status.ok()) {
    Check(status.message().find('\n') == absl::string_view::npos, "error of one line");
    Check(dataset.labels.size() == 1 && dataset.features.size() == 3072,
          "a refused batch leaves the data set unchanged");
    return;
  }
  const size_t records = size / kCifar10RecordBytes;
  Check(size % kCifar10RecordBytes == 0, "accepted batch is whole records");
  Check(dataset.labels.size() == 1 + records, "one example per record");
  Check(dataset.features.size() == 3072 * (1 + records), "3072 features per example");
  for (int32_t label : dataset.labels) Check(label >= 0 && label < 10, "label in [0, 9]");
  for (float x : dataset.features) Check(x >= 0.0f && x <= 1.0f, "pixel in [0, 1]");
}

}  // namespace hogwild::fuzz

#endif  // HOGWILD_TESTS_FUZZ_FUZZ_TARGETS_H_
