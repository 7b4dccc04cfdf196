#include "python/sparse_binding.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "pybind11/numpy.h"
#include "pybind11/stl.h"
#include "python/keyword_names.h"
#include "python/raise_status.h"
#include "sparse/matrix_factorization.h"
#include "sparse/ratings.h"
#include "sparse/sparse_dataset.h"
#include "sparse/sparse_train.h"
#include "sync/policy_factory.h"

namespace hogwild::python {
namespace {
namespace py = pybind11;
using sparse::SparseDataset;

template <typename T>
using Array = py::array_t<T, py::array::c_style>;

template <typename T>
std::vector<T> ToVector(const Array<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

[[noreturn]] void Raise(const absl::Status& status) {
  RaiseStatus(status.code(), WithKeywordNames(status.message()));
}

// The indices arrive as int64 (scipy's own width), so that the library checks them before they
// are narrowed to the data set's int32.
SparseDataset ToDataset(const Array<int64_t>& indptr, const Array<int64_t>& indices,
                        const Array<float>& values, const Array<float>& labels,
                        int64_t num_features) {
  absl::StatusOr<SparseDataset> d = sparse::SparseDatasetFromCsr(
      num_features, ToVector(indptr), absl::MakeConstSpan(indices.data(), indices.size()),
      ToVector(values), ToVector(labels));
  if (!d.ok()) Raise(d.status());
  return *std::move(d);
}

template <typename T>
T Get(const py::dict& options, const char* key) {
  if (!options.contains(key)) {
    throw py::key_error(absl::StrFormat("_train_sparse: option '%s' is missing", key));
  }
  return options[key].cast<T>();
}

// An int option (hogwild.train_sparse passes int64 values): one past int's range is refused
// here, where a cast would fail with pybind11's unhelpful message; the ranges are the library's.
int GetInt(const py::dict& options, const char* key) {
  const int64_t value = Get<int64_t>(options, key);
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw py::value_error(absl::StrFormat("%s=%d is out of range", key, value));
  }
  return static_cast<int>(value);
}

// The options train_sparse and train_mf share (SparseTrainOptions and MfOptions name them alike).
template <typename Options>
void ReadSharedOptions(const py::dict& options, Options& o) {
  o.num_workers = GetInt(options, "workers");
  o.epochs = GetInt(options, "epochs");
  o.lr = Get<float>(options, "lr");
  o.lr_decay = Get<float>(options, "lr_decay");
  o.weight_decay = Get<float>(options, "weight_decay");
  o.seed = Get<uint64_t>(options, "seed");
  o.shuffle = Get<bool>(options, "shuffle");
  o.mode_options = {.staleness_bound = Get<int64_t>(options, "staleness_bound"),
                    .backup_workers = GetInt(options, "backup_workers"),
                    .average_every = Get<int64_t>(options, "average_every"),
                    .outer = {.lr = Get<float>(options, "outer_lr"),
                              .momentum = Get<float>(options, "outer_momentum"),
                              .nesterov = Get<bool>(options, "outer_nesterov")},
                    .streaming = {.fragments = GetInt(options, "fragments"),
                                  .overlap_steps = Get<int64_t>(options, "overlap_steps"),
                                  .mix_alpha = Get<float>(options, "mix_alpha")},
                    .delayed_nesterov = Get<int64_t>(options, "delayed_nesterov"),
                    .dynamic_local_updates = Get<bool>(options, "dynamic_local_updates"),
                    .fixed_point_bits = GetInt(options, "fixed_point_bits"),
                    .fixed_point_range = Get<float>(options, "fixed_point_range")};
  o.checkpoint = {.dir = Get<std::string>(options, "checkpoint_dir"),
                  .resume = Get<bool>(options, "resume"),
                  .overwrite = Get<bool>(options, "overwrite_checkpoint")};
}

py::dict EpochToDict(const sparse::SparseEpochReport& r) {
  py::dict d;
  d["epoch"] = r.epoch;
  d["lr"] = r.lr;
  d["train_time_s"] = r.train_time_s;
  d["examples"] = r.examples;
  d["updates"] = r.updates;
  d["train_loss"] = r.train_loss;
  d["train_accuracy"] = r.train_accuracy;
  d["test_loss"] = r.test_loss ? py::object(py::float_(*r.test_loss)) : py::none();
  d["test_accuracy"] = r.test_accuracy ? py::object(py::float_(*r.test_accuracy)) : py::none();
  d["saturated_updates"] = r.saturated_updates;
  if (r.cyclades.rounds > 0) {
    py::dict c;
    c["rounds"] = r.cyclades.rounds;
    c["examples"] = r.cyclades.examples;
    c["components"] = r.cyclades.components;
    c["largest_component"] = r.cyclades.largest_component;
    c["busiest_worker"] = r.cyclades.busiest_worker;
    d["cyclades"] = c;
  } else {
    d["cyclades"] = py::none();
  }
  return d;
}

py::dict TrainSparseFromPython(const Array<int64_t>& indptr, const Array<int64_t>& indices,
                               const Array<float>& values, const Array<float>& labels,
                               int64_t num_features, const py::object& test,
                               const py::dict& options) {
  sparse::SparseTrainOptions o;
  auto parse = [](auto parsed) {
    if (!parsed.ok()) Raise(parsed.status());
    return *parsed;
  };
  o.model = parse(sparse::ParseLinearModel(Get<std::string>(options, "model")));
  o.mode = parse(ParseMode(Get<std::string>(options, "mode")));
  o.batch_size = GetInt(options, "batch_size");
  ReadSharedOptions(options, o);
  const SparseDataset train = ToDataset(indptr, indices, values, labels, num_features);
  std::optional<SparseDataset> test_set;
  if (!test.is_none()) {
    const auto t =
        test.cast<std::tuple<Array<int64_t>, Array<int64_t>, Array<float>, Array<float>>>();
    test_set =
        ToDataset(std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t), num_features);
  }
  // Ctrl-C: CPython only notes the signal; its handler runs here, on the calling (main)
  // thread, after each epoch (the workers are joined then; the checkpoint is written).
  std::optional<py::error_already_set> interrupted;
  o.on_epoch = [&interrupted](const sparse::SparseEpochReport&) -> absl::Status {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return absl::OkStatus();
    interrupted.emplace();  // takes the pending exception (KeyboardInterrupt)
    return absl::CancelledError("interrupted");
  };
  absl::StatusOr<sparse::SparseTrainResult> result = absl::UnknownError("not run");
  {
    py::gil_scoped_release release;
    result = sparse::TrainSparse(o, train, test_set ? &*test_set : nullptr);
  }
  if (interrupted) throw *interrupted;
  if (!result.ok()) Raise(result.status());
  py::dict d;
  d["weights"] =
      Array<float>(static_cast<py::ssize_t>(result->weights.size()), result->weights.data());
  py::list epochs;
  for (const auto& r : result->epochs) epochs.append(EpochToDict(r));
  d["epochs"] = epochs;
  d["train_time_s"] = result->train_time_s;
  d["examples"] = result->examples;
  d["updates"] = result->updates;
  d["resumed_epochs"] = result->resumed_epochs;
  return d;
}

sparse::Ratings ToRatings(const Array<int32_t>& users, const Array<int32_t>& items,
                          const Array<float>& values, int64_t num_users, int64_t num_items) {
  return sparse::Ratings{.num_users = num_users,
                         .num_items = num_items,
                         .users = ToVector(users),
                         .items = ToVector(items),
                         .values = ToVector(values)};
}

py::dict TrainMfFromPython(const Array<int32_t>& users, const Array<int32_t>& items,
                           const Array<float>& ratings, int64_t num_users, int64_t num_items,
                           const py::object& test, const py::dict& options) {
  sparse::MfOptions o;
  o.rank = GetInt(options, "rank");
  const absl::StatusOr<Mode> mode = ParseMode(Get<std::string>(options, "mode"));
  if (!mode.ok()) Raise(mode.status());
  o.mode = *mode;
  o.batch_size = GetInt(options, "batch_size");
  ReadSharedOptions(options, o);
  // The indices were checked against num_users and num_items by hogwild.train_mf.
  const sparse::Ratings train = ToRatings(users, items, ratings, num_users, num_items);
  std::optional<sparse::Ratings> test_set;
  if (!test.is_none()) {
    const auto t = test.cast<std::tuple<Array<int32_t>, Array<int32_t>, Array<float>>>();
    test_set = ToRatings(std::get<0>(t), std::get<1>(t), std::get<2>(t), num_users, num_items);
  }
  std::optional<py::error_already_set> interrupted;
  o.on_epoch = [&interrupted](const sparse::SparseEpochReport&) -> absl::Status {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return absl::OkStatus();
    interrupted.emplace();
    return absl::CancelledError("interrupted");
  };
  absl::StatusOr<sparse::MfResult> result = absl::UnknownError("not run");
  {
    py::gil_scoped_release release;
    result = sparse::TrainMatrixFactorization(o, train, test_set ? &*test_set : nullptr);
  }
  if (interrupted) throw *interrupted;
  if (!result.ok()) Raise(result.status());
  py::dict d;
  d["mean"] = result->mean;
  d["factors"] =
      Array<float>(static_cast<py::ssize_t>(result->factors.size()), result->factors.data());
  py::list epochs;
  for (const auto& r : result->epochs) {
    py::dict e;
    e["epoch"] = r.epoch;
    e["lr"] = r.lr;
    e["train_time_s"] = r.train_time_s;
    e["updates"] = r.updates;
    e["train_rmse"] = r.train_loss;
    e["test_rmse"] = r.test_loss ? py::object(py::float_(*r.test_loss)) : py::none();
    epochs.append(e);
  }
  d["epochs"] = epochs;
  d["train_time_s"] = result->train_time_s;
  d["updates"] = result->updates;
  d["resumed_epochs"] = result->resumed_epochs;
  d["global_mean_test_rmse"] =
      test_set ? py::object(py::float_(sparse::GlobalMeanRmse(result->mean, *test_set)))
               : py::none();
  return d;
}

}  // namespace

void AddSparseBindings(py::module_& m) {
  m.def(
      "_mode_option_defaults",
      [] {
        const ModeOptions defaults;
        py::dict d;
        d["staleness_bound"] = defaults.staleness_bound;
        d["backup_workers"] = defaults.backup_workers;
        d["average_every"] = defaults.average_every;
        d["outer_lr"] = defaults.outer.lr;
        d["outer_momentum"] = defaults.outer.momentum;
        d["outer_nesterov"] = defaults.outer.nesterov;
        d["fragments"] = defaults.streaming.fragments;
        d["overlap_steps"] = defaults.streaming.overlap_steps;
        d["mix_alpha"] = defaults.streaming.mix_alpha;
        d["delayed_nesterov"] = defaults.delayed_nesterov;
        d["dynamic_local_updates"] = defaults.dynamic_local_updates;
        d["fixed_point_bits"] = defaults.fixed_point_bits;
        d["fixed_point_range"] = defaults.fixed_point_range;
        return d;
      },
      "The defaults of the modes' options (sync/mode_options.h's ModeOptions), as a dict.");
  m.def("_train_mf", &TrainMfFromPython, py::arg("users"), py::arg("items"), py::arg("ratings"),
        py::arg("num_users"), py::arg("num_items"), py::arg("test"), py::arg("options"),
        "Matrix factorization with options resolved by hogwild.train_mf(); returns a dict.");
  m.def("_train_sparse", &TrainSparseFromPython, py::arg("indptr"), py::arg("indices"),
        py::arg("values"), py::arg("labels"), py::arg("num_features"), py::arg("test"),
        py::arg("options"),
        "Trains a sparse linear model with options resolved by hogwild.train_sparse(); returns "
        "the result as a dict.");
}

}  // namespace hogwild::python
