#include "sparse/ratings.h"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "core/gzip_file.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"
#include "core/text_lines.h"

namespace hogwild::sparse {
namespace {

constexpr int64_t kMaxCount = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxRatingsFileBytes = int64_t{1} << 30;

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool ParseId(absl::string_view s, int64_t& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return !s.empty() && ec == std::errc() && ptr == end;
}

bool ParseRating(absl::string_view s, float& out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return !s.empty() && ec == std::errc() && ptr == end && std::isfinite(out);
}

// Dense index of a raw id, in order of first appearance.
class IdMap {
 public:
  int64_t Index(int64_t raw) {
    const auto [it, inserted] = map_.try_emplace(raw, static_cast<int64_t>(map_.size()));
    return it->second;
  }
  int64_t size() const { return static_cast<int64_t>(map_.size()); }

 private:
  absl::flat_hash_map<int64_t, int64_t> map_;
};

}  // namespace

absl::Status ValidateRatings(const Ratings& r, absl::string_view origin) {
  if (r.num_users < 1 || r.num_users > kMaxCount || r.num_items < 1 || r.num_items > kMaxCount) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d users and %d items; each must be in [1, 2^31 - 1]", origin,
                        r.num_users, r.num_items));
  }
  if (r.users.size() != r.values.size() || r.items.size() != r.values.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d users, %d items and %d values; expected one of each per rating",
                        origin, r.users.size(), r.items.size(), r.values.size()));
  }
  for (int64_t i = 0; i < r.size(); ++i) {
    if (r.users[i] < 0 || r.users[i] >= r.num_users || r.items[i] < 0 ||
        r.items[i] >= r.num_items) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: rating %d has user %d and item %d; expected a user in [0, %d) and an item in [0, "
          "%d)",
          origin, i, r.users[i], r.items[i], r.num_users, r.num_items));
    }
    if (!std::isfinite(r.values[i])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: rating %d (user %d, item %d) is %g; every rating must be a finite "
                          "number",
                          origin, i, r.users[i], r.items[i], r.values[i]));
    }
  }
  return absl::OkStatus();
}

namespace {

// Collects ratings line by line; shared by ParseRatingsCsv and the streaming file reader, so they
// accept exactly the same texts.
class RatingsParser {
 public:
  explicit RatingsParser(absl::string_view origin) : origin_(origin) {}

  // `text` without its '\n'.
  absl::Status Line(absl::string_view text) {
    ++line_number_;
    const absl::string_view line = Trim(text);
    if (line.empty()) return absl::OkStatus();
    absl::string_view fields[3];
    absl::string_view rest = line;
    int count = 0;
    for (; count < 3 && !rest.empty(); ++count) {
      const size_t comma = rest.find(',');
      fields[count] = Trim(rest.substr(0, comma));
      rest.remove_prefix(comma == absl::string_view::npos ? rest.size() : comma + 1);
    }
    int64_t user, item;
    if (!ParseId(fields[0], user)) {
      // A LIBSVM line ("+1 3:0.5 7:1") has no comma; read as a header it would hide the
      // mistake until the second line's puzzling error.
      if (line.find(',') == absl::string_view::npos && line.find(':') != absl::string_view::npos) {
        return Error(
            "looks like LIBSVM (label index:value ...), not a user,item,rating CSV; --model=mf "
            "reads ratings");
      }
      if (line_number_ == 1 && count == 3) return absl::OkStatus();  // a header
      return Error(absl::StrFormat("user id '%s' is not an integer", fields[0].substr(0, 40)));
    }
    if (count < 3) return Error("expected user,item,rating");
    if (!ParseId(fields[1], item)) {
      return Error(absl::StrFormat("item id '%s' is not an integer", fields[1].substr(0, 40)));
    }
    float rating;
    if (!ParseRating(fields[2], rating)) {
      return Error(absl::StrFormat("rating '%s' is not a finite number", fields[2].substr(0, 40)));
    }
    if (out_.size() >= kMaxCount) return Error("more than 2^31 - 1 ratings");
    out_.users.push_back(static_cast<int32_t>(users_.Index(user)));
    out_.items.push_back(static_cast<int32_t>(items_.Index(item)));
    out_.values.push_back(rating);
    return absl::OkStatus();
  }

  absl::StatusOr<Ratings> Finish() && {
    if (out_.size() == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: no ratings (%d lines)", origin_, line_number_));
    }
    out_.num_users = users_.size();
    out_.num_items = items_.size();
    return std::move(out_);
  }

 private:
  absl::Status Error(const std::string& reason) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", origin_, line_number_, reason));
  }

  std::string origin_;
  int64_t line_number_ = 0;
  IdMap users_, items_;
  Ratings out_;
};

}  // namespace

absl::StatusOr<Ratings> ParseRatingsCsv(absl::string_view text, absl::string_view origin) {
  RatingsParser parser(origin);
  HOGWILD_RETURN_IF_ERROR(ForEachTextLine(
      text, origin, [&parser](absl::string_view line) { return parser.Line(line); }));
  return std::move(parser).Finish();
}

absl::StatusOr<Ratings> ReadRatingsFile(const std::string& path) {
  std::error_code ec;
  if (path == kMovieLensPath && !std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(
        absl::StrFormat("%s: no such file; tools/setup.sh --movielens exports it", path));
  }
  return ReadGzipFile(
      path, "a user,item,rating CSV", "", [&](gzFile file) -> absl::StatusOr<Ratings> {
        RatingsParser parser(path);
        int64_t bytes = 0;
        HOGWILD_RETURN_IF_ERROR(ForEachTextLine(file, path, [&](absl::string_view line) {
          bytes += static_cast<int64_t>(line.size()) + 1;
          if (bytes > kMaxRatingsFileBytes) {
            return absl::InvalidArgumentError(
                absl::StrFormat("%s: larger than %d bytes", path, kMaxRatingsFileBytes));
          }
          return parser.Line(line);
        }));
        return std::move(parser).Finish();
      });
}

RatingsSplit SplitRatings(const Ratings& all, uint64_t seed) {
  RatingsSplit split;
  for (Ratings* part : {&split.train, &split.test}) {
    part->num_users = all.num_users;
    part->num_items = all.num_items;
  }
  for (int64_t r = 0; r < all.size(); ++r) {
    Ratings& part =
        SplitMix64(seed + static_cast<uint64_t>(r)) % 10 == 0 ? split.test : split.train;
    part.users.push_back(all.users[r]);
    part.items.push_back(all.items[r]);
    part.values.push_back(all.values[r]);
  }
  return split;
}

}  // namespace hogwild::sparse
