#include "sparse/libsvm_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/gzip_file.h"
#include "core/status_macros.h"
#include "core/text_lines.h"

namespace hogwild::sparse {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Parses a whole token as a finite float32 (one leading '+' allowed, as strtod does). Returns
// false for anything else: empty, trailing characters, out of float32's range, inf, nan.
bool ParseFloat(absl::string_view token, float& out) {
  if (!token.empty() && token[0] == '+') {
    token.remove_prefix(1);
    if (!token.empty() && (token[0] == '+' || token[0] == '-')) return false;  // "+-1"
  }
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

// Collects examples line by line; shared by ParseLibsvm and the streaming file reader, so they
// accept exactly the same texts.
class LineParser {
 public:
  LineParser(const LibsvmOptions& options, absl::string_view origin)
      : limit_(options.num_features > 0 ? options.num_features : kMaxLibsvmFeatures),
        fixed_(options.num_features > 0),
        origin_(origin) {}

  // `line` without its '\n'.
  absl::Status Line(absl::string_view line) {
    ++line_number_;
    if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    size_t pos = 0;
    int token_number = 0;
    int64_t previous = 0;
    while (true) {
      while (pos < line.size() && IsBlank(line[pos])) ++pos;
      if (pos == line.size()) break;
      size_t end = pos;
      while (end < line.size() && !IsBlank(line[end])) ++end;
      const absl::string_view token = line.substr(pos, end - pos);
      pos = end;
      ++token_number;
      if (token_number == 1) {
        float label;
        if (!ParseFloat(token, label)) {
          return Error(absl::StrFormat("label '%s' is not a finite number", Clip(token)));
        }
        data_.labels.push_back(label);
        continue;
      }
      const size_t colon = token.find(':');
      if (colon == absl::string_view::npos) {
        return Error(absl::StrFormat("malformed token '%s': expected index:value", Clip(token)));
      }
      const absl::string_view index_text = token.substr(0, colon);
      const absl::string_view value_text = token.substr(colon + 1);
      if (index_text == "qid") {
        int64_t qid;
        const auto [ptr, ec] =
            std::from_chars(value_text.data(), value_text.data() + value_text.size(), qid);
        if (token_number != 2 || value_text.empty() || ec != std::errc() ||
            ptr != value_text.data() + value_text.size() || qid < 0) {
          return Error(absl::StrFormat(
              "malformed token '%s': qid:<non-negative integer> may only follow the label",
              Clip(token)));
        }
        continue;
      }
      HOGWILD_ASSIGN_OR_RETURN(const int64_t index, ParseIndex(index_text, token));
      if (index <= previous) {
        return Error(absl::StrFormat(
            "index %d after %d: indices must increase strictly within a line", index, previous));
      }
      float value;
      if (!ParseFloat(value_text, value)) {
        return Error(
            absl::StrFormat("malformed token '%s': value is not a finite number", Clip(token)));
      }
      previous = index;
      if (index > max_index_) max_index_ = index;
      data_.indices.push_back(static_cast<int32_t>(index - 1));
      data_.values.push_back(value);
    }
    if (token_number == 0) return absl::OkStatus();  // blank or comment-only line
    data_.row_offsets.push_back(static_cast<int64_t>(data_.indices.size()));
    return absl::OkStatus();
  }

  absl::StatusOr<SparseDataset> Finish() && {
    if (data_.labels.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: no examples (%d lines, none with a label)", origin_, line_number_));
    }
    data_.num_features = fixed_ ? limit_ : std::max<int64_t>(max_index_, 1);
    return std::move(data_);
  }

 private:
  absl::StatusOr<int64_t> ParseIndex(absl::string_view text, absl::string_view token) {
    if (!text.empty() && text[0] == '-') {
      return Error(absl::StrFormat("index %s is negative: LIBSVM indices start at 1", Clip(text)));
    }
    if (text.empty()) {
      return Error(absl::StrFormat("malformed token '%s': empty index", Clip(token)));
    }
    int64_t index = 0;
    for (char c : text) {
      if (c < '0' || c > '9') {
        return Error(
            absl::StrFormat("malformed token '%s': index is not a decimal integer", Clip(token)));
      }
      // Checked digit by digit: the value never exceeds 10 * kMaxLibsvmFeatures + 9, far from
      // int64's limit, whatever the number of digits.
      index = index * 10 + (c - '0');
      if (index > limit_) {
        return Error(fixed_
                         ? absl::StrFormat("index %s is past --num_features=%d", Clip(text), limit_)
                         : absl::StrFormat("index %s is above the largest supported, %d",
                                           Clip(text), kMaxLibsvmFeatures));
      }
    }
    if (index == 0) return Error("index 0: LIBSVM indices start at 1");
    return index;
  }

  // A token quoted in a message, cut to 40 characters so that the message stays one line.
  static std::string Clip(absl::string_view s) {
    return s.size() <= 40 ? std::string(s) : absl::StrCat(s.substr(0, 37), "...");
  }

  absl::Status Error(absl::string_view reason) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", origin_, line_number_, reason));
  }

  const int64_t limit_;
  const bool fixed_;
  const std::string origin_;
  int64_t line_number_ = 0;
  int64_t max_index_ = 0;
  SparseDataset data_;
};

absl::Status CheckOptions(const LibsvmOptions& options) {
  if (options.num_features < 0 || options.num_features > kMaxLibsvmFeatures) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--num_features=%d is out of range: 0 (inferred) or [1, %d]",
                        options.num_features, kMaxLibsvmFeatures));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SparseDataset> ParseLibsvm(absl::string_view text, const LibsvmOptions& options,
                                          absl::string_view origin) {
  HOGWILD_RETURN_IF_ERROR(CheckOptions(options));
  LineParser parser(options, origin);
  HOGWILD_RETURN_IF_ERROR(ForEachTextLine(
      text, origin, [&parser](absl::string_view line) { return parser.Line(line); }));
  return std::move(parser).Finish();
}

absl::StatusOr<SparseDataset> ReadLibsvmFile(const std::string& path,
                                             const LibsvmOptions& options) {
  HOGWILD_RETURN_IF_ERROR(CheckOptions(options));
  return ReadGzipFile(path, "a LIBSVM file", "", [&](gzFile file) -> absl::StatusOr<SparseDataset> {
    LineParser parser(options, path);
    HOGWILD_RETURN_IF_ERROR(ForEachTextLine(
        file, path, [&parser](absl::string_view line) { return parser.Line(line); }));
    return std::move(parser).Finish();
  });
}

}  // namespace hogwild::sparse
