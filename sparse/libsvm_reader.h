// Reader for the LIBSVM / SVMlight text format, how RCV1, news20, url, kdd2010 and most other
// sparse benchmarks are distributed (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/):
//
//   <label> [qid:<n>] <index>:<value> <index>:<value> ... [# comment]
//
// one example per line; indices are 1-based and strictly increasing within a line; `qid` (a
// ranking group, SVMlight) is accepted and ignored; `#` starts a comment to the end of the line;
// blank and comment-only lines are skipped; tokens are separated by spaces or tabs; a line may
// end in \r\n. Numbers: the label and values are decimal floats (strtod syntax: `1`, `-1`, `+1`,
// `0.5`, `1e-3`), finite; indices are decimal integers. Files may be gzip-compressed or plain
// (zlib's gzread reads both).
//
// Every refusal is kInvalidArgument with one line "<origin>:<line>: <reason>" (line numbers
// from 1): an index of 0 or below, indices that do not increase, an index past
// `num_features`, an index above kMaxLibsvmFeatures (refused while parsing the digits, before
// anything sized by it is allocated), a malformed token (no `:`, an empty or non-numeric index
// or value, trailing characters, a non-finite value), a label that is not a finite number, a
// `qid` not directly after the label, a line longer than kMaxTextLineBytes (core/text_lines.h, the
// cap of every text reader); and
// "<origin>: no examples" for a file without any.
#ifndef HOGWILD_SPARSE_LIBSVM_READER_H_
#define HOGWILD_SPARSE_LIBSVM_READER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sparse/sparse_dataset.h"

namespace hogwild::sparse {

// Largest feature index accepted: 2^27 (134 million features, 512 MiB of float32 weights; kdd2010
// has 29.9 million, url 3.2 million). A larger index is refused as it is read, so a forged
// `999999999999:1` never sizes an allocation.
inline constexpr int64_t kMaxLibsvmFeatures = int64_t{1} << 27;

struct LibsvmOptions {
  // D: 0 infers it as the largest index in the data; else in [1, kMaxLibsvmFeatures], and an
  // index above it is refused (a test set read with its training set's D).
  int64_t num_features = 0;
};

// Parses LIBSVM text held in memory. `origin` names the source in error messages. The result
// satisfies ValidateSparseDataset() (indices 0-based). Pure function, thread-safe; the fuzzing
// entry point (tests/fuzz/fuzz_targets.h). Errors: above; kInvalidArgument for a bad
// options.num_features.
absl::StatusOr<SparseDataset> ParseLibsvm(absl::string_view text, const LibsvmOptions& options,
                                          absl::string_view origin);

// Reads and parses a LIBSVM file, gzip-compressed or plain, as a stream of 64 KiB chunks: memory
// is the data set plus one chunk and one line, whatever the file's size. Accepts and returns
// exactly what ParseLibsvm() does on the decompressed bytes. Errors (each naming the path):
// kNotFound (missing), kPermissionDenied (unreadable), kInvalidArgument (a directory, corrupt
// or truncated gzip, or any ParseLibsvm() error).
absl::StatusOr<SparseDataset> ReadLibsvmFile(const std::string& path, const LibsvmOptions& options);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_LIBSVM_READER_H_
