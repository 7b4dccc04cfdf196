// Reader for the IDX format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// a big-endian header {0, 0, type, ndims} then ndims big-endian uint32 dimensions, then the
// items as raw bytes. Only type 0x08 (unsigned byte) is used by these datasets and accepted.
// Files may be gzip-compressed or plain (zlib's gzread reads both).
#ifndef HOGWILD_TRAINER_DATA_IDX_READER_H_
#define HOGWILD_TRAINER_DATA_IDX_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hogwild {

struct IdxArray {
  std::vector<int64_t> dims;   // e.g. {60000, 28, 28}
  std::vector<uint8_t> data;   // product(dims) bytes, row-major
};

// Largest decompressed IDX file accepted: 1 GiB (Fashion-MNIST's training images are 47 MB).
inline constexpr int64_t kMaxIdxBytes = int64_t{1} << 30;

// Parses an IDX image from memory. `origin` names the source in error messages.
// Errors (kInvalidArgument, one line naming `origin`): short header, wrong magic (type or
// ndims other than `expected_ndims`), a dimension of 0 or a product that overflows or exceeds
// kMaxIdxBytes (checked before anything is allocated), data shorter or longer than the header
// says. Pure function, thread-safe; this is the fuzzing entry point.
absl::StatusOr<IdxArray> ParseIdx(absl::string_view bytes, int expected_ndims,
                                  absl::string_view origin);

// Reads and parses an IDX file, gzip-compressed or not, as a stream: the magic number first,
// then the header, each checked before anything more is read; then at most the payload the
// header promises plus one byte. So a file refused for its header (a gzip bomb of zeros has
// magic 0) costs a few bytes of decompression, and any file at most header + payload + 1 bytes
// of it, whatever its real length; memory grows with what is read, not with what the header
// claims. Errors: kNotFound (missing file), kInvalidArgument (a directory, empty, corrupt gzip,
// or any ParseIdx error; "longer than its header" once one byte more is read),
// kPermissionDenied (unreadable); each message names the path.
absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path, int expected_ndims);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_IDX_READER_H_
