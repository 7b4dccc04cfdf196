// The IDX reader (trainer/data/idx_reader.h): well-formed images parse, and every malformed
// header, payload or gzip stream gets a one-line error naming the file and the bad value, from
// the header alone where the sizes are absurd (never an allocation of that size).
//
// Files are written into a fresh directory under testing::TempDir().
#include "trainer/data/idx_reader.h"

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/idx_files.h"

namespace hogwild {
namespace {

using testing::ExpectError;
using testing::FreshDir;
using testing::Idx;
using testing::Idx3;
using testing::Pixels;
using testing::WriteFile;

std::string Gzip(const std::string& bytes, const std::string& scratch_path) {
  gzFile f = gzopen(scratch_path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  EXPECT_EQ(gzclose(f), Z_OK);
  std::ifstream in(scratch_path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---- ParseIdx -----------------------------------------------------------------------------------

TEST(ParseIdx, AcceptsAWellFormedImage) {
  auto array = ParseIdx(Idx3(2, 3, 4, Pixels(24)), 3, "mem");
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->dims, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(std::string(array->data.begin(), array->data.end()), Pixels(24));
}

TEST(ParseIdx, RejectsAWrongMagicNumber) {
  // A label file (1 dimension) where images (3) were expected, and a non-byte type.
  ExpectError(ParseIdx(Idx(0x801, {5}, Pixels(5)), 3, "x.idx").status(),
              absl::StatusCode::kInvalidArgument, {"x.idx", "magic", "0x00000801", "0x00000803"});
  ExpectError(ParseIdx(Idx(0xD03, {1, 1, 1}, Pixels(1)), 3, "x.idx").status(),
              absl::StatusCode::kInvalidArgument, {"magic", "0x00000d03"});
  ExpectError(ParseIdx("PK\x03\x04zipfile", 1, "x.idx").status(),
              absl::StatusCode::kInvalidArgument, {"magic"});
}

TEST(ParseIdx, RejectsATruncatedHeader) {
  ExpectError(ParseIdx(std::string("\0\0", 2), 1, "short.idx").status(),
              absl::StatusCode::kInvalidArgument, {"short.idx", "2 bytes"});
  // The magic is right but only one of the three dimensions is there.
  ExpectError(ParseIdx(Idx(0x803, {60000}, ""), 3, "hdr.idx").status(),
              absl::StatusCode::kInvalidArgument, {"hdr.idx", "truncated", "header", "8 bytes"});
}

TEST(ParseIdx, RejectsTruncatedData) {
  ExpectError(ParseIdx(Idx3(2, 28, 28, Pixels(1000)), 3, "t.idx").status(),
              absl::StatusCode::kInvalidArgument, {"t.idx", "truncated", "1568", "1000"});
}

TEST(ParseIdx, RejectsDataLongerThanTheHeaderSays) {
  ExpectError(ParseIdx(Idx3(1, 2, 2, Pixels(5)), 3, "long.idx").status(),
              absl::StatusCode::kInvalidArgument, {"long.idx", "longer", "4", "5"});
}

TEST(ParseIdx, RejectsHugeDimensionsBeforeAllocating) {
  // 0xFFFFFFFF^3 bytes would overflow 64 bits; 65536 x 65536 is 4 GiB. Both must be refused
  // from the header alone (an allocation of that size would abort the test).
  ExpectError(
      ParseIdx(Idx3(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, Pixels(16)), 3, "h.idx").status(),
      absl::StatusCode::kInvalidArgument, {"h.idx", "4294967295", "corrupt"});
  ExpectError(ParseIdx(Idx3(65536, 65536, 1, Pixels(16)), 3, "h.idx").status(),
              absl::StatusCode::kInvalidArgument, {"65536", "corrupt"});
}

TEST(ParseIdx, RejectsADimensionOfZero) {
  ExpectError(ParseIdx(Idx3(0, 28, 28, ""), 3, "z.idx").status(),
              absl::StatusCode::kInvalidArgument, {"z.idx", "dimension 0 is 0"});
  ExpectError(ParseIdx(Idx3(10, 28, 0, ""), 3, "z.idx").status(),
              absl::StatusCode::kInvalidArgument, {"dimension 2 is 0"});
}

// ---- ReadIdxFile --------------------------------------------------------------------------------

TEST(ReadIdxFile, ReadsPlainAndGzipCompressedFilesAlike) {
  const std::string dir = FreshDir();
  const std::string bytes = Idx3(3, 28, 28, Pixels(3 * 784));
  WriteFile(dir + "/plain", bytes);
  const std::string gz = Gzip(bytes, dir + "/compressed.gz");
  ASSERT_NE(gz, bytes);
  ASSERT_EQ(gz.substr(0, 2), "\x1f\x8b") << "not a gzip stream";
  auto plain = ReadIdxFile(dir + "/plain", 3);
  auto compressed = ReadIdxFile(dir + "/compressed.gz", 3);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(compressed.ok()) << compressed.status();
  EXPECT_EQ(plain->dims, (std::vector<int64_t>{3, 28, 28}));
  EXPECT_EQ(plain->dims, compressed->dims);
  EXPECT_EQ(plain->data, compressed->data);
  EXPECT_EQ(std::string(plain->data.begin(), plain->data.end()), Pixels(3 * 784));
}

TEST(ReadIdxFile, MissingFileIsNotFound) {
  const std::string path = FreshDir() + "/nope-idx3-ubyte";
  ExpectError(ReadIdxFile(path, 3).status(), absl::StatusCode::kNotFound, {path});
}

TEST(ReadIdxFile, RejectsADirectory) {
  const std::string dir = FreshDir();
  ExpectError(ReadIdxFile(dir, 3).status(), absl::StatusCode::kInvalidArgument, {dir, "directory"});
}

TEST(ReadIdxFile, RejectsAnEmptyFile) {
  const std::string path = FreshDir() + "/empty";
  WriteFile(path, "");
  ExpectError(ReadIdxFile(path, 3).status(), absl::StatusCode::kInvalidArgument, {path, "empty"});
}

TEST(ReadIdxFile, RejectsHugeHeaderCountsInAFile) {
  const std::string path = FreshDir() + "/huge";
  WriteFile(path, Idx3(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, Pixels(100)));
  ExpectError(ReadIdxFile(path, 3).status(), absl::StatusCode::kInvalidArgument,
              {path, "4294967295"});
}

TEST(ReadIdxFile, RejectsCorruptGzip) {
  const std::string dir = FreshDir();
  const std::string gz = Gzip(Idx3(4, 28, 28, Pixels(4 * 784)), dir + "/scratch.gz");
  ASSERT_GT(gz.size(), 40u);

  // Cut in the middle of the deflate stream.
  const std::string truncated = dir + "/truncated.gz";
  WriteFile(truncated, gz.substr(0, gz.size() / 2));
  ExpectError(ReadIdxFile(truncated, 3).status(), absl::StatusCode::kInvalidArgument,
              {truncated, "gzip"});

  // Garbage inside the deflate stream (after the 10-byte gzip header).
  std::string garbled = gz;
  for (size_t i = 12; i < 40; ++i) garbled[i] = static_cast<char>(0xff);
  const std::string garbled_path = dir + "/garbled.gz";
  WriteFile(garbled_path, garbled);
  ExpectError(ReadIdxFile(garbled_path, 3).status(), absl::StatusCode::kInvalidArgument,
              {garbled_path, "gzip"});

  // A wrong CRC in the trailer: the data inflates, the check fails.
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x55;
  const std::string crc_path = dir + "/crc.gz";
  WriteFile(crc_path, bad_crc);
  ExpectError(ReadIdxFile(crc_path, 3).status(), absl::StatusCode::kInvalidArgument,
              {crc_path, "gzip"});
}

}  // namespace
}  // namespace hogwild
