// Ratings for matrix factorization: (user, item, rating) triples, e.g. MovieLens
// ml-latest-small (100,004 ratings of 9,066 movies by 671 users; tools/setup.sh --movielens
// exports it from Debian's r-cran-dslabs to kMovieLensPath).
//
// CSV format: one rating per line, `user,item,rating[,anything else]`; user and item are
// integer ids (any int64, remapped to dense indices in order of first appearance), rating a
// finite decimal number; a first line of three or more fields whose user field is not an
// integer is a header (`"userId","movieId","rating"`); blank lines are skipped; a line may end
// in \r\n; the file may be gzip-compressed. Refusals are kInvalidArgument "<origin>:<line>:
// <reason>": a LIBSVM line (no comma, a colon: "looks like LIBSVM"), fewer than 3 fields, a user or
// item id that is not an integer, a rating that is not a finite number, more than 2^31 - 1 ratings,
// users or items, a line longer than kMaxTextLineBytes (core/text_lines.h, the cap of every text
// reader); and "<origin>: no ratings".
#ifndef HOGWILD_SPARSE_RATINGS_H_
#define HOGWILD_SPARSE_RATINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hogwild::sparse {

inline constexpr char kMovieLensPath[] = "/usr/local/share/datasets/movielens/ratings.csv";

// Shapes (R ratings, U users, I items), host memory.
struct Ratings {
  int64_t num_users = 0;       // U
  int64_t num_items = 0;       // I
  std::vector<int32_t> users;  // [R], in [0, U)
  std::vector<int32_t> items;  // [R], in [0, I)
  std::vector<float> values;   // [R], finite
  int64_t size() const { return static_cast<int64_t>(values.size()); }
};

// OK when `ratings` holds what Ratings promises: U and I in [1, 2^31 - 1], as many users, items
// and values, users in [0, U), items in [0, I), every value finite. Else kInvalidArgument naming
// `origin` and the first broken rule ("test ratings: rating 3 (user 0, item 2) is nan; every
// rating must be a finite number"). The CSV reader establishes these; the trainer checks them
// once, so ratings built by hand (the Python module) meet the reader's rules. O(R).
absl::Status ValidateRatings(const Ratings& ratings, absl::string_view origin);

// Parses the CSV text; `origin` names it in errors. Pure, thread-safe.
absl::StatusOr<Ratings> ParseRatingsCsv(absl::string_view text, absl::string_view origin);

// Reads a CSV file, plain or gzip, of at most 1 GiB decompressed, line by line (memory: the
// ratings, one chunk and one line). Errors: those of ReadGzipFile (core/gzip_file.h: kNotFound,
// naming the setup option when the path is kMovieLensPath; kPermissionDenied; kInvalidArgument
// for a directory), kInvalidArgument (corrupt gzip, too large, any ParseRatingsCsv error), each
// naming the path.
absl::StatusOr<Ratings> ReadRatingsFile(const std::string& path);

struct RatingsSplit {
  Ratings train;
  Ratings test;  // the same U and I as train (the indices are shared)
};

// A fixed split: rating r goes to the test set when SplitMix64(seed + r) % 10 == 0 (about 10%),
// so the split depends only on the seed and the file's order. Both keep the full U and I.
RatingsSplit SplitRatings(const Ratings& all, uint64_t seed);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_RATINGS_H_
