// Checkpoint files: the atomic write protocol and the guarded read (format in checkpoint.cc).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/atomic_file.h"
#include "core/status_macros.h"
#include "trainer/checkpoint/checkpoint.h"

namespace hogwild {
namespace {

// Largest checkpoint file read: 64 GiB, far above any model this trainer holds in host memory;
// it only stops a wrong path (a device, a huge unrelated file) from being read into memory.
constexpr int64_t kMaxCheckpointBytes = int64_t{64} << 30;

absl::Status IoError(const std::string& what, const std::string& path, int err) {
  return absl::InternalError(absl::StrFormat("%s %s: %s", what, path, std::strerror(err)));
}

// Closes the descriptor on every path; close errors matter only where checked explicitly.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, const std::string& bytes, const std::string& path) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Errors of the probe write: a directory the user cannot write is a permission problem, the
// rest (ENOSPC, EIO, ...) is an I/O error like WriteCheckpoint's.
absl::Status ProbeError(const std::string& dir, const std::string& what, int err) {
  const std::string message = absl::StrFormat("%s: cannot %s (%s)", dir, what, std::strerror(err));
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::Status CheckCheckpointDirWritable(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("the checkpoint directory name is empty");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::error_code ignored;
  if (!std::filesystem::is_directory(dir, ignored)) {
    if (std::filesystem::exists(std::filesystem::symlink_status(dir, ignored))) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: exists and is not a directory", dir));
    }
    return absl::InvalidArgumentError(absl::StrFormat("%s: cannot create the directory%s", dir,
                                                      ec ? " (" + ec.message() + ")" : ""));
  }
  // A probe name no other run or call can hold, next to where the checkpoint will go.
  std::string probe = (std::filesystem::path(dir) / ".checkpoint.hwckpt.probe.XXXXXX").string();
  Fd fd(::mkostemp(probe.data(), O_CLOEXEC));
  if (fd.get() < 0) return ProbeError(dir, "create a file in it", errno);
  absl::Status status = WriteAll(fd.get(), "hogwild checkpoint directory probe\n", probe);
  if (status.ok() && ::fsync(fd.get()) != 0) status = ProbeError(dir, "fsync " + probe, errno);
  if (status.ok() && ::close(fd.release()) != 0) status = ProbeError(dir, "close " + probe, errno);
  if (::unlink(probe.c_str()) != 0 && status.ok()) {
    status = ProbeError(dir, "remove " + probe, errno);
  }
  return status;
}

std::string CheckpointPath(const std::string& dir) {
  return (std::filesystem::path(dir) / kCheckpointFileName).string();
}

absl::Status WriteCheckpoint(const std::string& dir, const Checkpoint& checkpoint) {
  if (const absl::Status finite = CheckCheckpointFinite(checkpoint); !finite.ok()) {
    return absl::Status(finite.code(), absl::StrCat(finite.message(), "; not written into ", dir,
                                                    ", the previous checkpoint is kept"));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--checkpoint_dir=%s is not a directory and cannot be created%s", dir,
                        ec ? " (" + ec.message() + ")" : ""));
  }
  return WriteFileAtomically(CheckpointPath(dir), SerializeCheckpoint(checkpoint));
}

absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrFormat("%s: no such file", path));
    if (err == EACCES) {
      return absl::PermissionDeniedError(
          absl::StrFormat("%s: not readable (%s)", path, std::strerror(err)));
    }
    return IoError("cannot open", path, err);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return IoError("cannot stat", path, errno);
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory, expected a checkpoint file", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a regular file, expected a checkpoint file", path));
  }
  if (st.st_size == 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: the file is empty", path));
  }
  if (st.st_size > kMaxCheckpointBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d bytes, larger than any checkpoint (%d); is this the right file?",
                        path, st.st_size, kMaxCheckpointBytes));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      // EISDIR never reaches here (fstat); EIO and friends do.
      return IoError("cannot read", path, errno);
    }
    if (n == 0) break;  // the file shrank: the parser reports it as truncated
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return ParseCheckpoint(bytes, path);
}

absl::StatusOr<std::optional<Checkpoint>> ReadLatestCheckpoint(const std::string& dir) {
  std::error_code ec;
  const auto dir_status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(dir_status)) return std::optional<Checkpoint>();
  if (!std::filesystem::is_directory(dir_status)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--checkpoint_dir=%s is not a directory", dir));
  }
  const std::string path = CheckpointPath(dir);
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    return std::optional<Checkpoint>();
  }
  HOGWILD_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpointFile(path));
  return std::optional<Checkpoint>(std::move(checkpoint));
}

}  // namespace hogwild
