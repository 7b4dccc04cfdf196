// Bad input gets a clear one-line error, never a crash: IDX files, the MNIST loader, the trainer
// options, the flag parsers, and a diverging run. Each case checks the status code AND that the
// message names the bad value (and says what to do, where the contract promises it).
//
// Files are written into a fresh directory under testing::TempDir().
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "trainer/cli/flags_parse.h"
#include "trainer/data/idx_reader.h"
#include "trainer/data/mnist.h"
#include "trainer/model/lr_schedule.h"
#include "trainer/model/model.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

namespace fs = std::filesystem;

// Expects `status` to have `code` and a single-line message containing every one of `parts`.
void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), code) << status;
  const std::string message(status.message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message does not mention '" << part << "': " << message;
  }
}

// A fresh, empty directory per test.
std::string FreshDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::path(::testing::TempDir()) / "bad_input" / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string Gzip(const std::string& bytes, const std::string& scratch_path) {
  gzFile f = gzopen(scratch_path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  EXPECT_EQ(gzclose(f), Z_OK);
  std::ifstream in(scratch_path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void PutBigEndian32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// An IDX image: magic {0, 0, 0x08, ndims}, the dims, then `data`.
std::string Idx(uint32_t magic, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string out;
  PutBigEndian32(out, magic);
  for (uint32_t d : dims) PutBigEndian32(out, d);
  return out + data;
}

std::string Idx3(uint32_t n, uint32_t rows, uint32_t cols, const std::string& data) {
  return Idx(0x803, {n, rows, cols}, data);
}

std::string Pixels(int64_t count) {
  std::string s(count, '\0');
  for (int64_t i = 0; i < count; ++i) s[i] = static_cast<char>(i * 37 % 256);
  return s;
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
  ExpectError(ParseIdx(Idx3(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, Pixels(16)), 3, "h.idx").status(),
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
  ExpectError(ReadIdxFile(dir, 3).status(), absl::StatusCode::kInvalidArgument,
              {dir, "directory"});
}

TEST(ReadIdxFile, RejectsAnEmptyFile) {
  const std::string path = FreshDir() + "/empty";
  WriteFile(path, "");
  ExpectError(ReadIdxFile(path, 3).status(), absl::StatusCode::kInvalidArgument,
              {path, "empty"});
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

// ---- LoadMnistSplit -----------------------------------------------------------------------------

DatasetInfo FashionInfo() { return LookupDataset("fashion_mnist").value(); }

void WriteSplit(const std::string& dir, const std::string& split, const std::string& images,
                const std::string& labels) {
  WriteFile(dir + "/" + split + "-images-idx3-ubyte", images);
  WriteFile(dir + "/" + split + "-labels-idx1-ubyte", labels);
}

TEST(LoadMnistSplit, LoadsAWellFormedSplit) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "t10k", Idx3(3, 28, 28, Pixels(3 * 784)), Idx(0x801, {3}, std::string("\x07\x00\x09", 3)));
  auto data = LoadMnistSplit(FashionInfo(), dir, "t10k");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), 3);
  EXPECT_EQ(data->labels, (std::vector<int32_t>{7, 0, 9}));
  EXPECT_EQ(data->features.size(), 3u * 784);
  EXPECT_EQ(data->features[1], 37.0f / 255.0f);
}

TEST(LoadMnistSplit, MissingFilesAreNotFoundWithTheInstallHint) {
  const std::string dir = FreshDir();
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(), absl::StatusCode::kNotFound,
              {dir, "train-images-idx3-ubyte", "sudo apt-get install dataset-fashion-mnist"});
  // Images present, labels missing: the labels file is named.
  WriteFile(dir + "/train-images-idx3-ubyte", Idx3(1, 28, 28, Pixels(784)));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(), absl::StatusCode::kNotFound,
              {"train-labels-idx1-ubyte", "sudo apt-get install dataset-fashion-mnist"});
}

TEST(LoadMnistSplit, RejectsImageAndLabelCountsThatDisagree) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", Idx3(3, 28, 28, Pixels(3 * 784)), Idx(0x801, {2}, "\x01\x02"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {"3 images", "2 labels"});
}

TEST(LoadMnistSplit, RejectsALabelOutOfRangeNamingTheExample) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", Idx3(4, 28, 28, Pixels(4 * 784)), Idx(0x801, {4}, "\x01\x02\x0a\x03"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {"label 10", "example 2", "[0, 10)"});
}

TEST(LoadMnistSplit, RejectsImagesThatAreNot28By28) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", Idx3(2, 27, 28, Pixels(2 * 27 * 28)), Idx(0x801, {2}, "\x01\x02"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {"27x28", "28x28"});
}

TEST(LoadMnistSplit, ReportsACorruptFileByPath) {
  const std::string dir = FreshDir();
  WriteSplit(dir, "train", "this is not an IDX file", Idx(0x801, {1}, "\x01"));
  ExpectError(LoadMnistSplit(FashionInfo(), dir, "train").status(),
              absl::StatusCode::kInvalidArgument, {dir + "/train-images-idx3-ubyte", "magic"});
}

// ---- Options and flags --------------------------------------------------------------------------

TrainerOptions ValidOptions() {
  TrainerOptions o;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.epochs = 1;
  o.eval_every_epochs = 0;
  return o;
}

TEST(Options, ValidOptionsPass) { EXPECT_TRUE(ValidateOptions(ValidOptions()).ok()); }

TEST(Options, UnknownModelIsRejectedByName) {
  TrainerOptions o = ValidOptions();
  o.model.name = "nope";
  const Dataset data = testing::SyntheticDataset(20, 4, 3, 1);
  ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
              {"'nope'", "logreg", "mlp"});
  ExpectError(Model::Create(o.model).status(), absl::StatusCode::kInvalidArgument, {"nope"});
}

TEST(Options, UnknownDatasetIsRejectedByName) {
  ExpectError(LookupDataset("cifar10").status(), absl::StatusCode::kInvalidArgument,
              {"--dataset=cifar10", "fashion_mnist", "mnist"});
}

TEST(Options, ZeroWorkersIsRejected) {
  TrainerOptions o = ValidOptions();
  o.num_workers = 0;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"TrainerOptions::num_workers=0"});
  o.num_workers = -3;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"TrainerOptions::num_workers=-3"});
  // Train() validates too, before it starts any thread.
  ExpectError(Train(o, testing::SyntheticDataset(10, 2, 2, 1), Dataset()).status(),
              absl::StatusCode::kInvalidArgument, {"TrainerOptions::num_workers=-3"});
}

TEST(Options, NonPositiveBatchSizeIsRejected) {
  for (int64_t b : {0, -64}) {
    TrainerOptions o = ValidOptions();
    o.batch_size = b;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
                {"TrainerOptions::batch_size=" + std::to_string(b)});
  }
}

TEST(Options, NonPositiveLearningRateIsRejected) {
  for (float lr : {0.0f, -0.1f}) {
    TrainerOptions o = ValidOptions();
    o.lr.base_lr = lr;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::base_lr=", "> 0"});
  }
  TrainerOptions o = ValidOptions();
  o.lr.base_lr = -0.1f;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::base_lr=-0.1"});
  o.lr.base_lr = std::numeric_limits<float>::quiet_NaN();
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::base_lr=nan"});
}

TEST(Options, MomentumOutsideZeroToOneIsRejected) {
  for (float m : {1.0f, -0.5f, 1.5f}) {
    TrainerOptions o = ValidOptions();
    o.sgd.momentum = m;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument,
                {"TrainerOptions::sgd.momentum=" + absl::StrFormat("%g", m), "[0, 1)"});
  }
}

TEST(Options, BadLrScheduleIsRejected) {
  ExpectError(ParseLrScheduleKind("cosine").status(), absl::StatusCode::kInvalidArgument,
              {"--lr_schedule=cosine", "exponential"});
  TrainerOptions o = ValidOptions();
  o.lr.kind = LrSchedule::Kind::kExponential;
  o.lr.decay_rate = 1.5f;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::decay_rate=1.5"});
  o.lr.decay_rate = 0.5f;
  o.lr.decay_steps = 0;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"LrSchedule::decay_steps=0"});
}

TEST(Options, HiddenSizesThatDoNotParseAreRejected) {
  struct Case {
    std::string value, culprit;
  };
  for (const Case& c : {Case{"12,x", "'x'"}, Case{"", "''"}, Case{"256,,128", "''"},
                        Case{"0", "'0'"}, Case{"-4", "'-4'"}, Case{"100000", "'100000'"},
                        Case{"1.5", "'1.5'"}}) {
    ExpectError(ParseHiddenSizes(c.value).status(), absl::StatusCode::kInvalidArgument,
                {"--hidden=" + c.value, c.culprit});
  }
  auto ok = ParseHiddenSizes("256,128");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (std::vector<int64_t>{256, 128}));
}

TEST(Options, BadEvalEveryIsRejected) {
  for (const std::string value : {"abc", "-1", "0epoch", "-2epochs", "xepochs", "1.5", "5stepz"}) {
    ExpectError(ParseEvalEvery(value).status(), absl::StatusCode::kInvalidArgument,
                {"--eval_every=" + value});
  }
  auto steps = ParseEvalEvery("500steps");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->steps, 500);
  auto epochs = ParseEvalEvery("0.5epochs");
  ASSERT_TRUE(epochs.ok());
  EXPECT_EQ(epochs->epochs, 0.5);
  TrainerOptions o = ValidOptions();
  o.eval_every_steps = -5;
  ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {"TrainerOptions::eval_every_steps", "-5"});
}

// ---- Divergence ---------------------------------------------------------------------------------

TEST(Divergence, InfiniteLossStopsTrainingNamingTheStepAndSuggestingALowerLr) {
  const Dataset data = testing::SyntheticDataset(64, 8, 3, 2);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions o = ValidOptions();
    o.mode = mode;
    o.num_workers = mode == Mode::kSync ? 2 : 1;
    o.batch_size = 8;
    o.epochs = 3;
    o.lr.base_lr = 1e30f;
    // Step 0 starts from the initial parameters (finite loss); its update sends them to ~1e29,
    // so the loss of step 1 is no longer finite.
    ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
                {"diverged", "step 1", "lower --lr"});
  }
}

}  // namespace
}  // namespace hogwild
