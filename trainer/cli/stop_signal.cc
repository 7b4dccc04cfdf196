#include "trainer/cli/stop_signal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

// The pipe the handler writes to: [0] read end (watcher), [1] write end (handler). -1 when no
// instance is installed. Plain ints read by the handler: set before the handlers are installed
// and reset only after they are removed.
int g_pipe[2] = {-1, -1};

// Byte 0 in the pipe is the destructor's wake-up, any other byte a signal number.
constexpr char kShutdown = 0;

extern "C" void OnStopSignal(int signo) {
  const int saved_errno = errno;  // a handler must not clobber the interrupted code's errno
  const char byte = static_cast<char>(signo);
  [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &byte, 1);
  errno = saved_errno;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StopOnSignals>> StopOnSignals::Install(
    bool exit_on_second, std::function<void(int)> on_first) {
  if (g_pipe[0] >= 0) {
    return absl::FailedPreconditionError("StopOnSignals is already installed");
  }
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
    g_pipe[0] = g_pipe[1] = -1;
    return absl::InternalError(
        absl::StrFormat("cannot create the signal pipe: %s", std::strerror(errno)));
  }
  // The handler must never block: a full pipe (thousands of signals) just drops the byte.
  ::fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);
  std::unique_ptr<StopOnSignals> stop(new StopOnSignals(exit_on_second, std::move(on_first)));

  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // interrupted reads and writes resume instead of failing
  if (::sigaction(SIGINT, nullptr, &stop->old_int_) != 0 ||
      ::sigaction(SIGTERM, &action, &stop->old_term_) != 0) {
    return absl::InternalError(
        absl::StrFormat("cannot install the SIGTERM handler: %s", std::strerror(errno)));
  }
  if (stop->old_int_.sa_handler != SIG_IGN) {
    if (::sigaction(SIGINT, &action, nullptr) != 0) {
      return absl::InternalError(
          absl::StrFormat("cannot install the SIGINT handler: %s", std::strerror(errno)));
    }
    stop->int_installed_ = true;
  }
  return stop;
}

StopOnSignals::StopOnSignals(bool exit_on_second, std::function<void(int)> on_first)
    : exit_on_second_(exit_on_second), on_first_(std::move(on_first)) {
  watcher_ = std::thread([this] { Watch(); });
}

StopOnSignals::~StopOnSignals() {
  if (int_installed_) ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  const char byte = kShutdown;
  while (::write(g_pipe[1], &byte, 1) < 0 && errno == EINTR) {
  }
  watcher_.join();
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

void StopOnSignals::Watch() {
  while (true) {
    char byte = 0;
    const ssize_t n = ::read(g_pipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kShutdown) return;
    const int signo = byte;
    if (!stop_requested_.load(std::memory_order_relaxed)) {
      signal_.store(signo, std::memory_order_release);
      stop_requested_.store(true, std::memory_order_release);
      if (on_first_) on_first_(signo);
    } else if (exit_on_second_) {
      static constexpr char kMessage[] = "\nhogwild: second signal; exiting without waiting\n";
      [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
      _exit(128 + signo);
    }
  }
}

}  // namespace hogwild
