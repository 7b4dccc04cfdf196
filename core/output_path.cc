#include "core/output_path.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
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
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=%s: the directory %s does not exist; create it first", name, path, parent.string()));
  }
  return absl::OkStatus();
}

absl::Status CheckReplacedFilePath(const std::string& name, const std::string& path) {
  if (absl::Status ok = CheckOutputFilePath(name, path); !ok.ok()) return ok;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=%s is not a regular file (a device, a pipe or a socket), which this run would "
        "replace; give a file path",
        name, path));
  }
  return absl::OkStatus();
}

namespace {

std::string Describe(const RunFile& f) {
  if (f.file.empty() || f.file == f.value) return absl::StrFormat("%s=%s", f.option, f.value);
  return absl::StrFormat("%s=%s (its file %s)", f.option, f.value, f.file);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The absolute path that writing `path` would create: symlinks resolved, a dangling one at the
// end included (writing through it creates its target), "." and ".." removed.
std::optional<std::filesystem::path> Resolved(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  // (symlink_status reports a missing path as not_found and sets its own error code.)
  std::error_code missing;
  for (int hops = 0; !ec && hops < 40 && fs::is_symlink(fs::symlink_status(p, missing)); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  if (ec) return std::nullopt;
  p = fs::weakly_canonical(p, ec);
  if (ec) return std::nullopt;
  return p.lexically_normal();
}

bool SameFile(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  struct stat sa, sb;
  const bool a_exists = ::stat(a.c_str(), &sa) == 0;
  const bool b_exists = ::stat(b.c_str(), &sb) == 0;
  if ((a_exists && S_ISCHR(sa.st_mode)) || (b_exists && S_ISCHR(sb.st_mode))) return false;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  const std::optional<fs::path> pa = Resolved(a);
  const std::optional<fs::path> pb = Resolved(b);
  return pa && pb && *pa == *pb;
}

}  // namespace

absl::Status CheckDistinctFiles(absl::Span<const RunFile> files) {
  for (size_t i = 0; i < files.size(); ++i) {
    const RunFile& a = files[i];
    const std::string& path_a = a.file.empty() ? a.value : a.file;
    if (path_a.empty() || (!a.output && !Exists(path_a))) continue;
    for (size_t j = i + 1; j < files.size(); ++j) {
      const RunFile& b = files[j];
      const std::string& path_b = b.file.empty() ? b.value : b.file;
      if (path_b.empty() || (!b.output && !Exists(path_b)) || (!a.output && !b.output) ||
          !SameFile(path_a, path_b)) {
        continue;
      }
      // Named first and told to move: an output (the first one when both are).
      const RunFile& out = a.output ? a : b;
      const RunFile& other = a.output ? b : a;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is the same file as %s%s; give %s another path", Describe(out), Describe(other),
          other.output ? "" : ", which writing it would destroy", out.option));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> OpenOutputStream(const std::string& name, const std::string& path) {
  // O_NONBLOCK: open(2) of a pipe without a reader fails with ENXIO instead of waiting for one
  // (and a wait there would outlast even the stop signal, whose handler only sets a flag).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int err = errno;
    struct stat st;
    if (err == ENXIO && ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s=%s is a pipe that no process reads, so nothing could be written to it; start its "
          "reader first, or give a file path",
          name, path));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s=%s: cannot create it (%s)", name, path, std::strerror(err)));
  }
  // Rows are written whole; a pipe whose reader is slow must make the writer wait, not fail.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrFormat("%s=%s: cannot set it up for writing (%s)",
                                                      name, path, std::strerror(err)));
  }
  return fd;
}

int CheckedExitCode(int code) {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // ferror without a failing flush: an earlier write failed and its errno is gone.
    const int err = errno;
    std::fprintf(stderr, "error: cannot write to standard output (%s)\n",
                 err != 0 ? std::strerror(err) : "a write failed");
    return code == 0 ? 1 : code;
  }
  return code;
}

int EndCommand(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) std::_Exit(code);
  return code;
}

absl::Status EnterBuildWorkingDirectory() {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (dir == nullptr || *dir == '\0') return absl::OkStatus();
  if (::chdir(dir) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot enter the directory bazel run was started in (BUILD_WORKING_DIRECTORY=%s): %s", dir,
        std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
