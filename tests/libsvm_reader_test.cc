// The LIBSVM / SVMlight reader: what it accepts (qid, comments, blank lines, CRLF, gzip) and
// every refusal, with the line number and a one-line reason.
#include "sparse/libsvm_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "core/text_lines.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"

namespace hogwild::sparse {
namespace {

using ::hogwild::testing::ExpectError;

absl::StatusOr<SparseDataset> Parse(const std::string& text, int64_t num_features = 0) {
  return ParseLibsvm(text, LibsvmOptions{.num_features = num_features}, "t.svm");
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(LibsvmReader, ParsesLabelsIndicesValuesQidCommentsAndBlankLines) {
  absl::StatusOr<SparseDataset> data = Parse(
      "# a header comment\n"
      "+1 qid:3 1:0.5 7:-2e-1   10:3 # trailing comment\r\n"
      "\n"
      "-1\t2:1\n"
      "0 \n"
      "1.5 4:+0.25");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_examples(), 4);
  EXPECT_EQ(data->num_features, 10);  // inferred: the largest index
  EXPECT_EQ(data->labels, (std::vector<float>{1.0f, -1.0f, 0.0f, 1.5f}));
  EXPECT_EQ(data->row_offsets, (std::vector<int64_t>{0, 3, 4, 4, 5}));
  EXPECT_EQ(data->indices, (std::vector<int32_t>{0, 6, 9, 1, 3}));
  EXPECT_EQ(data->values, (std::vector<float>{0.5f, -0.2f, 3.0f, 1.0f, 0.25f}));
  EXPECT_TRUE(ValidateSparseDataset(*data).ok());
}

TEST(LibsvmReader, NumFeaturesIsKeptWhenGiven) {
  absl::StatusOr<SparseDataset> data = Parse("1 3:1\n", 100);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_features, 100);
}

TEST(LibsvmReader, EveryRefusalNamesTheLineAndTheReason) {
  struct Case {
    std::string text;
    int64_t num_features;
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {"1 1:1\n1 0:1\n", 0, "t.svm:2:", "t.svm:2: index 0: LIBSVM indices start at 1"},
      {"1 1:1\n\n1 -3:1\n", 0,
       "t.svm:3:", "t.svm:3: index -3 is negative: LIBSVM indices start at 1"},
      {"1 2:1 2:1\n", 0, "t.svm:1:", "index 2 after 2"},
      {"1 5:1 3:1\n", 0, "t.svm:1:", "index 3 after 5"},
      {"1 1:1\n1 11:1\n", 10, "t.svm:2:", "past --num_features=10"},
      {"1 abc\n", 0, "t.svm:1:", "malformed token 'abc'"},
      {"1 1:x\n", 0, "t.svm:1:", "value is not a finite number"},
      {"1 1:\n", 0, "t.svm:1:", "value is not a finite number"},
      {"1 1:1e99\n", 0, "t.svm:1:", "value is not a finite number"},  // beyond float32
      {"1 1:nan\n", 0, "t.svm:1:", "value is not a finite number"},
      {"1 :1\n", 0, "t.svm:1:", "empty index"},
      {"1 1x:1\n", 0, "t.svm:1:", "not a decimal integer"},
      {"1 1:1 qid:2\n", 0, "t.svm:1:", "qid"},
      {"spam 1:1\n", 0, "t.svm:1:", "label 'spam' is not a finite number"},
      {"inf 1:1\n", 0, "t.svm:1:", "label 'inf'"},
      {"+-1 1:1\n", 0, "t.svm:1:", "label '+-1'"},
      // A huge index: refused as its digits are read, before anything is sized by it.
      {"1 99999999999999999999999999:1\n", 0, "t.svm:1:", "above the largest supported"},
      {"1 134217729:1\n", 0, "t.svm:1:", "134217729 is above the largest supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectError(Parse(c.text, c.num_features).status(), absl::StatusCode::kInvalidArgument,
                {c.line, c.reason});
  }
  EXPECT_TRUE(Parse("1 134217728:1\n").ok());  // kMaxLibsvmFeatures itself is accepted
}

TEST(LibsvmReader, AFileWithoutExamplesIsRefused) {
  for (const std::string text : {"", "\n\n", "# only a comment\n   \n"}) {
    ExpectError(Parse(text).status(), absl::StatusCode::kInvalidArgument, {"t.svm", "no examples"});
  }
}

TEST(LibsvmReader, ALineLongerThanTheLimitIsRefused) {
  const std::string line = "1 " + std::string(kMaxTextLineBytes, ' ') + "1:1\n";
  ExpectError(Parse(line).status(), absl::StatusCode::kInvalidArgument,
              {"t.svm:1: line longer than 16777216 bytes"});
}

TEST(LibsvmReader, BadNumFeaturesOptionIsRefused) {
  ExpectError(Parse("1 1:1\n", -1).status(), absl::StatusCode::kInvalidArgument,
              {"--num_features=-1"});
  ExpectError(Parse("1 1:1\n", kMaxLibsvmFeatures + 1).status(), absl::StatusCode::kInvalidArgument,
              {"--num_features"});
}

TEST(LibsvmFile, PlainAndGzipFilesReadLikeTheParser) {
  // Many 64 KiB chunks, so lines cross chunk boundaries.
  std::string text;
  for (int i = 0; i < 40000; ++i) {
    text += (i % 3 ? "+1" : "-1");
    for (int j = 1; j <= 5; ++j)
      text += " " + std::to_string(i % 97 + j * 100) + ":0." + std::to_string(j);
    text += " # example " + std::to_string(i) + "\n";
  }
  ASSERT_GT(text.size(), size_t{2} << 20);
  absl::StatusOr<SparseDataset> parsed = Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();

  const std::string plain = TempPath("plain.svm");
  std::ofstream(plain, std::ios::binary) << text;
  const std::string gz = TempPath("data.svm.gz");
  gzFile file = gzopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);

  for (const std::string& path : {plain, gz}) {
    SCOPED_TRACE(path);
    absl::StatusOr<SparseDataset> read = ReadLibsvmFile(path, {});
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->labels, parsed->labels);
    EXPECT_EQ(read->row_offsets, parsed->row_offsets);
    EXPECT_EQ(read->indices, parsed->indices);
    EXPECT_EQ(read->values, parsed->values);
    EXPECT_EQ(read->num_features, parsed->num_features);
  }
}

TEST(LibsvmFile, ErrorsNameThePathAndTheLine) {
  const std::string bad = TempPath("bad.svm");
  std::ofstream(bad) << "1 1:1\n1 2:1\n1 0:1\n";
  ExpectError(ReadLibsvmFile(bad, {}).status(), absl::StatusCode::kInvalidArgument,
              {bad + ":3: index 0: LIBSVM indices start at 1"});
  ExpectError(ReadLibsvmFile(TempPath("missing.svm"), {}).status(), absl::StatusCode::kNotFound,
              {"missing.svm"});
  ExpectError(
      ReadLibsvmFile(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp", {}).status(),
      absl::StatusCode::kInvalidArgument, {"is a directory"});
  const std::string empty = TempPath("empty.svm");
  std::ofstream(empty).flush();
  ExpectError(ReadLibsvmFile(empty, {}).status(), absl::StatusCode::kInvalidArgument,
              {empty, "no examples"});
}

TEST(LibsvmFile, ALineLongerThanTheLimitIsRefusedWithoutHoldingMore) {
  // Spread over hundreds of chunks: the reader keeps at most the limit plus one byte of it.
  const std::string path = TempPath("long_line.svm");
  std::ofstream(path) << "1 1:1\n1 " << std::string(kMaxTextLineBytes + 10, ' ') << "2:1\n";
  ExpectError(ReadLibsvmFile(path, {}).status(), absl::StatusCode::kInvalidArgument,
              {path + ":2: line longer than 16777216 bytes"});
}

TEST(LibsvmFile, TruncatedGzipIsRefused) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "1 1:0.5 2:0.25 " + std::to_string(i + 3) + ":1\n";
  const std::string gz = TempPath("cut.svm.gz");
  gzFile file = gzopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) / 2);
  ExpectError(ReadLibsvmFile(gz, {}).status(), absl::StatusCode::kInvalidArgument, {gz, "gzip"});
}

}  // namespace
}  // namespace hogwild::sparse
