// Turns a hang into a test failure: runs a callable on its own thread and, if it has not
// returned within the limit, prints what hung and ends the test process with exit code 1
// (a stuck thread cannot be cancelled or joined, so failing the whole binary is the only way
// not to hang the suite).
#ifndef HOGWILD_TESTS_WATCHDOG_H_
#define HOGWILD_TESTS_WATCHDOG_H_

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <utility>

namespace hogwild::testing {

// Returns fn()'s result; the limit should be generous enough for sanitizer builds (10x slower)
// and far below Bazel's test timeout, so a hang is reported as such.
template <typename Fn>
auto WithWatchdog(double limit_s, const std::string& what, Fn&& fn) -> decltype(fn()) {
  std::packaged_task<decltype(fn())()> task(std::forward<Fn>(fn));
  auto result = task.get_future();
  std::thread thread(std::move(task));
  if (result.wait_for(std::chrono::duration<double>(limit_s)) != std::future_status::ready) {
    std::fprintf(stderr, "\nWATCHDOG: %s did not finish within %.0f s: a hang\n", what.c_str(),
                 limit_s);
    std::fflush(stderr);
    std::_Exit(1);
  }
  thread.join();
  return result.get();
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_WATCHDOG_H_
