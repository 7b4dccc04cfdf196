// What a training run started from Python needs from Python while Train() runs with the GIL
// released: the user's row callback, called from the trainer's threads; Ctrl-C; and the first
// Python exception, raised again once Train() has returned.
//
//   PythonBridge bridge(on_log_row);            // GIL held
//   options.log_row_sink = bridge.RowSink();
//   options.progress = bridge.SignalCheck();
//   options.progress_period = PythonBridge::kSignalCheckPeriod;
//   options.stop_requested = bridge.stop_requested();
//   { pybind11::gil_scoped_release release; result = Train(options, train, test); }
//   bridge.RethrowIfFailed();                   // GIL held again
//
// Ctrl-C: CPython's own SIGINT handler only notes the signal; the Python-level handler (which
// raises KeyboardInterrupt) runs when the main thread next checks for signals. The main thread
// is inside Train(), which calls the progress sink every kSignalCheckPeriod on that thread, so
// SignalCheck() takes the GIL there and runs PyErr_CheckSignals(). An exception from a handler
// is kept and requests the stop (the workers finish their current step, a checkpoint is written
// when there is a checkpoint_dir, Train() returns), and RethrowIfFailed() raises it. From a
// thread other than the main thread signals are never checked, as everywhere in Python.
//
// A callback that raises: the row sink returns kAborted, which stops the run like any worker
// error, and RethrowIfFailed() raises the callback's own exception (type, message, traceback).
// Only the first exception (of the callback and signal handlers) is kept. The callback is not
// called again after it raised; after Ctrl-C it still gets the rows of the orderly stop.
//
// Thread-safety: RowSink() may be called from any thread, one call at a time (the trainer
// serializes them), with or without the GIL; it takes the GIL for the callback. SignalCheck()
// from the thread that called Train(). The constructor, RethrowIfFailed() and the destructor
// with the GIL held. The bridge must outlive the Train() call.
#ifndef HOGWILD_PYTHON_PYTHON_BRIDGE_H_
#define HOGWILD_PYTHON_PYTHON_BRIDGE_H_

#include <atomic>
#include <mutex>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "pybind11/pybind11.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/metrics/progress.h"

namespace hogwild::python {

class PythonBridge {
 public:
  // How often the main thread looks for signals while training: Ctrl-C is honoured within
  // this (plus the current step). Each look takes the GIL for microseconds.
  static constexpr absl::Duration kSignalCheckPeriod = absl::Milliseconds(100);

  // on_log_row: a callable taking one dict (a convergence-log row), or None.
  explicit PythonBridge(pybind11::object on_log_row);
  ~PythonBridge();
  PythonBridge(const PythonBridge&) = delete;
  PythonBridge& operator=(const PythonBridge&) = delete;

  // Calls on_log_row with the row as a dict (docs/convergence_log.md's columns as keys; test_loss
  // and test_accuracy None on train rows). Empty when on_log_row is None.
  LogRowSink RowSink();

  // Runs Python's signal handlers (see the file comment); ignores the report itself.
  ProgressSink SignalCheck();

  // Set once a Python exception asked the run to stop.
  const std::atomic<bool>* stop_requested() const { return &stop_; }

  // Raises the first Python exception caught during the run, if any.
  void RethrowIfFailed();

  // The row as the dict the callback gets. GIL held.
  static pybind11::dict RowToDict(const LogRow& row);

 private:
  // Keeps the current Python exception if it is the first, and requests the stop. GIL held.
  void KeepCurrentError();

  pybind11::object on_log_row_;
  bool callback_failed_ = false;  // guarded by the GIL
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::optional<pybind11::error_already_set> error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hogwild::python

#endif  // HOGWILD_PYTHON_PYTHON_BRIDGE_H_
