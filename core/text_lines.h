// The lines of a text input, read the same way by every text reader of the project (the LIBSVM
// reader, sparse/libsvm_reader.h; the ratings CSV reader, sparse/ratings.h): one cap on a line's
// length, so that a file without newlines (a 1 MB gzip can hold a 300 MB line) is refused after
// reading at most the cap, whichever reader opens it.
#ifndef HOGWILD_CORE_TEXT_LINES_H_
#define HOGWILD_CORE_TEXT_LINES_H_

#include <zlib.h>

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hogwild {

// Longest line a text reader accepts: 16 MiB (a line is one example or one rating; the url data
// set's longest is a few KiB). Bounds the memory one line can make a reader hold.
inline constexpr int64_t kMaxTextLineBytes = int64_t{16} << 20;

// Calls `line` with each line of `text` in order, without its '\n' (a final line without one
// too; no line after a final '\n'), and stops at its first error. A line longer than
// kMaxTextLineBytes is kInvalidArgument "<origin>:<line>: line longer than 16777216 bytes" (line
// numbers from 1, every line counted, blank ones too), before `line` sees it.
absl::Status ForEachTextLine(absl::string_view text, absl::string_view origin,
                             absl::FunctionRef<absl::Status(absl::string_view)> line);

// The same for the stream of `file` (gzopen'd: plain or gzip), read in chunks: memory is one
// chunk and one line whatever the file's size. Errors: those above, where a line too long is
// refused once kMaxTextLineBytes + 1 of its bytes were read; a failed read or a corrupt or
// truncated gzip stream, kInvalidArgument "<origin>: corrupt or truncated gzip data (<zlib's
// reason>)". Thread-safety: as `file`.
absl::Status ForEachTextLine(gzFile file, absl::string_view origin,
                             absl::FunctionRef<absl::Status(absl::string_view)> line);

}  // namespace hogwild

#endif  // HOGWILD_CORE_TEXT_LINES_H_
