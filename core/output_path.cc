#include "core/output_path.h"

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

}  // namespace hogwild
