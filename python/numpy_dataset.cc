#include "python/numpy_dataset.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pybind11/numpy.h"

namespace hogwild::python {
namespace py = pybind11;

namespace {

std::string ShapeText(const py::array& a) {
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  return absl::StrFormat("(%s%s)", absl::StrJoin(dims, ", "), dims.size() == 1 ? "," : "");
}

template <typename T>
bool IsNegative(T value) {
  if constexpr (std::is_signed_v<T>) {
    return value < 0;
  } else {
    return false;
  }
}

// A non-finite float as Python spells it: nan, inf or -inf (never "-nan").
std::string FloatText(float value) {
  if (std::isnan(value)) return "nan";
  return absl::StrFormat("%g", value);
}

std::string DtypeText(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

py::array AsArray(py::handle obj, const char* name, const char* what) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(
        absl::StrFormat("%s must be a numpy.ndarray of %s, got %s", name, what,
                        py::str(py::type::of(obj).attr("__name__")).cast<std::string>()));
  }
  return py::reinterpret_borrow<py::array>(obj);
}

void CheckContiguous(const py::array& a, const char* name) {
  if (!(a.flags() & py::array::c_style)) {
    throw py::value_error(absl::StrFormat(
        "%s is not C-contiguous (a slice, transpose or Fortran-ordered array); pass "
        "numpy.ascontiguousarray(%s)",
        name, name));
  }
}

// Calls fn(const T*) with the labels' data for the NumPy integer type they hold.
template <typename Fn>
void WithIntegerData(const py::array& a, const char* name, Fn&& fn) {
  if (py::isinstance<py::array_t<int64_t>>(a)) return fn(static_cast<const int64_t*>(a.data()));
  if (py::isinstance<py::array_t<int32_t>>(a)) return fn(static_cast<const int32_t*>(a.data()));
  if (py::isinstance<py::array_t<int16_t>>(a)) return fn(static_cast<const int16_t*>(a.data()));
  if (py::isinstance<py::array_t<int8_t>>(a)) return fn(static_cast<const int8_t*>(a.data()));
  if (py::isinstance<py::array_t<uint64_t>>(a)) return fn(static_cast<const uint64_t*>(a.data()));
  if (py::isinstance<py::array_t<uint32_t>>(a)) return fn(static_cast<const uint32_t*>(a.data()));
  if (py::isinstance<py::array_t<uint16_t>>(a)) return fn(static_cast<const uint16_t*>(a.data()));
  if (py::isinstance<py::array_t<uint8_t>>(a)) return fn(static_cast<const uint8_t*>(a.data()));
  throw py::type_error(absl::StrFormat(
      "%s has dtype %s; labels must be integers in native byte order (e.g. %s.astype(numpy.int64))",
      name, DtypeText(a), name));
}

// The labels array, checked for everything but the range of its values.
py::array CheckedLabels(py::handle labels, const char* name) {
  py::array y = AsArray(labels, name, "integer labels");
  if (y.ndim() != 1) {
    throw py::value_error(
        absl::StrFormat("%s has shape %s; labels must be 1-D: [N]", name, ShapeText(y)));
  }
  CheckContiguous(y, name);
  return y;
}

}  // namespace

int64_t InferNumClasses(py::handle labels, const char* name) {
  const py::array y = CheckedLabels(labels, name);
  if (y.shape(0) == 0) throw py::value_error(absl::StrFormat("%s holds no labels", name));
  int64_t largest = 0;
  WithIntegerData(y, name, [&](const auto* data) {
    for (py::ssize_t i = 0; i < y.shape(0); ++i) {
      if (IsNegative(data[i])) {
        throw py::value_error(
            absl::StrFormat("%s[%d] = %d is negative; labels are class indices "
                            ">= 0",
                            name, i, static_cast<int64_t>(data[i])));
      }
      if (static_cast<uint64_t>(data[i]) > static_cast<uint64_t>(largest)) {
        if (static_cast<uint64_t>(data[i]) >= uint64_t{std::numeric_limits<int32_t>::max()}) {
          throw py::value_error(absl::StrFormat("%s[%d] = %d is too large for a class index", name,
                                                i, static_cast<uint64_t>(data[i])));
        }
        largest = static_cast<int64_t>(data[i]);
      }
    }
  });
  return largest + 1;
}

Dataset FromArrays(py::handle features, py::handle labels, const char* x_name, const char* y_name,
                   int64_t num_classes, const std::string& dataset_name) {
  const py::array x = AsArray(features, x_name, "float32 features");
  if (!py::isinstance<py::array_t<float>>(x)) {
    throw py::type_error(
        absl::StrFormat("%s has dtype %s; hogwild trains on float32 (native byte order): pass "
                        "%s.astype(numpy.float32)",
                        x_name, DtypeText(x), x_name));
  }
  if (x.ndim() != 2 && x.ndim() != 4) {
    throw py::value_error(absl::StrFormat(
        "%s has shape %s; features must be [N, D] or images [N, C, H, W]%s", x_name, ShapeText(x),
        x.ndim() == 3 ? absl::StrFormat(" (one channel: %s[:, None])", x_name) : ""));
  }
  const int64_t n = x.shape(0);
  Dataset data;
  data.name = dataset_name;
  data.num_classes = num_classes;
  for (py::ssize_t d = 1; d < x.ndim(); ++d) data.example_shape.push_back(x.shape(d));
  const int64_t dim = data.feature_dim();
  if (n == 0) throw py::value_error(absl::StrFormat("%s holds no examples", x_name));
  if (dim == 0) {
    throw py::value_error(
        absl::StrFormat("%s has shape %s: its examples have no features", x_name, ShapeText(x)));
  }
  CheckContiguous(x, x_name);
  const py::array y = CheckedLabels(labels, y_name);
  if (y.shape(0) != n) {
    throw py::value_error(
        absl::StrFormat("%s holds %d examples but %s holds %d labels; they "
                        "must be equally many",
                        x_name, n, y_name, static_cast<int64_t>(y.shape(0))));
  }

  data.labels.resize(n);
  WithIntegerData(y, y_name, [&](const auto* src) {
    for (int64_t i = 0; i < n; ++i) {
      // Compared as the label's own type widened, so uint64 labels above 2^63 are not negative.
      if (IsNegative(src[i]) ||
          static_cast<uint64_t>(src[i]) >= static_cast<uint64_t>(num_classes)) {
        throw py::value_error(absl::StrFormat(
            "%s[%d] = %s is outside [0, %d): there are %d classes (num_classes)", y_name, i,
            py::str(py::int_(src[i])).cast<std::string>(), num_classes, num_classes));
      }
      data.labels[i] = static_cast<int32_t>(src[i]);
    }
  });

  const auto* src = static_cast<const float*>(x.data());
  data.features.assign(src, src + n * dim);
  for (int64_t i = 0; i < n * dim; ++i) {
    if (!std::isfinite(data.features[i])) {
      throw py::value_error(
          absl::StrFormat("%s holds %s in example %d (feature %d); features "
                          "must be finite",
                          x_name, FloatText(data.features[i]), i / dim, i % dim));
    }
  }
  return data;
}

}  // namespace hogwild::python
