#include "python/python_bridge.h"

#include <exception>
#include <utility>

#include "absl/status/status.h"

namespace hogwild::python {
namespace py = pybind11;

PythonBridge::PythonBridge(py::object on_log_row) : on_log_row_(std::move(on_log_row)) {}

PythonBridge::~PythonBridge() = default;

py::dict PythonBridge::RowToDict(const LogRow& row) {
  py::dict d;
  d["wall_time_s"] = row.wall_time_s;
  d["kind"] = row.eval ? "eval" : "train";
  d["epoch"] = row.epoch;
  d["step"] = row.step;
  d["examples_seen"] = row.examples_seen;
  d["worker"] = row.worker;
  d["train_loss"] = row.train_loss;
  d["test_loss"] = row.test_loss ? py::object(py::float_(*row.test_loss)) : py::none();
  d["test_accuracy"] = row.test_accuracy ? py::object(py::float_(*row.test_accuracy)) : py::none();
  d["staleness_mean"] = row.staleness_mean;
  d["staleness_max"] = row.staleness_max;
  d["lr"] = row.lr;
  d["delay_s"] = row.delay_s;
  // Runs across processes only (mpi/sharded_hogwild.h): always None in a Python process.
  d["remote_staleness_mean"] =
      row.remote_staleness_mean ? py::object(py::float_(*row.remote_staleness_mean)) : py::none();
  d["remote_staleness_max"] =
      row.remote_staleness_max ? py::object(py::int_(*row.remote_staleness_max)) : py::none();
  d["ema_test_accuracy"] =
      row.ema_test_accuracy ? py::object(py::float_(*row.ema_test_accuracy)) : py::none();
  d["eval_seconds"] = row.eval_seconds;
  d["exchanges"] = row.exchanges;
  d["bytes_per_worker"] = row.bytes_per_worker;
  d["outer_step_norm"] =
      row.outer_step_norm ? py::object(py::float_(*row.outer_step_norm)) : py::none();
  d["dropped"] = row.dropped;
  return d;
}

void PythonBridge::KeepCurrentError() {
  py::error_already_set error;  // takes the exception out of the interpreter's error indicator
  stop_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_) error_ = std::move(error);
}

LogRowSink PythonBridge::RowSink() {
  if (on_log_row_.is_none()) return {};
  return [this](const LogRow& row) -> absl::Status {
    py::gil_scoped_acquire gil;
    // The trainer calls a failed sink no more; this guards the promise all the same. (After
    // Ctrl-C the rows keep coming: the stop is orderly, and the last rows belong to the run.)
    if (callback_failed_) return absl::AbortedError("on_log_row raised an exception");
    try {
      on_log_row_(RowToDict(row));
      return absl::OkStatus();
    } catch (py::error_already_set& e) {
      e.restore();
    } catch (const std::exception& e) {
      // A conversion error of pybind11 itself, with the interpreter's indicator clear.
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    callback_failed_ = true;
    KeepCurrentError();
    return absl::AbortedError("on_log_row raised an exception");
  };
}

ProgressSink PythonBridge::SignalCheck() {
  return [this](const ProgressReport&) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) KeepCurrentError();
  };
}

void PythonBridge::RethrowIfFailed() {
  std::optional<py::error_already_set> error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    error.swap(error_);
  }
  if (error) throw *error;
}

}  // namespace hogwild::python
