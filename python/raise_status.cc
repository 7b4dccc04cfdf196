#include "python/raise_status.h"

#include <stdexcept>

#include "pybind11/pybind11.h"

namespace hogwild::python {

void RaiseStatus(absl::StatusCode code, const std::string& message) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      throw pybind11::value_error(message);
    default:
      throw std::runtime_error(message);  // pybind11 raises RuntimeError
  }
}

}  // namespace hogwild::python
