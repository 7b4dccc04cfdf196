#include "core/text_lines.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace hogwild {
namespace {

// A line's bytes kept at most: one past the cap, enough to know it is too long.
constexpr size_t kKeptBytes = static_cast<size_t>(kMaxTextLineBytes) + 1;

// Counts the lines and refuses one past the cap, for both forms of input.
class Lines {
 public:
  Lines(absl::string_view origin, absl::FunctionRef<absl::Status(absl::string_view)> line)
      : origin_(origin), line_(line) {}

  absl::Status Next(absl::string_view text) {
    ++number_;
    if (static_cast<int64_t>(text.size()) > kMaxTextLineBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: line longer than %d bytes", origin_, number_, kMaxTextLineBytes));
    }
    return line_(text);
  }

 private:
  absl::string_view origin_;
  absl::FunctionRef<absl::Status(absl::string_view)> line_;
  int64_t number_ = 0;
};

absl::Status CorruptGzip(absl::string_view origin, gzFile file) {
  int errnum = 0;
  const std::string message = gzerror(file, &errnum);
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: corrupt or truncated gzip data (%s)", origin, message));
}

}  // namespace

absl::Status ForEachTextLine(absl::string_view text, absl::string_view origin,
                             absl::FunctionRef<absl::Status(absl::string_view)> line) {
  Lines lines(origin, line);
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    if (absl::Status ok = lines.Next(text.substr(0, newline)); !ok.ok()) return ok;
    if (newline == absl::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return absl::OkStatus();
}

absl::Status ForEachTextLine(gzFile file, absl::string_view origin,
                             absl::FunctionRef<absl::Status(absl::string_view)> line) {
  Lines lines(origin, line);
  std::string pending;  // the current line's start, carried over from the previous chunk
  // 64 KiB: large enough that a read costs little per byte, small enough that the fuzzer (which
  // opens four files per input under ASan) is not slowed by zero-filling it.
  std::string chunk(1 << 16, '\0');
  while (true) {
    const int n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) return CorruptGzip(origin, file);
    if (n == 0) {
      // A gzip stream cut short is an end of input plus an error state, not a failed read.
      int errnum = Z_OK;
      gzerror(file, &errnum);
      if (errnum != Z_OK) return CorruptGzip(origin, file);
      break;
    }
    absl::string_view rest(chunk.data(), static_cast<size_t>(n));
    for (size_t newline; (newline = rest.find('\n')) != absl::string_view::npos;) {
      absl::Status ok;
      if (pending.empty()) {
        ok = lines.Next(rest.substr(0, newline));
      } else {
        pending.append(rest.data(), std::min(newline, kKeptBytes - pending.size()));
        ok = lines.Next(pending);
        pending.clear();
      }
      if (!ok.ok()) return ok;
      rest.remove_prefix(newline + 1);
    }
    // Past the cap plus one byte the line is refused whatever follows; keeping no more bounds
    // memory for a file without newlines.
    pending.append(rest.data(), std::min(rest.size(), kKeptBytes - pending.size()));
    if (static_cast<int64_t>(pending.size()) > kMaxTextLineBytes) return lines.Next(pending);
  }
  if (!pending.empty()) return lines.Next(pending);
  return absl::OkStatus();
}

}  // namespace hogwild
