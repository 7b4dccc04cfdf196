#include "sparse/mail_corpus.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/gzip_file.h"
#include "core/status_macros.h"

namespace hogwild::sparse {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMinTokenBytes = 2;
constexpr size_t kMaxTokenBytes = 30;

bool IsTokenByte(unsigned char c) { return absl::ascii_isalnum(c) || c >= 0x80; }

void AppendTokens(absl::string_view text, std::vector<std::string>& tokens) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsTokenByte(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && IsTokenByte(static_cast<unsigned char>(text[i]))) ++i;
    const size_t length = i - start;
    if (length >= kMinTokenBytes && length <= kMaxTokenBytes) {
      tokens.push_back(absl::AsciiStrToLower(text.substr(start, length)));
    }
  }
}

// The next line of `text` from `at` without its line ending (\n or \r\n); advances `at` past it.
absl::string_view NextLine(absl::string_view text, size_t& at) {
  const size_t end = std::min(text.find('\n', at), text.size());
  absl::string_view line = text.substr(at, end - at);
  at = end < text.size() ? end + 1 : end;
  if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  return line;
}

absl::StatusOr<std::string> ReadMail(const std::string& path) {
  return ReadGzipFile(path, "a mail", "", [&](gzFile file) -> absl::StatusOr<std::string> {
    std::string bytes;
    char chunk[1 << 16];
    for (;;) {
      const int n = gzread(file, chunk, sizeof(chunk));
      if (n < 0) return absl::InternalError(absl::StrFormat("%s: read error", path));
      if (n == 0) return bytes;
      bytes.append(chunk, static_cast<size_t>(n));
    }
  });
}

struct Group {
  std::string path;
  float label = 0.0f;
  std::vector<std::string> mails;  // paths, in file-name order
};

absl::StatusOr<std::vector<Group>> ListGroups(const std::string& dir) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) {
    return absl::NotFoundError(absl::StrFormat(
        "%s: no such directory (tools/setup.sh --spam installs the SpamAssassin corpus)", dir));
  }
  if (!fs::is_directory(status)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not a directory; a mail corpus is a directory of spam and ham folders", dir));
  }
  std::vector<Group> groups;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory(ec) || name.starts_with('.')) continue;
    const std::string lower = absl::AsciiStrToLower(name);
    Group group{.path = it->path().string()};
    if (absl::StrContains(lower, "spam")) {
      group.label = 1.0f;
    } else if (absl::StrContains(lower, "ham")) {
      group.label = -1.0f;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a group's name must say its class (contain \"spam\" or \"ham\")", group.path));
    }
    groups.push_back(std::move(group));
  }
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrFormat("%s: cannot list (%s)", dir, ec.message()));
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.path < b.path; });
  for (Group& group : groups) {
    for (fs::directory_iterator it(group.path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".txt") group.mails.push_back(it->path().string());
    }
    if (ec) {
      return absl::PermissionDeniedError(
          absl::StrFormat("%s: cannot list (%s)", group.path, ec.message()));
    }
    if (group.mails.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: no mails (one per .txt file)", group.path));
    }
    std::sort(group.mails.begin(), group.mails.end());
  }
  return groups;
}

// Appends the mail's row (binary hashed features, unit L2 norm) to `data`.
void AppendRow(absl::string_view mail, float label, SparseDataset& data) {
  std::vector<int32_t> features;
  for (const std::string& token : MailTokens(mail)) features.push_back(FeatureBucket(token));
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
  const float value =
      features.empty() ? 0.0f : static_cast<float>(1.0 / std::sqrt(double(features.size())));
  data.indices.insert(data.indices.end(), features.begin(), features.end());
  data.values.insert(data.values.end(), features.size(), value);
  data.row_offsets.push_back(static_cast<int64_t>(data.indices.size()));
  data.labels.push_back(label);
}

}  // namespace

std::vector<std::string> MailTokens(absl::string_view mail) {
  std::vector<std::string> tokens;
  size_t at = 0;
  bool in_subject = false;
  absl::string_view subject_header = "subject:";
  while (at < mail.size()) {
    const absl::string_view line = NextLine(mail, at);
    if (line.empty()) break;  // the end of the headers
    const bool continuation = line[0] == ' ' || line[0] == '\t';
    if (!continuation) {
      in_subject = line.size() >= subject_header.size() &&
                   absl::EqualsIgnoreCase(line.substr(0, subject_header.size()), subject_header);
    }
    if (in_subject) {
      AppendTokens(continuation ? line : line.substr(subject_header.size()), tokens);
    }
  }
  AppendTokens(mail.substr(at), tokens);
  return tokens;
}

int32_t FeatureBucket(absl::string_view token) {
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(token.data()),
                          static_cast<uInt>(token.size()));
  return static_cast<int32_t>(crc % static_cast<uLong>(kMailFeatureBuckets));
}

absl::StatusOr<MailSplit> ReadMailCorpus(const std::string& dir) {
  HOGWILD_ASSIGN_OR_RETURN(const std::vector<Group> groups, ListGroups(dir));
  MailSplit split;
  split.train.num_features = split.test.num_features = kMailFeatureBuckets;
  for (const Group& group : groups) {
    for (size_t k = 0; k < group.mails.size(); ++k) {
      HOGWILD_ASSIGN_OR_RETURN(const std::string mail, ReadMail(group.mails[k]));
      AppendRow(mail, group.label, k % 5 == 4 ? split.test : split.train);
    }
    (group.label > 0.0f ? split.spam : split.ham) += static_cast<int64_t>(group.mails.size());
  }
  if (split.spam == 0 || split.ham == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: no %s mails; a mail corpus needs a spam folder and a ham folder", dir,
        split.spam == 0 ? "spam" : "ham"));
  }
  return split;
}

}  // namespace hogwild::sparse
