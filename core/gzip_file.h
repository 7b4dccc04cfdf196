// Reading a file that may be gzip-compressed (zlib's gzopen reads plain files too), with the
// errors every reader of this project gives: a missing file, a directory, an unreadable or
// unopenable file, and a truncated or corrupt gzip stream, each one line naming the path.
// Used by the IDX reader (trainer/data/idx_reader.h) and the LIBSVM reader
// (sparse/libsvm_reader.h).
#ifndef HOGWILD_CORE_GZIP_FILE_H_
#define HOGWILD_CORE_GZIP_FILE_H_

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace hogwild {

// Opens `path` and returns read(file) (a callable gzFile -> absl::StatusOr<T> that reads the
// whole stream), closing the file afterwards. `what` names the expected content in the
// directory error ("an IDX file"); `hint` ends the truncated-stream error (e.g. "; re-install
// the dataset", or ""). Errors: kNotFound (no such file), kPermissionDenied (not readable),
// kInvalidArgument (a directory, cannot open, or a successful read whose gzip stream turned out
// truncated or corrupt at close: gzclose reports Z_BUF_ERROR that gzread may not have; a read
// refused early stopped before the end, so its own error stands). Thread-safety: as `read`.
template <typename Read>
auto ReadGzipFile(const std::string& path, absl::string_view what, absl::string_view hint,
                  Read read) -> decltype(read(gzFile{})) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    return absl::NotFoundError(absl::StrFormat("%s: no such file", path));
  }
  if (std::filesystem::is_directory(status)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory, expected %s", path, what));
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    if (err == EACCES) {
      return absl::PermissionDeniedError(
          absl::StrFormat("%s: not readable (%s)", path, std::strerror(err)));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot open (%s)", path, std::strerror(err)));
  }
  gzbuffer(file, 1 << 17);
  auto result = read(file);
  const int close_result = gzclose(file);
  if (result.ok() && close_result != Z_OK) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: truncated or corrupt gzip stream (zlib error %d)%s", path, close_result, hint));
  }
  return result;
}

}  // namespace hogwild

#endif  // HOGWILD_CORE_GZIP_FILE_H_
