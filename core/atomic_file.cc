#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

// The temporary files being written, for RemovePendingTempFiles(). A slot is claimed (kFree ->
// kClaimed) by one writer, filled, then published (kPending); a signal handler unlinks the
// pending ones. Fixed storage, so the handler touches no allocator. A write that finds no free
// slot (more concurrent atomic writes than slots) proceeds unregistered.
constexpr int kSlots = 16;
constexpr int kFree = 0, kClaimed = 1, kPending = 2;
struct Slot {
  std::atomic<int> state{kFree};
  char path[4096];
};
Slot slots[kSlots];

int Register(const std::string& tmp) {
  if (tmp.size() >= sizeof(Slot::path)) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (slots[i].state.compare_exchange_strong(expected, kClaimed)) {
      std::memcpy(slots[i].path, tmp.c_str(), tmp.size() + 1);
      slots[i].state.store(kPending, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void Unregister(int slot) {
  if (slot >= 0) slots[slot].state.store(kFree, std::memory_order_release);
}

// The process's umask, read without changing it (umask(2) would race with other threads).
mode_t CurrentUmask() {
  std::FILE* f = std::fopen("/proc/self/status", "re");
  unsigned mask = 022;
  if (f != nullptr) {
    char line[256];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
    }
    std::fclose(f);
  }
  return static_cast<mode_t>(mask);
}

absl::Status Error(const std::string& path, const std::string& step, int err) {
  const std::string message = absl::StrFormat("%s: cannot %s (%s)", path, step, std::strerror(err));
  if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

void CleanupAndReraise(int signo) {
  const int saved = errno;
  RemovePendingTempFiles();
  errno = saved;
  // SA_RESETHAND restored the default action; the signal is blocked in its handler, so it is
  // delivered (and ends the process) when this returns.
  ::raise(signo);
}

}  // namespace

void RemovePendingTempFiles() {
  for (Slot& slot : slots) {
    if (slot.state.load(std::memory_order_acquire) == kPending) ::unlink(slot.path);
  }
}

void InstallTempFileCleanupOnSignals() {
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(signo, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = CleanupAndReraise;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    ::sigaction(signo, &action, nullptr);
  }
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes) {
  namespace fs = std::filesystem;
  const fs::path destination(path);
  const fs::path folder =
      destination.parent_path().empty() ? fs::path(".") : destination.parent_path();
  // A long name keeps its start: the temporary name must stay under NAME_MAX (255).
  const std::string name = destination.filename().string().substr(0, 200);
  std::string tmp = (folder / ("." + name + ".tmp.XXXXXX")).string();
  // Signals are blocked between the creation and the registration, so that no handler can end
  // the process while the new file is not yet known to RemovePendingTempFiles().
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, signo);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  const int create_errno = errno;
  const int slot = fd >= 0 ? Register(tmp) : -1;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (fd < 0) return Error(path, "create a temporary file in " + folder.string(), create_errno);

  absl::Status status;
  const auto fail = [&](const std::string& step) {
    if (status.ok()) status = Error(path, step, errno);
  };
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (status.ok() && left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write it");
    } else {
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  // mkostemp creates the file 0600; the result is an ordinary output file.
  if (status.ok() && ::fchmod(fd, 0644 & ~CurrentUmask()) != 0) fail("set its mode");
  // The data must be on disk before the rename publishes it, or a power loss could leave the
  // new name pointing at an empty or partial file (the ext4 "zero-length file" problem).
  if (status.ok() && ::fsync(fd) != 0) fail("fsync it");
  if (::close(fd) != 0) fail("close it");
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) fail("rename it into place");
  if (!status.ok()) ::unlink(tmp.c_str());
  Unregister(slot);
  if (!status.ok()) return status;
  // Make the rename itself durable: the new directory entry is on disk only after the folder is
  // synced.
  const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Error(path, "open " + folder.string() + " to fsync it", errno);
  if (::fsync(dir_fd) != 0) status = Error(path, "fsync " + folder.string(), errno);
  ::close(dir_fd);
  return status;
}

}  // namespace hogwild
