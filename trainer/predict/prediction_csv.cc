#include "trainer/predict/prediction_csv.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "core/output_path.h"
#include "core/status_macros.h"

namespace hogwild {
namespace {

absl::Status WriteError(absl::string_view what) {
  return absl::InternalError(absl::StrFormat("cannot write %s (%s)", what, std::strerror(errno)));
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
  const int64_t classes = predictions.num_classes;
  std::string line = "index,predicted_class";
  for (int64_t k = 0; k < classes; ++k) absl::StrAppendFormat(&line, ",p%d", k);
  line += '\n';
  if (std::fputs(line.c_str(), out) < 0) return WriteError("the predictions");
  for (int64_t i = 0; i < predictions.size(); ++i) {
    line = absl::StrFormat("%d,%d", i, predictions.predicted[i]);
    const float* p = predictions.probabilities.data() + i * classes;
    for (int64_t k = 0; k < classes; ++k) absl::StrAppendFormat(&line, ",%.9g", p[k]);
    line += '\n';
    if (std::fputs(line.c_str(), out) < 0) return WriteError("the predictions");
  }
  if (std::fflush(out) != 0 || std::ferror(out)) return WriteError("the predictions");
  return absl::OkStatus();
}

absl::Status WritePredictionsFile(const Predictions& predictions, const std::string& path,
                                  bool overwrite) {
  HOGWILD_RETURN_IF_ERROR(CheckPredictionOutput("--output", path, overwrite));
  const std::string tmp = path + ".tmp";
  // Errors name the user's path, not the temporary one beside it.
  const auto fail = [&path](absl::string_view step) {
    return absl::InternalError(
        absl::StrFormat("--output=%s: cannot %s (%s)", path, step, std::strerror(errno)));
  };
  std::FILE* file = std::fopen(tmp.c_str(), "w");
  if (file == nullptr) return fail("write it");
  absl::Status status = WritePredictionsCsv(predictions, file);
  if (!status.ok()) status = fail("write it");
  if (status.ok() && ::fsync(fileno(file)) != 0) status = fail("write it (fsync)");
  if (std::fclose(file) != 0 && status.ok()) status = fail("write it (close)");
  if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    status = fail("put it in place (rename)");
  }
  if (!status.ok()) std::remove(tmp.c_str());
  return status;
}

}  // namespace hogwild
