#include "sparse/ratings.h"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"

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

absl::StatusOr<Ratings> ParseRatingsCsv(absl::string_view text, absl::string_view origin) {
  Ratings out;
  IdMap users, items;
  int64_t line_number = 0;
  const auto error = [&](const std::string& reason) {
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", origin, line_number, reason));
  };
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const absl::string_view line = Trim(text.substr(0, newline));
    text.remove_prefix(newline == absl::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (line.empty()) continue;
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
        return error(
            "looks like LIBSVM (label index:value ...), not a user,item,rating CSV; --model=mf "
            "reads ratings");
      }
      if (line_number == 1 && count == 3) continue;  // a header
      return error(absl::StrFormat("user id '%s' is not an integer", fields[0].substr(0, 40)));
    }
    if (count < 3) return error("expected user,item,rating");
    if (!ParseId(fields[1], item)) {
      return error(absl::StrFormat("item id '%s' is not an integer", fields[1].substr(0, 40)));
    }
    float rating;
    if (!ParseRating(fields[2], rating)) {
      return error(absl::StrFormat("rating '%s' is not a finite number", fields[2].substr(0, 40)));
    }
    if (out.size() >= kMaxCount) return error("more than 2^31 - 1 ratings");
    const int64_t u = users.Index(user);
    const int64_t i = items.Index(item);
    out.users.push_back(static_cast<int32_t>(u));
    out.items.push_back(static_cast<int32_t>(i));
    out.values.push_back(rating);
  }
  if (out.size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no ratings (%d lines)", origin, line_number));
  }
  out.num_users = users.size();
  out.num_items = items.size();
  return out;
}

absl::StatusOr<Ratings> ReadRatingsFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(
        absl::StrFormat("%s: no such file%s", path,
                        path == kMovieLensPath ? "; tools/setup.sh --movielens exports it" : ""));
  }
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: is a directory", path));
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: cannot open", path));
  }
  std::string text;
  char chunk[1 << 16];
  int n;
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0 &&
         static_cast<int64_t>(text.size()) <= kMaxRatingsFileBytes) {
    text.append(chunk, n);
  }
  int errnum = Z_OK;
  gzerror(file, &errnum);
  const int close_result = gzclose(file);
  if (n < 0 || errnum != Z_OK || close_result != Z_OK) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: corrupt or truncated gzip data", path));
  }
  if (static_cast<int64_t>(text.size()) > kMaxRatingsFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: larger than %d bytes", path, kMaxRatingsFileBytes));
  }
  return ParseRatingsCsv(text, path);
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
