#include "core/output_path.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"

namespace hogwild {

absl::Status CheckOutputFilePath(const std::string& name, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(path);
  if (fs::is_directory(file, ec)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s=%s: is a directory; give a file path", name, path));
  }
  const fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (!fs::is_directory(parent, ec)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s=%s: the directory %s does not exist; create it first", name, path,
                        parent.string()));
  }
  return absl::OkStatus();
}

absl::Status EnterBuildWorkingDirectory() {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (dir == nullptr || *dir == '\0') return absl::OkStatus();
  if (::chdir(dir) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot enter the directory bazel run was started in (BUILD_WORKING_DIRECTORY=%s): %s",
        dir, std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
