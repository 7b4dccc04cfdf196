#include "trainer/data/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

uint32_t ReadBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

absl::StatusOr<IdxArray> ParseIdx(absl::string_view bytes, int expected_ndims,
                                  absl::string_view origin) {
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
  const size_t header_bytes = 4 + 4 * static_cast<size_t>(expected_ndims);
  if (bytes.size() < header_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: truncated IDX header: %d bytes, the header needs %d", origin, bytes.size(),
        header_bytes));
  }
  IdxArray array;
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
    array.dims.push_back(dim);
  }
  const int64_t available = static_cast<int64_t>(bytes.size() - header_bytes);
  if (available != total) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: IDX data is %s: the header says %d bytes, the file has %d; re-install the dataset",
        origin, available < total ? "truncated" : "longer than its header", total, available));
  }
  array.data.assign(p + header_bytes, p + header_bytes + total);
  return array;
}

absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path, int expected_ndims) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    return absl::NotFoundError(absl::StrFormat("%s: no such file", path));
  }
  if (std::filesystem::is_directory(status)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory, expected an IDX file", path));
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    if (err == EACCES) {
      return absl::PermissionDeniedError(absl::StrFormat("%s: not readable (%s)", path,
                                                         std::strerror(err)));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot open (%s)", path, std::strerror(err)));
  }
  gzbuffer(file, 1 << 17);
  // Read in chunks, so a forged header can never make us allocate more than the file holds.
  std::string bytes;
  char chunk[1 << 16];
  while (true) {
    const int n = gzread(file, chunk, sizeof(chunk));
    if (n < 0) {
      int errnum = 0;
      const std::string message = gzerror(file, &errnum);
      gzclose(file);
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: corrupt gzip data (%s); re-install the dataset", path, message));
    }
    if (n == 0) break;
    bytes.append(chunk, n);
    if (static_cast<int64_t>(bytes.size()) > kMaxIdxBytes + 64) {
      gzclose(file);
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: larger than %d bytes; not an MNIST-format file", path, kMaxIdxBytes));
    }
  }
  // gzclose reports a truncated gzip stream (Z_BUF_ERROR) that gzread may not have.
  const int close_result = gzclose(file);
  if (close_result != Z_OK) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: truncated or corrupt gzip stream (zlib error %d); re-install the dataset", path,
        close_result));
  }
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: the file is empty", path));
  }
  return ParseIdx(bytes, expected_ndims, path);
}

}  // namespace hogwild
