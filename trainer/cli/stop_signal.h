// Turns SIGINT and SIGTERM into a stop request that the trainer honours at the next step
// boundary (finish the current step, write a checkpoint, return), instead of killing the
// process mid-step.
//
// How: a sigaction handler does the one async-signal-safe thing it must, write(2) the signal
// number into a pipe; a watcher thread reads the pipe and does the rest (sets the
// std::atomic<bool>, prints through the callback) as ordinary code. A handler, rather than
// blocking the signals and sigwait(2)-ing for them, because libraries start threads before
// main() (OpenBLAS's pthread build starts its pool at load time), and the kernel may deliver a
// process-directed signal to any thread that does not block it. A second signal while the first
// is being honoured ends the process at once with _exit(128 + signal), for a user who does not
// want to wait. The same signal again within kDuplicateWindowNs (250 ms) of the first is the same
// request delivered twice, not a second one, and is ignored: GNU timeout sends its signal to the
// child and then to its own process group (the child included), and `kill -- -PGID` beside a
// terminal's Ctrl-C does the same; no person sends a deliberate second signal that fast.
//
// As the shell convention (and CPython) has it, a SIGINT that was ignored when the process
// started (a background job of a non-interactive shell) stays ignored; SIGTERM is always taken.
//
//   auto stop = hogwild::StopOnSignals::Install(/*exit_on_second=*/true, on_first);
//   options.stop_requested = &(*stop)->stop_requested();
//
// Thread-safety: at most one instance per process at a time. stop_requested() and signal() are
// safe from any thread.
#ifndef HOGWILD_TRAINER_CLI_STOP_SIGNAL_H_
#define HOGWILD_TRAINER_CLI_STOP_SIGNAL_H_

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"

namespace hogwild {

class StopOnSignals {
 public:
  // A repeat of the first signal (same number) arriving sooner than this after it is a duplicate.
  static constexpr int64_t kDuplicateWindowNs = 250'000'000;

  // `on_first(signo)` runs on the watcher thread after the stop flag is set (may be empty).
  // Errors: kFailedPrecondition if another instance is installed; kInternal when the pipe or
  // the handlers cannot be set up; kResourceExhausted "cannot start the signal watcher thread:
  // <why>" when no thread can start (a process or address-space limit).
  static absl::StatusOr<std::unique_ptr<StopOnSignals>> Install(bool exit_on_second,
                                                                std::function<void(int)> on_first);

  // Restores the previous handlers and stops the watcher thread.
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // Becomes true at the first SIGINT/SIGTERM.
  const std::atomic<bool>& stop_requested() const { return stop_requested_; }
  // The first signal received (SIGINT or SIGTERM), or 0.
  int signal() const { return signal_.load(std::memory_order_acquire); }

 private:
  StopOnSignals(bool exit_on_second, std::function<void(int)> on_first);
  void Watch();

  const bool exit_on_second_;
  const std::function<void(int)> on_first_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  bool int_installed_ = false;
  std::atomic<bool> stop_requested_{false};
  std::atomic<int> signal_{0};
  std::thread watcher_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_STOP_SIGNAL_H_
