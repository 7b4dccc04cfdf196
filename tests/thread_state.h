// Waiting for a thread to be blocked, without sleeping for a guessed time: the kernel's own
// scheduler state of each thread of this process, from /proc/self/task/<tid>/stat (Linux).
//
// A test that must know "this thread is now blocked in Wait()" (to check that Cancel() wakes a
// sleeper, not a thread that has yet to arrive) has the thread publish CurrentThreadId() just
// before the call and waits until that thread is asleep ('S'). Nothing else between the publish
// and the call can sleep, so the thread is then inside the blocking call. The waits poll with
// std::this_thread::yield(); their limit only bounds a hang.
#ifndef HOGWILD_TESTS_THREAD_STATE_H_
#define HOGWILD_TESTS_THREAD_STATE_H_

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace hogwild::testing {

// The calling thread's kernel id (gettid(2)).
inline pid_t CurrentThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// The scheduler state of thread `tid` of this process: 'R' running or runnable, 'S' asleep
// (blocked on a futex, a pipe, ...), 'D', 'Z', ...; '?' when it cannot be read (no such thread).
inline char ThreadState(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  // "tid (comm) S ...": the name may contain spaces and parentheses, so search from the end.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return '?';
  return stat[paren + 2];
}

// True once thread `tid` is asleep; false if it was not within `limit_s` (a hang or a busy
// wait where a blocking one was expected).
inline bool WaitUntilAsleep(pid_t tid, double limit_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (ThreadState(tid) != 'S') {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// True once every thread of this process but the caller is asleep at one look over all of them
// (every helper thread is blocked: producers on full queues, pools idle); false if that did not
// happen within `limit_s`.
inline bool WaitUntilAllOthersAsleep(double limit_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  const std::string self = std::to_string(CurrentThreadId());
  while (true) {
    bool all_asleep = true;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      const std::string tid = entry.path().filename().string();
      // A thread that ended since the listing reads as '?': it blocks nothing.
      const char state = tid == self ? 'S' : ThreadState(std::stoi(tid));
      if (state != 'S' && state != '?') {
        all_asleep = false;
        break;
      }
    }
    if (all_asleep) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_THREAD_STATE_H_
