#include "trainer/predict/prediction_csv.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/atomic_file.h"
#include "core/output_path.h"
#include "core/status_macros.h"

namespace hogwild {
namespace {

absl::Status WriteError(absl::string_view what) {
  return absl::InternalError(absl::StrFormat("cannot write %s (%s)", what, std::strerror(errno)));
}

std::string Header(int64_t classes) {
  std::string line = "index,predicted_class";
  for (int64_t k = 0; k < classes; ++k) absl::StrAppendFormat(&line, ",p%d", k);
  return line + '\n';
}

// Example `i`'s row, with its newline.
std::string Row(const Predictions& predictions, int64_t i) {
  const int64_t classes = predictions.num_classes;
  std::string line = absl::StrFormat("%d,%d", i, predictions.predicted[i]);
  const float* p = predictions.probabilities.data() + i * classes;
  for (int64_t k = 0; k < classes; ++k) absl::StrAppendFormat(&line, ",%.9g", p[k]);
  return line + '\n';
}

}  // namespace

absl::Status CheckPredictionOutput(absl::string_view name, const std::string& path,
                                   bool overwrite) {
  HOGWILD_RETURN_IF_ERROR(CheckOutputFilePath(std::string(name), path));
  std::error_code ec;
  // The file is replaced by a rename (atomic), which would turn a device or a pipe such as
  // /dev/null into a regular file: those are refused, with or without --overwrite.
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=%s is not a regular file (a device or a pipe), which this command would replace; "
        "leave out %s to write the CSV to standard output and redirect that",
        name, path, name));
  }
  if (!overwrite && std::filesystem::exists(status)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("%s=%s exists; pass --overwrite to replace it", name, path));
  }
  // The CSV is written to a temporary file beside `path` and renamed: a folder where no file can
  // be created (no write permission, a read-only mount) fails now, not after the predictions.
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::string probe = (folder / ".predictions.probe.XXXXXX").string();
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrFormat("%s=%s: cannot create a file in %s (%s); choose a folder you can write to",
                        name, path, folder.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

absl::Status WritePredictionsCsv(const Predictions& predictions, std::FILE* out) {
  if (std::fputs(Header(predictions.num_classes).c_str(), out) < 0) {
    return WriteError("the predictions");
  }
  for (int64_t i = 0; i < predictions.size(); ++i) {
    if (std::fputs(Row(predictions, i).c_str(), out) < 0) return WriteError("the predictions");
  }
  if (std::fflush(out) != 0 || std::ferror(out)) return WriteError("the predictions");
  return absl::OkStatus();
}

absl::Status WritePredictionsFile(const Predictions& predictions, const std::string& path,
                                  bool overwrite) {
  HOGWILD_RETURN_IF_ERROR(CheckPredictionOutput("--output", path, overwrite));
  std::string csv = Header(predictions.num_classes);
  for (int64_t i = 0; i < predictions.size(); ++i) csv += Row(predictions, i);
  const absl::Status written = WriteFileAtomically(path, csv);
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat("--output=", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
