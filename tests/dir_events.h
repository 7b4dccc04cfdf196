// Waiting for another process to write a file, without polling on a guessed period: the wait
// re-checks its condition at each change inotify(7) reports in the directory (Linux).
#ifndef HOGWILD_TESTS_DIR_EVENTS_H_
#define HOGWILD_TESTS_DIR_EVENTS_H_

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace hogwild::testing {

// Returns true as soon as `condition()` holds, evaluating it first and then after every file
// created, written, renamed into or deleted from the existing directory `dir` (checkpoints
// appear there by rename); false when it still does not hold after `limit_s`, a limit that only
// bounds a hang. The watch is set before the first check, so no change is missed.
template <typename Condition>
bool WaitForDirChange(const std::string& dir, double limit_s, Condition condition) {
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return false;
  const bool watching =
      ::inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE) >=
      0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  bool met = false;
  while (watching && !(met = condition())) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd events{.fd = fd, .events = POLLIN, .revents = 0};
    ::poll(&events, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    char drain[4096];
    while (::read(fd, drain, sizeof(drain)) > 0) {
    }
  }
  ::close(fd);
  return met;
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_DIR_EVENTS_H_
