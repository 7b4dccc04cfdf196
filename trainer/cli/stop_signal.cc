#include "trainer/cli/stop_signal.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "absl/strings/str_format.h"
#include "core/atomic_file.h"

namespace hogwild {
namespace {

// The pipe the handler writes to: [0] read end (watcher), [1] write end (handler). -1 when no
// instance is installed. Plain ints read by the handler: set before the handlers are installed
// and reset only after they are removed.
int g_pipe[2] = {-1, -1};

// One record in the pipe: signal number 0 is the destructor's wake-up, any other a signal, with
// when it arrived. 16 bytes, below PIPE_BUF, so each write(2) lands whole.
struct Arrival {
  int64_t signo;
  int64_t monotonic_ns;
};
constexpr int64_t kShutdown = 0;

int64_t MonotonicNs() {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe (POSIX)
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

extern "C" void OnStopSignal(int signo) {
  const int saved_errno = errno;  // a handler must not clobber the interrupted code's errno
  const Arrival arrival{signo, MonotonicNs()};
  [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &arrival, sizeof(arrival));
  errno = saved_errno;
}

// Reads one whole record; false at end of file or on an error other than EINTR.
bool ReadArrival(int fd, Arrival* arrival) {
  char* bytes = reinterpret_cast<char*>(arrival);
  size_t got = 0;
  while (got < sizeof(*arrival)) {
    const ssize_t n = ::read(fd, bytes + got, sizeof(*arrival) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
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
  std::unique_ptr<StopOnSignals> stop;
  try {
    stop.reset(new StopOnSignals(exit_on_second, std::move(on_first)));
  } catch (const std::system_error& e) {
    // No thread can start (a process or address-space limit): say so instead of terminating.
    ::close(g_pipe[0]);
    ::close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot start the signal watcher thread: %s", e.what()));
  }

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
  const Arrival shutdown{kShutdown, 0};
  while (::write(g_pipe[1], &shutdown, sizeof(shutdown)) < 0 && errno == EINTR) {
  }
  watcher_.join();
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

void StopOnSignals::Watch() {
  int64_t first_ns = 0;  // when the first signal arrived
  while (true) {
    Arrival arrival{};
    if (!ReadArrival(g_pipe[0], &arrival) || arrival.signo == kShutdown) return;
    const int signo = static_cast<int>(arrival.signo);
    if (!stop_requested_.load(std::memory_order_relaxed)) {
      first_ns = arrival.monotonic_ns;
      signal_.store(signo, std::memory_order_release);
      stop_requested_.store(true, std::memory_order_release);
      if (on_first_) on_first_(signo);
    } else if (signo == signal_.load(std::memory_order_relaxed) &&
               arrival.monotonic_ns - first_ns < kDuplicateWindowNs) {
      // The same request delivered twice (see the header): not a second one.
      continue;
    } else if (exit_on_second_) {
      static constexpr char kMessage[] = "\nhogwild: second signal; exiting without waiting\n";
      [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
      // A checkpoint or other file being replaced keeps its previous version; its half-written
      // temporary file goes.
      RemovePendingTempFiles();
      _exit(128 + signo);
    }
  }
}

}  // namespace hogwild
