// The bodies of the fuzz targets, shared by the libFuzzer binaries (tools/fuzz.sh) and the
// regression test that replays the corpus under Bazel (tests/fuzz_regression_test.cc).
// Each must never crash, leak or hit undefined behaviour on any input, and checks properties
// that a correct parser has: an accepted IDX array is exactly as large as its dimensions say,
// and the streaming file reader accepts and reads exactly what the in-memory parser does; an
// accepted checkpoint serializes back to the same bytes.
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

#include "trainer/checkpoint/checkpoint.h"
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

}  // namespace hogwild::fuzz

#endif  // HOGWILD_TESTS_FUZZ_FUZZ_TARGETS_H_
