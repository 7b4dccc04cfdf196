// Writes a SparseDataset as LIBSVM text (1-based indices, "%.9g" values: every float32 reads
// back bitwise), gzip-compressed when the path ends in ".gz". For handing the synthetic set to
// other tools (scikit-learn's load_svmlight_file in benchmarks/sparse_vs_sklearn.py).
#ifndef HOGWILD_SPARSE_LIBSVM_WRITER_H_
#define HOGWILD_SPARSE_LIBSVM_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "sparse/sparse_dataset.h"

namespace hogwild::sparse {

// Creates or replaces `path`. Labels are written as "%.9g" too (+1/-1 as "1"/"-1").
// Errors: kInvalidArgument naming the path and the OS or zlib reason when it cannot be created,
// written or closed (a full disk included). Thread-compatible.
absl::Status WriteLibsvmFile(const SparseDataset& data, const std::string& path);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_LIBSVM_WRITER_H_
