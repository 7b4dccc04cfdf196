#include "sparse/libsvm_writer.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace hogwild::sparse {

absl::Status WriteLibsvmFile(const SparseDataset& data, const std::string& path) {
  // "wT": zlib writes the bytes as they are (no gzip) for plain files, so one code path.
  const bool gzip = absl::EndsWith(path, ".gz");
  gzFile file = gzopen(path.c_str(), gzip ? "wb6" : "wT");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot create (%s)", path, std::strerror(errno)));
  }
  std::string line;
  bool ok = true;
  for (int64_t i = 0; i < data.num_examples() && ok; ++i) {
    line = absl::StrFormat("%.9g", data.labels[i]);
    const auto indices = data.row_indices(i);
    const auto values = data.row_values(i);
    for (size_t k = 0; k < indices.size(); ++k) {
      absl::StrAppendFormat(&line, " %d:%.9g", indices[k] + 1, values[k]);
    }
    line += '\n';
    ok = gzwrite(file, line.data(), static_cast<unsigned>(line.size())) ==
         static_cast<int>(line.size());
  }
  int errnum = Z_OK;
  const std::string reason = ok ? "" : gzerror(file, &errnum);
  const int close_result = gzclose(file);
  if (!ok || close_result != Z_OK) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: write failed (%s)", path,
        ok ? absl::StrFormat("zlib close error %d: %s", close_result, std::strerror(errno))
           : reason));
  }
  return absl::OkStatus();
}

}  // namespace hogwild::sparse
