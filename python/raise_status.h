// A failed absl::Status as the Python exception the module raises for it, one mapping for every
// binding (module.cc's train(), sparse_binding.cc's train_sparse() and train_mf()).
#ifndef HOGWILD_PYTHON_RAISE_STATUS_H_
#define HOGWILD_PYTHON_RAISE_STATUS_H_

#include <string>

#include "absl/status/status.h"

namespace hogwild::python {

// Throws, for pybind11 to raise: ValueError for kInvalidArgument, kOutOfRange and
// kFailedPrecondition (bad arguments, data or checkpoints: the caller can fix them),
// RuntimeError for every other code. `message` is the text to raise (the status's message, or
// that message with the library's field names replaced by keywords). Needs the GIL.
[[noreturn]] void RaiseStatus(absl::StatusCode code, const std::string& message);

}  // namespace hogwild::python

#endif  // HOGWILD_PYTHON_RAISE_STATUS_H_
