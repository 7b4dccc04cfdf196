// hogwild._hogwild._train_sparse and _train_mf: the C++ half of hogwild.train_sparse() and
// hogwild.train_mf() (hogwild/__init__.py): sparse logistic regression and linear SVM
// (sparse/sparse_train.h) on CSR arrays, matrix factorization on rating arrays.
#ifndef HOGWILD_PYTHON_SPARSE_BINDING_H_
#define HOGWILD_PYTHON_SPARSE_BINDING_H_

#include "pybind11/pybind11.h"

namespace hogwild::python {

// Adds `_train_sparse(indptr, indices, values, labels, num_features, test, options)` to `m`:
//   indptr  [N + 1] int64, indices [Z] int32 (0-based), values [Z] float32, labels [N] float32
//   (C-contiguous; hogwild.train_sparse converts), num_features D; test: None or the same four
//   arrays as a tuple; options: a dict of SparseTrainOptions' fields by their keyword names.
// Returns a dict: weights (float32 [D]), epochs (a list of dicts, one per epoch trained),
// train_time_s, examples, updates, resumed_epochs. Trains with the GIL released; Ctrl-C is
// looked for after each epoch (the run stops there, after its checkpoint, and raises
// KeyboardInterrupt). Errors: ValueError for kInvalidArgument, kOutOfRange and
// kFailedPrecondition (bad data, options, checkpoints), RuntimeError for the rest.
// Also `_train_mf(users, items, ratings, num_users, num_items, test, options)`: matrix
// factorization (sparse/matrix_factorization.h) of users, items [R] int32 (indices in [0, U)
// and [0, I), checked by hogwild.train_mf) and ratings [R] float32; test None or the three
// arrays of the test ratings. Returns mean, factors (float32 [(U + I) * k]), epochs (train_rmse,
// test_rmse), train_time_s, updates, resumed_epochs, global_mean_test_rmse. The GIL, Ctrl-C and
// errors as _train_sparse.
void AddSparseBindings(pybind11::module_& m);

}  // namespace hogwild::python

#endif  // HOGWILD_PYTHON_SPARSE_BINDING_H_
