// hogwild._hogwild: the C++ half of the Python module. hogwild/__init__.py holds the public
// train() (its keywords, their defaults and documentation) and calls _train() here with every
// option resolved to a plain value; this file turns them into TrainerOptions and Datasets, runs
// Train() with the GIL released, and turns statuses into Python exceptions:
//   ValueError    kInvalidArgument, kOutOfRange, kFailedPrecondition (bad options and data)
//   RuntimeError  every other code (a missing dataset, out of memory, a worker's failure)
// with the library's message, option fields named by their keywords (python/keyword_names.h).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/mode.h"
#include "kernels/optimizer_name.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/keyword_names.h"
#include "python/numpy_dataset.h"
#include "python/python_bridge.h"
#include "python/raise_status.h"
#include "python/sparse_binding.h"
#include "trainer/data/dataset.h"
#include "trainer/data/mnist.h"
#include "trainer/device.h"
#include "trainer/trainer.h"
#include "trainer/trainer_options.h"

namespace hogwild::python {
namespace {
namespace py = pybind11;

[[noreturn]] void Raise(const absl::Status& status) {
  RaiseStatus(status.code(), WithKeywordNames(status.message()));
}

template <typename T>
T ValueOrRaise(absl::StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return *std::move(value);
}

// Takes `key` out of `options`, so that keys left over (a keyword __init__.py passes but this
// file does not read) are caught.
py::object Take(py::dict& options, const char* key) {
  if (!options.contains(key)) {
    throw py::key_error(absl::StrFormat("_train: option '%s' is missing", key));
  }
  py::object value = options[key];
  PyDict_DelItemString(options.ptr(), key);
  return value;
}

template <typename T>
T TakeAs(py::dict& options, const char* key) {
  return Take(options, key).cast<T>();
}

// An int keyword that the library keeps as an int: one that does not fit is refused with the
// library's own range, rather than wrapped around.
int TakeInt(py::dict& options, const char* key, int lo, int hi) {
  const int64_t value = TakeAs<int64_t>(options, key);
  if (value < lo || value > hi) {
    throw py::value_error(
        absl::StrFormat("%s=%d is out of range; it must be in [%d, %d]", key, value, lo, hi));
  }
  return static_cast<int>(value);
}

// A float keyword as the float32 the trainer computes in; a finite value float32 cannot hold
// (overflow, or a nonzero value below its smallest normal) is refused rather than turned into
// inf or 0 (trainer/cli/flags_parse.h ToFloat32 does the same for flags).
float TakeFloat32(py::dict& options, const char* key) {
  const double value = TakeAs<double>(options, key);
  const float f = static_cast<float>(value);
  if (std::isfinite(value) && (!std::isfinite(f) || (value != 0.0 && std::fabs(value) < FLT_MIN))) {
    throw py::value_error(
        absl::StrFormat("%s=%g is outside float32's range (magnitudes from %g to %g, or 0)", key,
                        value, FLT_MIN, FLT_MAX));
  }
  return f;
}

// As the command line: a keyword typed where these settings do not read it is refused, its
// default value included. `typed`: each typed keyword's repr(). Call it once `o` has its row sink
// (log_every is read with one).
void RefuseUnreadKeywords(const TrainerOptions& o,
                          const std::map<std::string, std::string>& typed) {
  for (const UnreadSetting& s : UnreadSettings(o, /*as_flags=*/false)) {
    if (const auto it = typed.find(s.name); it != typed.end()) {
      throw py::value_error(absl::StrFormat("%s=%s has no effect %s", s.name, it->second, s.where));
    }
  }
}

// The options of the dict `options` (emptied); `*typed` receives its "typed" entry, the repr() of
// each keyword the user typed among those RefuseUnreadKeywords checks.
TrainerOptions OptionsFromDict(py::dict options, std::map<std::string, std::string>* typed) {
  TrainerOptions o;
  o.mode = ValueOrRaise(ParseMode(TakeAs<std::string>(options, "mode")));
  o.devices = ValueOrRaise(ResolveDevices(TakeAs<std::string>(options, "devices")));
  const bool gpus = o.devices[0].is_gpu();
  // As the command line: a keyword these devices do not read is refused, never dropped.
  const py::object workers = Take(options, "workers");
  const py::object workers_per_device = Take(options, "workers_per_device");
  if (gpus && !workers.is_none()) {
    throw py::value_error("workers has no effect with GPU devices; use workers_per_device");
  }
  if (!gpus && !workers_per_device.is_none()) {
    throw py::value_error("workers_per_device has no effect with devices='cpu'; use workers");
  }
  if (!gpus) {
    py::dict w;
    const unsigned cores = std::thread::hardware_concurrency();
    w["workers"] = workers.is_none() ? py::int_(cores == 0 ? 1 : cores) : workers;
    o.num_workers = TakeInt(w, "workers", 1, kMaxWorkers);
  } else if (!workers_per_device.is_none()) {
    py::dict w;
    w["workers_per_device"] = workers_per_device;
    o.workers_per_device = TakeInt(w, "workers_per_device", 1, kMaxWorkersPerDevice);
  }
  o.model.name = TakeAs<std::string>(options, "model");
  o.model.hidden = TakeAs<std::vector<int64_t>>(options, "hidden");
  o.batch_size = TakeAs<int64_t>(options, "batch_size");
  o.epochs = TakeAs<int64_t>(options, "epochs");
  o.drop_last = TakeAs<bool>(options, "drop_last");
  o.lr.kind = ValueOrRaise(ParseLrScheduleKind(TakeAs<std::string>(options, "lr_schedule")));
  o.lr.base_lr = TakeFloat32(options, "lr");
  o.lr.decay_rate = TakeFloat32(options, "lr_decay_rate");
  o.lr.decay_steps = TakeAs<int64_t>(options, "lr_decay_steps");
  o.lr.warmup_steps = TakeAs<int64_t>(options, "lr_warmup_steps");
  o.lr.scaling = ValueOrRaise(ParseLrScaling(TakeAs<std::string>(options, "lr_scaling")));
  o.lr.reference_batch = TakeAs<int64_t>(options, "lr_reference_batch");
  o.sgd.optimizer = ValueOrRaise(ParseOptimizer(TakeAs<std::string>(options, "optimizer")));
  const std::string state = TakeAs<std::string>(options, "optimizer_state");
  if (state != "per_worker" && state != "shared") {
    throw py::value_error(absl::StrFormat(
        "optimizer_state='%s' is not an optimizer state; it must be 'per_worker' or 'shared'",
        state));
  }
  o.sgd.shared_optimizer_state = state == "shared";
  o.sgd.beta1 = TakeFloat32(options, "adam_beta1");
  o.sgd.beta2 = TakeFloat32(options, "adam_beta2");
  o.sgd.alpha = TakeFloat32(options, "rmsprop_alpha");
  o.sgd.eps = TakeFloat32(options, "eps");
  o.sgd.clip_global_norm = TakeFloat32(options, "clip_global_norm");
  o.sgd.moving_stats_momentum = TakeFloat32(options, "bn_momentum");
  o.sgd.momentum = TakeFloat32(options, "momentum");
  o.sgd.weight_decay = TakeFloat32(options, "weight_decay");
  o.weight_decay_biases = TakeAs<bool>(options, "weight_decay_biases");
  o.ema_decay = TakeFloat32(options, "ema_decay");
  o.ema_num_updates = TakeAs<bool>(options, "ema_num_updates");
  o.sgd.staleness_aware_lr = TakeAs<bool>(options, "staleness_aware_lr");
  o.sgd.delay_adaptive_lr = TakeAs<bool>(options, "delay_adaptive_lr");
  o.sgd.max_delay = TakeAs<int64_t>(options, "max_delay");
  o.staleness_bound = TakeAs<int64_t>(options, "staleness_bound");
  o.backup_workers = TakeInt(options, "backup_workers", 0, kMaxWorkers - 1);
  o.average_every = TakeAs<int64_t>(options, "average_every");
  o.outer = {.lr = TakeFloat32(options, "outer_lr"),
             .momentum = TakeFloat32(options, "outer_momentum"),
             .nesterov = TakeAs<bool>(options, "outer_nesterov")};
  o.streaming = {.fragments = TakeInt(options, "fragments", std::numeric_limits<int>::min(),
                                      std::numeric_limits<int>::max()),
                 .overlap_steps = TakeAs<int64_t>(options, "overlap_steps"),
                 .mix_alpha = TakeFloat32(options, "mix_alpha")};
  o.delayed_nesterov = TakeAs<int64_t>(options, "delayed_nesterov");
  o.dynamic_local_updates = TakeAs<bool>(options, "dynamic_local_updates");
  // Buckwild!'s, which only the sparse linear models read: the library refuses mode "buckwild"
  // for networks, and __init__.py a value given in another mode.
  Take(options, "fixed_point_bits");
  Take(options, "fixed_point_range");
  o.seed = TakeAs<uint64_t>(options, "seed");
  o.eval_every_steps = TakeAs<int64_t>(options, "eval_every_steps");
  o.eval_every_epochs = TakeAs<double>(options, "eval_every_epochs");
  o.log_every_steps = TakeAs<int64_t>(options, "log_every");
  o.log_path = TakeAs<std::string>(options, "log");
  o.overwrite_log = TakeAs<bool>(options, "overwrite_log");
  o.prefetch = TakeInt(options, "prefetch", 1, kMaxPrefetch);
  o.checkpoint_dir = TakeAs<std::string>(options, "checkpoint_dir");
  o.checkpoint_every_steps = TakeAs<int64_t>(options, "checkpoint_every_steps");
  o.checkpoint_every_seconds = TakeAs<double>(options, "checkpoint_every_seconds");
  o.resume = TakeAs<bool>(options, "resume");
  o.overwrite_checkpoint = TakeAs<bool>(options, "overwrite_checkpoint");
  *typed = TakeAs<std::map<std::string, std::string>>(options, "typed");
  if (!options.empty()) {
    throw py::key_error(absl::StrFormat("_train: unknown options %s",
                                        py::str(options.attr("keys")()).cast<std::string>()));
  }
  return o;
}

// The training and test sets from a dataset name (loaded and normalized as the command line
// does) or from arrays. train_examples > 0 keeps the first that many training examples.
std::pair<Dataset, Dataset> LoadData(py::handle x, py::handle y, py::handle test_x,
                                     py::handle test_y, const std::string& dataset,
                                     const std::string& data_dir, int64_t train_examples,
                                     int64_t num_classes) {
  Dataset train;
  Dataset test;
  if (!dataset.empty()) {
    const DatasetInfo info = ValueOrRaise(LookupDataset(dataset));
    const std::string dir = data_dir.empty() ? info.default_dir : data_dir;
    absl::StatusOr<TrainTestSplits> loaded;
    {
      py::gil_scoped_release release;  // seconds of gzip and parsing
      loaded = LoadTrainTest(info, dir, train_examples, "train_examples");
    }
    if (!loaded.ok()) Raise(loaded.status());
    return {std::move(loaded->train), std::move(loaded->test)};
  } else {
    if (num_classes == 0) {
      num_classes = InferNumClasses(y, "y");
      if (!test_y.is_none()) num_classes = std::max(num_classes, InferNumClasses(test_y, "test_y"));
    }
    train = FromArrays(x, y, "x", "y", num_classes, "numpy");
    if (!test_x.is_none()) {
      test = FromArrays(test_x, test_y, "test_x", "test_y", num_classes, "numpy test set");
      if (test.example_shape != train.example_shape) {
        throw py::value_error(
            absl::StrFormat("test_x's examples have shape %s but x's have %s; they must be equal",
                            ShapeToString(test.example_shape), ShapeToString(train.example_shape)));
      }
    }
  }
  if (train_examples > 0) {
    absl::StatusOr<Dataset> head = FirstExamples(train, train_examples);
    if (!head.ok()) {
      throw py::value_error(
          absl::StrFormat("train_examples=%d is larger than the training set: %s; give "
                          "train_examples in [1, %d]",
                          train_examples, head.status().message(), train.size()));
    }
    train = *std::move(head);
  }
  return {std::move(train), std::move(test)};
}

// A NumPy array that owns `values` (no copy).
template <typename T>
py::array_t<T> ToNumpy(std::vector<T> values) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, owned->data(), free);
}

// `has_test`: whether there was a test set; without one the final test figures are None (not
// measured), not the 0 the C++ result holds.
py::dict ResultToDict(TrainResult r, bool has_test) {
  py::dict d;
  d["mode"] = ModeName(r.mode);
  d["workers"] = r.num_workers;
  d["wall_time_s"] = r.wall_time_s;
  d["examples"] = r.examples;
  d["steps"] = r.steps;
  d["examples_per_s"] = r.examples_per_s;
  const auto measured = [has_test](double value) {
    return has_test ? py::object(py::float_(value)) : py::none();
  };
  d["final_test_loss"] = measured(r.final_test_loss);
  d["final_test_accuracy"] = measured(r.final_test_accuracy);
  d["final_ema_test_loss"] = measured(r.final_ema_test_loss);
  d["final_ema_test_accuracy"] = measured(r.final_ema_test_accuracy);
  d["staleness_mean"] = r.staleness_mean;
  d["staleness_max"] = r.staleness_max;
  d["dropped"] = r.dropped;
  d["staleness_histogram"] = ToNumpy(std::move(r.staleness_histogram));
  d["params"] = ToNumpy(std::move(r.params));
  d["ema_params"] = ToNumpy(std::move(r.ema_params));
  d["stopped_early"] = r.stopped_early;
  d["resumed_from_step"] = r.resumed_from_step;
  d["last_checkpoint_step"] = r.last_checkpoint_step;
  return d;
}

}  // namespace

py::dict TrainFromPython(py::object x, py::object y, py::object test_x, py::object test_y,
                         const std::string& dataset, const std::string& data_dir,
                         int64_t train_examples, int64_t num_classes, py::dict options,
                         py::object on_log_row) {
  // A copy, since OptionsFromDict empties the dict it reads.
  std::map<std::string, std::string> typed;
  TrainerOptions o =
      OptionsFromDict(py::reinterpret_steal<py::dict>(PyDict_Copy(options.ptr())), &typed);
  PythonBridge bridge(std::move(on_log_row));
  o.log_row_sink = bridge.RowSink();
  RefuseUnreadKeywords(o, typed);
  auto [train, test] =
      LoadData(x, y, test_x, test_y, dataset, data_dir, train_examples, num_classes);
  o.progress = bridge.SignalCheck();
  o.progress_period = PythonBridge::kSignalCheckPeriod;
  o.stop_requested = bridge.stop_requested();
  absl::StatusOr<TrainResult> result = absl::UnknownError("not run");
  {
    py::gil_scoped_release release;
    result = Train(o, train, test);
  }
  // A callback's exception or Ctrl-C's KeyboardInterrupt first: it is why the run stopped.
  bridge.RethrowIfFailed();
  if (!result.ok()) Raise(result.status());
  return ResultToDict(*std::move(result), test.size() > 0);
}

}  // namespace hogwild::python

PYBIND11_MODULE(_hogwild, m) {
  m.doc() = "The C++ half of the hogwild module; use hogwild.train().";
  m.def("_train", &hogwild::python::TrainFromPython, pybind11::arg("x"), pybind11::arg("y"),
        pybind11::arg("test_x"), pybind11::arg("test_y"), pybind11::arg("dataset"),
        pybind11::arg("data_dir"), pybind11::arg("train_examples"), pybind11::arg("num_classes"),
        pybind11::arg("options"), pybind11::arg("on_log_row"),
        "Trains with options resolved by hogwild.train(); returns the result as a dict.");
  hogwild::python::AddSparseBindings(m);
}
