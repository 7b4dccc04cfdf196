// NumPy arrays in, a Dataset out: the checks that turn a wrong array into a clear Python
// exception instead of wrong training or a crash, and the one copy the trainer needs.
//
//   features: [N, C, H, W] (images; example_shape {C, H, W}) or [N, D] (example_shape {D}),
//             float32, native byte order, C-contiguous, every value finite
//   labels:   [N] of any NumPy integer type, each in [0, num_classes)
//
// The copy: Dataset owns its features (std::vector<float>, what the input pipeline and the
// checkpoint fingerprint read), so the features are copied once, straight from the array's
// buffer; nothing converts them first (a float64 array is refused, not silently converted into
// a second copy). The labels are converted to int32 in the same single pass.
//
// Thread-safety: call with the GIL held (they read Python objects and throw Python exceptions).
#ifndef HOGWILD_PYTHON_NUMPY_DATASET_H_
#define HOGWILD_PYTHON_NUMPY_DATASET_H_

#include <cstdint>
#include <string>

#include "pybind11/pybind11.h"
#include "trainer/data/dataset.h"

namespace hogwild::python {

// The largest label + 1 of `labels` (named `name` in messages), checked as FromArrays does.
// Throws as FromArrays for the labels.
int64_t InferNumClasses(pybind11::handle labels, const char* name);

// Copies `features` and `labels` (named `x_name`, `y_name` in messages: the keyword arguments
// of hogwild.train()) into a Dataset called `dataset_name` with `num_classes` (>= 1) classes.
// Throws pybind11::type_error when an argument is not a NumPy array or has the wrong dtype
// (non-float32 features, non-integer labels); pybind11::value_error for a wrong number of
// dimensions, no examples or features, a non-contiguous array, a non-finite feature, a label
// outside [0, num_classes), or a label count unlike the example count. Every message names the
// argument and what was expected.
Dataset FromArrays(pybind11::handle features, pybind11::handle labels, const char* x_name,
                   const char* y_name, int64_t num_classes, const std::string& dataset_name);

}  // namespace hogwild::python

#endif  // HOGWILD_PYTHON_NUMPY_DATASET_H_
