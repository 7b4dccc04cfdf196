#include "trainer/data/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/gzip_file.h"
#include "core/status_macros.h"

namespace hogwild {
namespace {

uint32_t ReadBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

size_t HeaderBytes(int ndims) { return 4 + 4 * static_cast<size_t>(ndims); }

// What the header promises: the dimensions and the payload's size in bytes.
struct IdxHeader {
  std::vector<int64_t> dims;
  int64_t payload_bytes = 0;
};

// Checks the magic number in the first 4 bytes of `bytes`: a stream reader calls this before
// reading anything else.
absl::Status CheckIdxMagic(absl::string_view bytes, int expected_ndims, absl::string_view origin) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not an IDX file: %d bytes, shorter than the 4-byte magic number", origin,
        bytes.size()));
  }
  const uint32_t magic = ReadBigEndian32(p);
  const uint32_t expected_magic = 0x00000800u | static_cast<uint32_t>(expected_ndims);
  if (magic != expected_magic) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: wrong IDX magic number 0x%08x, expected 0x%08x (unsigned bytes, %d dimensions); "
        "is this the right file?",
        origin, magic, expected_magic, expected_ndims));
  }
  return absl::OkStatus();
}

// Checks the whole header at the start of `bytes` (the payload may follow or not): every check
// that needs no payload is here, so a stream reader stops before reading the payload.
absl::StatusOr<IdxHeader> CheckIdxHeader(absl::string_view bytes, int expected_ndims,
                                         absl::string_view origin) {
  HOGWILD_RETURN_IF_ERROR(CheckIdxMagic(bytes, expected_ndims, origin));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t header_bytes = HeaderBytes(expected_ndims);
  if (bytes.size() < header_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: truncated IDX header: %d bytes, the header needs %d", origin, bytes.size(),
        header_bytes));
  }
  IdxHeader header;
  int64_t total = 1;
  for (int d = 0; d < expected_ndims; ++d) {
    const int64_t dim = ReadBigEndian32(p + 4 + 4 * d);
    if (dim == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: IDX dimension %d is 0; the file holds no data", origin, d));
    }
    // dim < 2^32 and total <= kMaxIdxBytes < 2^31 here, so the product cannot overflow int64.
    total *= dim;
    if (total > kMaxIdxBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: IDX header describes more than %d bytes of data (dimension %d = %d); the header "
          "is corrupt",
          origin, kMaxIdxBytes, d, dim));
    }
    header.dims.push_back(dim);
  }
  header.payload_bytes = total;
  return header;
}

absl::Status SizeMismatch(absl::string_view origin, int64_t promised, int64_t available,
                          bool longer) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: IDX data is %s: the header says %d bytes, the file has %s; re-install the dataset",
      origin, longer ? "longer than its header" : "truncated", promised,
      longer && available < 0 ? "more" : absl::StrCat(available)));
}

absl::Status CorruptGzip(const std::string& path, gzFile file) {
  int errnum = 0;
  const std::string message = gzerror(file, &errnum);
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: corrupt gzip data (%s); re-install the dataset", path, message));
}

// Reads up to `count` bytes (fewer only at the end of the stream) and appends them to `out`.
// Returns the number read; a zlib error is an error naming `path`.
absl::StatusOr<int64_t> ReadUpTo(gzFile file, const std::string& path, int64_t count,
                                 std::vector<uint8_t>& out) {
  char chunk[1 << 16];
  int64_t done = 0;
  while (done < count) {
    const unsigned want = static_cast<unsigned>(std::min<int64_t>(sizeof(chunk), count - done));
    const int n = gzread(file, chunk, want);
    if (n < 0) return CorruptGzip(path, file);
    if (n == 0) {
      // zlib reports a gzip stream cut short (Z_BUF_ERROR) as an end of input plus an error
      // state, not as a failed read: a truncated .gz is corrupt gzip, not a short IDX file.
      int errnum = Z_OK;
      gzerror(file, &errnum);
      if (errnum != Z_OK) return CorruptGzip(path, file);
      break;
    }
    out.insert(out.end(), chunk, chunk + n);
    done += n;
  }
  return done;
}

// The body of ReadIdxFile once `file` is open. Reads the header first and stops at the first
// disagreement (magic, a dimension, the size limit), then at most the payload the header
// promises plus one byte (to tell "longer than its header"): a forged or bomb-like file is
// refused after decompressing at most header + payload + 1 bytes, never the whole stream.
absl::StatusOr<IdxArray> ReadIdxStream(gzFile file, const std::string& path, int expected_ndims) {
  std::vector<uint8_t> bytes;
  const auto view = [&bytes] {
    return absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  };
  HOGWILD_ASSIGN_OR_RETURN(int64_t n, ReadUpTo(file, path, 4, bytes));
  if (n == 0) return absl::InvalidArgumentError(absl::StrFormat("%s: the file is empty", path));
  HOGWILD_RETURN_IF_ERROR(CheckIdxMagic(view(), expected_ndims, path));
  HOGWILD_ASSIGN_OR_RETURN(
      n, ReadUpTo(file, path, static_cast<int64_t>(HeaderBytes(expected_ndims)) - 4, bytes));
  HOGWILD_ASSIGN_OR_RETURN(IdxHeader header, CheckIdxHeader(view(), expected_ndims, path));
  // The payload grows chunk by chunk: a header that promises more than the file holds costs
  // only what the file holds.
  IdxArray array;
  array.data.reserve(static_cast<size_t>(std::min<int64_t>(header.payload_bytes, 64 << 20)));
  HOGWILD_ASSIGN_OR_RETURN(int64_t got, ReadUpTo(file, path, header.payload_bytes, array.data));
  if (got < header.payload_bytes) return SizeMismatch(path, header.payload_bytes, got, false);
  std::vector<uint8_t> extra;
  HOGWILD_ASSIGN_OR_RETURN(int64_t more, ReadUpTo(file, path, 1, extra));
  if (more > 0) return SizeMismatch(path, header.payload_bytes, -1, true);
  array.dims = std::move(header.dims);
  return array;
}

}  // namespace

absl::StatusOr<IdxArray> ParseIdx(absl::string_view bytes, int expected_ndims,
                                  absl::string_view origin) {
  HOGWILD_ASSIGN_OR_RETURN(IdxHeader header, CheckIdxHeader(bytes, expected_ndims, origin));
  const size_t header_bytes = HeaderBytes(expected_ndims);
  const int64_t available = static_cast<int64_t>(bytes.size() - header_bytes);
  if (available != header.payload_bytes) {
    return SizeMismatch(origin, header.payload_bytes, available, available > header.payload_bytes);
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  IdxArray array;
  array.dims = std::move(header.dims);
  array.data.assign(p + header_bytes, p + header_bytes + header.payload_bytes);
  return array;
}

absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path, int expected_ndims) {
  return ReadGzipFile(path, "an IDX file", "; re-install the dataset", [&](gzFile file) {
    return ReadIdxStream(file, path, expected_ndims);
  });
}

}  // namespace hogwild
