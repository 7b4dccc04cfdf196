#include "trainer/cli/quiet_stderr.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hogwild {
namespace {

// True while some rank is silenced: an exit then (Abseil's exit(1), a `return 1` from main)
// lingers, so that the rank that speaks exits first.
std::atomic<bool> g_lingering{false};

extern "C" void LingerAtExit() {
  if (!g_lingering.load(std::memory_order_acquire)) return;
  // mpirun ends the whole job at the first non-zero exit: a silent rank exiting first could
  // have rank 0 killed, or its message cut by mpirun's report, before the message is out.
  const timespec linger{QuietStderr::kLingerSeconds, 0};
  nanosleep(&linger, nullptr);
}

}  // namespace

QuietStderr::QuietStderr(bool quiet) {
  if (!quiet) return;
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd < 0) return;
  // Close-on-exec: a process exec'd meanwhile (train -> train_gpu) must not inherit it.
  saved_fd_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved_fd_ >= 0) {
    std::fflush(stderr);
    if (::dup2(null_fd, STDERR_FILENO) < 0) {
      ::close(saved_fd_);
      saved_fd_ = -1;
    }
  }
  ::close(null_fd);
  if (saved_fd_ >= 0) {
    static const bool registered = std::atexit(LingerAtExit) == 0;
    g_lingering.store(registered, std::memory_order_release);
  }
}

void QuietStderr::Restore() {
  if (saved_fd_ < 0) return;
  g_lingering.store(false, std::memory_order_release);
  RestoreFd();
}

void QuietStderr::RestoreFd() {
  if (saved_fd_ < 0) return;
  std::fflush(stderr);
  ::dup2(saved_fd_, STDERR_FILENO);
  ::close(saved_fd_);
  saved_fd_ = -1;
}

}  // namespace hogwild
