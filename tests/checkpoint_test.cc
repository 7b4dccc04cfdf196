// The checkpoint file format and its I/O (trainer/checkpoint.h): round trips, every kind of
// damage refused with a message naming the field, signature mismatches naming the field, and
// the atomic-write promise that a failed write leaves the previous checkpoint intact.
#include "trainer/checkpoint/checkpoint.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hogwild {
namespace {

namespace fs = std::filesystem;

Checkpoint SmallCheckpoint(int workers = 2, bool momentum = true) {
  Checkpoint c;
  c.signature =
      CheckpointSignature{.model_name = "mlp",
                          .input_shape = {1, 2, 3},
                          .num_classes = 4,
                          .layers = {"dense 6->5", "relu 5", "dense 5->4"},
                          .num_params = 59,
                          .mode = Mode::kAsync,
                          .num_workers = workers,
                          .batch_size = 8,
                          .seed = 42,
                          .train_examples = 100,
                          .dataset = DatasetId{.name = "fashion_mnist", .fingerprint = 0x1234abcd},
                          .constants = OptimizerConstants{.momentum = 0.9f, .weight_decay = 1e-4f}};
  c.global_step = 123;
  c.epoch = 3;
  for (int w = 0; w < workers; ++w) c.next_step.push_back(60 + w);
  for (int i = 0; i < 59; ++i) c.params.push_back(0.25f * i - 3.0f);
  if (momentum) {
    for (int w = 0; w < workers; ++w) c.optimizer_state.emplace_back(59, 0.5f * (w + 1));
  }
  return c;
}

void ExpectEqual(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_TRUE(CheckSignature(a.signature, b.signature, "x").ok());
  EXPECT_EQ(a.global_step, b.global_step);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.next_step, b.next_step);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.optimizer_state, b.optimizer_state);
  EXPECT_EQ(a.optimizer_steps, b.optimizer_steps);
  EXPECT_EQ(a.ema, b.ema);
  EXPECT_EQ(a.signature.optimizer, b.signature.optimizer);
  EXPECT_EQ(a.signature.constants, b.signature.constants);
}

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(base != nullptr ? base : "/tmp") / name;
  fs::remove_all(dir);
  return dir.string();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Checkpoint, SerializeParseRoundTrip) {
  for (bool momentum : {false, true}) {
    const Checkpoint c = SmallCheckpoint(3, momentum);
    auto parsed = ParseCheckpoint(SerializeCheckpoint(c), "mem");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ExpectEqual(c, *parsed);
  }
}

TEST(Checkpoint, FileRoundTripAndNoTempFileLeft) {
  const std::string dir = TempDir("roundtrip/nested");  // created by the writer
  const Checkpoint c = SmallCheckpoint();
  ASSERT_TRUE(WriteCheckpoint(dir, c).ok());
  auto read = ReadLatestCheckpoint(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  ExpectEqual(c, **read);
  // The directory holds the checkpoint and nothing else: no temporary file is left.
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "checkpoint.hwckpt");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// The temporary file has a name of its own: a file the user keeps at `checkpoint.hwckpt.tmp`
// (or a symlink there to another file) is neither truncated nor renamed away by a save.
TEST(Checkpoint, SavingTouchesNoFileBesideTheCheckpoint) {
  const std::string dir = TempDir("user_tmp");
  fs::create_directories(dir);
  const std::string kept = dir + "/elsewhere.txt";
  std::ofstream(kept) << "the user's own";
  std::ofstream(CheckpointPath(dir) + ".tmp") << "a user's file";
  fs::create_symlink(kept, dir + "/.checkpoint.hwckpt.tmp");
  ASSERT_TRUE(WriteCheckpoint(dir, SmallCheckpoint()).ok());
  std::stringstream tmp_text, kept_text;
  tmp_text << std::ifstream(CheckpointPath(dir) + ".tmp").rdbuf();
  kept_text << std::ifstream(kept).rdbuf();
  EXPECT_EQ(tmp_text.str(), "a user's file");
  EXPECT_EQ(kept_text.str(), "the user's own");
  EXPECT_TRUE(fs::is_symlink(dir + "/.checkpoint.hwckpt.tmp"));
}

TEST(Checkpoint, EverySingleBitFlipIsRefused) {
  // crc32 detects every single-bit error, and the header is checksummed too: no flipped bit
  // anywhere in the file may be accepted, and none may crash the parser.
  const std::string bytes = SerializeCheckpoint(SmallCheckpoint(2, false));
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      auto parsed = ParseCheckpoint(damaged, "flip");
      ASSERT_FALSE(parsed.ok()) << "byte " << i << " bit " << bit << " accepted";
    }
  }
}

TEST(Checkpoint, EveryTruncationAndExtensionIsRefused) {
  const std::string bytes = SerializeCheckpoint(SmallCheckpoint());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto parsed = ParseCheckpoint(bytes.substr(0, n), "cut");
    ASSERT_FALSE(parsed.ok()) << n;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss) << parsed.status();
  }
  auto longer = ParseCheckpoint(bytes + "x", "long");
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.status().message().find("trailing"), std::string::npos) << longer.status();
}

TEST(Checkpoint, DamageMessagesNameTheProblem) {
  const std::string bytes = SerializeCheckpoint(SmallCheckpoint());
  std::string payload_flip = bytes;
  payload_flip[bytes.size() - 1] ^= 1;
  auto s = ParseCheckpoint(payload_flip, "f.ckpt").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("f.ckpt"), std::string::npos) << s;
  EXPECT_NE(s.message().find("payload checksum"), std::string::npos) << s;

  std::string magic = bytes;
  magic[0] = 'X';
  s = ParseCheckpoint(magic, "f.ckpt").status();
  EXPECT_NE(s.message().find("not a hogwild checkpoint"), std::string::npos) << s;

  s = ParseCheckpoint(bytes.substr(0, bytes.size() - 10), "f.ckpt").status();
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s;
}

TEST(Checkpoint, NewerVersionIsRefusedByName) {
  std::string bytes = SerializeCheckpoint(SmallCheckpoint());
  bytes[8] = kCheckpointVersion + 1;  // then fix the header checksum: only the version differs
  const uint32_t crc = static_cast<uint32_t>(
      crc32(crc32(0, nullptr, 0), reinterpret_cast<const unsigned char*>(bytes.data()), 28));
  std::memcpy(bytes.data() + 28, &crc, 4);
  auto s = ParseCheckpoint(bytes, "v2").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find(absl::StrCat("version ", kCheckpointVersion + 1)), std::string::npos)
      << s;
  EXPECT_NE(s.message().find("newer"), std::string::npos) << s;
}

std::string RunfilePath(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir != nullptr ? srcdir : ".") + "/hogwild/" + path;
}

TEST(Checkpoint, Version1FilesAreStillReadWithoutADataset) {
  // A file written by the version-1 format (before the dataset was recorded), kept in the fuzz
  // corpus: it must still load, with no dataset, so runs of the previous release can resume.
  auto old =
      ReadCheckpointFile(RunfilePath("tests/fuzz/corpus/checkpoint/v1_async_momentum.hwckpt"));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->format_version, 1u);
  EXPECT_FALSE(old->signature.dataset.has_value());
  EXPECT_EQ(old->global_step, 7);
  // The migration writes it back in the current version, with the dataset when it is known.
  Checkpoint migrated = *old;
  migrated.format_version = kCheckpointVersion;
  migrated.signature.dataset = DatasetId{.name = "mnist", .fingerprint = 7};
  auto reparsed = ParseCheckpoint(SerializeCheckpoint(migrated), "migrated");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_EQ(reparsed->format_version, kCheckpointVersion);
  EXPECT_EQ(reparsed->signature.dataset, migrated.signature.dataset);
  // And a version-1 file written now round-trips bit for bit (the fuzzer's invariant).
  Checkpoint v1 = SmallCheckpoint();
  v1.format_version = 1;
  const std::string bytes = SerializeCheckpoint(v1);
  auto parsed = ParseCheckpoint(bytes, "v1");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->signature.dataset.has_value());
  EXPECT_EQ(SerializeCheckpoint(*parsed), bytes);
}

TEST(Checkpoint, Version3FilesAreStillReadWithoutOptimizerConstants) {
  // A file of the previous format (version 3), kept in the fuzz corpus: it loads with its
  // optimizer state, and a resume of it cannot compare the constants (nor refuse them).
  auto old = ReadCheckpointFile(RunfilePath("tests/fuzz/corpus/checkpoint/v3_async_adam.hwckpt"));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->format_version, 3u);
  EXPECT_EQ(old->signature.optimizer, "adam");
  EXPECT_FALSE(old->signature.constants.has_value());
  // Version 4 (the constants, before the rank count) is one process's, constants included.
  auto v4 = ReadCheckpointFile(RunfilePath("tests/fuzz/corpus/checkpoint/v4_async_adam.hwckpt"));
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->format_version, 4u);
  EXPECT_TRUE(v4->signature.constants.has_value());
  EXPECT_EQ(v4->signature.num_ranks, 1);
  CheckpointSignature now = old->signature;
  now.constants = OptimizerConstants{.beta1 = 0.5f};
  EXPECT_TRUE(CheckSignature(now, old->signature, "c").ok());
  // An EMA on one side only is the EMA check's to refuse (it says it is missing).
  CheckpointSignature with = SmallCheckpoint().signature, without = with;
  without.constants->ema_decay = 0.99f;
  EXPECT_TRUE(CheckSignature(with, without, "c").ok());
  // A momentum on one side only is refused here, naming the file and both values.
  without = with;
  without.constants->momentum = 0.0f;
  const absl::Status s = CheckSignature(with, without, "dir/checkpoint.hwckpt");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("dir/checkpoint.hwckpt: cannot resume: --momentum differs: the "
                             "checkpoint has 0, this run 0.9; "),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("resume with --momentum=0 "), std::string::npos) << s;
}

TEST(Checkpoint, Version5FilesAreStillReadWithoutAModeOption) {
  // Version 5, before ssp, backup and local_sgd wrote checkpoints (and their option joined the
  // signature): an async file, kept in the fuzz corpus, loads with every mode option 0.
  auto v5 =
      ReadCheckpointFile(RunfilePath("tests/fuzz/corpus/checkpoint/v5_async_momentum.hwckpt"));
  ASSERT_TRUE(v5.ok()) << v5.status();
  EXPECT_EQ(v5->format_version, 5u);
  EXPECT_EQ(v5->signature.mode, Mode::kAsync);
  EXPECT_EQ(v5->signature.staleness_bound, 0);
  EXPECT_EQ(v5->signature.backup_workers, 0);
  EXPECT_EQ(v5->signature.average_every, 0);
  EXPECT_TRUE(CheckSignature(v5->signature, v5->signature, "c").ok());
  // The current version keeps a local_sgd run's position and its averaging period.
  Checkpoint c = SmallCheckpoint();
  c.signature.mode = Mode::kLocalSgd;
  c.signature.average_every = 3;
  auto parsed = ParseCheckpoint(SerializeCheckpoint(c), "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->signature.mode, Mode::kLocalSgd);
  EXPECT_EQ(parsed->signature.average_every, 3);
  ExpectEqual(c, *parsed);
}

TEST(Checkpoint, Version7KeepsTheOuterOptimizerAndVersion6ReadsAsPlainAveraging) {
  Checkpoint c = SmallCheckpoint();
  c.signature.mode = Mode::kLocalSgd;
  c.signature.average_every = 3;
  c.signature.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  // The outer momentum: one more buffer after the owners' ones.
  c.optimizer_state.push_back(std::vector<float>(c.params.size(), 0.25f));
  auto parsed = ParseCheckpoint(SerializeCheckpoint(c), "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->signature.outer, c.signature.outer);
  ExpectEqual(c, *parsed);
  // Without the buffer its signature promises, the file is corrupt.
  c.optimizer_state.clear();
  EXPECT_EQ(ParseCheckpoint(SerializeCheckpoint(c), "mem").status().code(),
            absl::StatusCode::kDataLoss);
  // Version 6 had no outer optimizer: local_sgd was plain averaging.
  Checkpoint v6 = SmallCheckpoint();
  v6.format_version = 6;
  v6.signature.mode = Mode::kLocalSgd;
  v6.signature.average_every = 3;
  auto old = ParseCheckpoint(SerializeCheckpoint(v6), "mem");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->format_version, 6u);
  EXPECT_EQ(old->signature.outer, OuterOptimizer{});
}

// Version 8: a policy's own state (sync/mode_state.h) and the options of async_local_sgd and
// Streaming DiLoCo round-trip; a mode buffer of another size, a non-finite replica value or
// time is refused; version 7 reads as no mode state and the options' defaults.
TEST(Checkpoint, Version8KeepsTheModeStateAndVersion7ReadsWithout) {
  Checkpoint c = SmallCheckpoint(2, false);
  c.signature.mode = Mode::kAsyncLocalSgd;
  c.signature.average_every = 4;
  // Its outer momentum is in the mode state, not after the (here absent) optimizer state.
  c.signature.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  c.signature.delayed_nesterov = 3;
  c.signature.dynamic_local_updates = true;
  c.signature.streaming = {.fragments = 2, .overlap_steps = 1, .mix_alpha = 0.5f};
  for (int b = 0; b < 4; ++b) c.mode_state.buffers.emplace_back(c.params.size(), 0.5f * b);
  c.mode_state.counters = {2, 1, 1, 4, 0, 1, 1, 0, 4, 1, 1};
  c.mode_state.seconds = {0.5, 0.25, 0.0, 1.5};
  auto parsed = ParseCheckpoint(SerializeCheckpoint(c), "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectEqual(c, *parsed);
  EXPECT_EQ(parsed->mode_state, c.mode_state);
  EXPECT_EQ(parsed->signature.delayed_nesterov, 3);
  EXPECT_TRUE(parsed->signature.dynamic_local_updates);
  EXPECT_EQ(parsed->signature.streaming, c.signature.streaming);

  Checkpoint short_buffer = c;
  short_buffer.mode_state.buffers[1].pop_back();
  const absl::Status shorter = ParseCheckpoint(SerializeCheckpoint(short_buffer), "mem").status();
  EXPECT_EQ(shorter.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(shorter.message().find("field mode_buffers: a buffer of 58 values for num_params 59"),
            std::string::npos)
      << shorter;
  Checkpoint nan_replica = c;
  nan_replica.mode_state.buffers[2][5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ParseCheckpoint(SerializeCheckpoint(nan_replica), "mem").status().message(),
            "mem: training diverged: replica or outer-state value 5 is nan at global step 123; "
            "lower --lr (or --weight_decay or --momentum); a diverged checkpoint cannot be "
            "resumed or predicted with");
  Checkpoint inf_time = c;
  inf_time.mode_state.seconds[3] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ParseCheckpoint(SerializeCheckpoint(inf_time), "mem").status().code(),
            absl::StatusCode::kDataLoss);

  Checkpoint v7 = SmallCheckpoint();
  v7.format_version = 7;
  auto old = ParseCheckpoint(SerializeCheckpoint(v7), "mem");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->format_version, 7u);
  EXPECT_TRUE(old->mode_state.empty());
  EXPECT_EQ(old->signature.delayed_nesterov, 0);
  EXPECT_EQ(old->signature.streaming, StreamingOptions{});
}

TEST(Checkpoint, DatasetIsPartOfTheSignature) {
  const CheckpointSignature base = SmallCheckpoint().signature;
  CheckpointSignature other = base;
  other.dataset = DatasetId{.name = "mnist", .fingerprint = 0x1234abcd};
  absl::Status s = CheckSignature(base, other, "dir/checkpoint.hwckpt");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  // Both names, the checkpoint's first.
  EXPECT_NE(s.message().find("dataset differs: the checkpoint has mnist (fingerprint 0x1234abcd), "
                             "this run fashion_mnist (fingerprint 0x1234abcd)"),
            std::string::npos)
      << s;
  other = base;
  other.dataset = DatasetId{.name = "fashion_mnist", .fingerprint = 0x1234abcc};  // other files
  s = CheckSignature(base, other, "c");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("0x1234abcc"), std::string::npos) << s;
  // A signature without a dataset (a version-1 file) cannot be compared: the trainer warns.
  other = base;
  other.dataset.reset();
  EXPECT_TRUE(CheckSignature(base, other, "c").ok());
  // The dataset is stored: a parsed checkpoint keeps it.
  auto parsed = ParseCheckpoint(SerializeCheckpoint(SmallCheckpoint()), "mem");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->signature.dataset, base.dataset);
}

TEST(Checkpoint, AJobsCheckpointHoldsEveryRanksDataPositions) {
  // 2 ranks x 2 workers: 4 data positions, rank-major; the rank count round-trips.
  Checkpoint job = SmallCheckpoint();
  job.signature.num_ranks = 2;
  job.next_step.assign(2 * static_cast<size_t>(job.signature.num_workers), 0);
  for (size_t i = 0; i < job.next_step.size(); ++i) job.next_step[i] = 10 + static_cast<int64_t>(i);
  auto parsed = ParseCheckpoint(SerializeCheckpoint(job), "job");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->signature.num_ranks, 2);
  EXPECT_EQ(parsed->next_step, job.next_step);
  // One rank's worth of positions for 2 ranks is a corrupt file, named by field.
  Checkpoint short_job = job;
  short_job.next_step.resize(static_cast<size_t>(job.signature.num_workers));
  auto refused = ParseCheckpoint(SerializeCheckpoint(short_job), "short");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(refused.status().message().find("next_step"), std::string::npos) << refused.status();
  // A version-4 file (before jobs of several processes) is one process's.
  Checkpoint v3 = SmallCheckpoint();
  v3.format_version = 4;
  auto old = ParseCheckpoint(SerializeCheckpoint(v3), "v3");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->signature.num_ranks, 1);
}

TEST(Checkpoint, SignatureMismatchNamesTheField) {
  const CheckpointSignature base = SmallCheckpoint().signature;
  struct Case {
    const char* field;
    void (*change)(CheckpointSignature&);
  };
  const Case cases[] = {
      {"model differs", [](CheckpointSignature& s) { s.model_name = "logreg"; }},
      {"input shape differs",
       [](CheckpointSignature& s) {
         s.input_shape = {1, 3, 2};
       }},
      {"number of classes differs", [](CheckpointSignature& s) { s.num_classes = 5; }},
      {"layers differ:", [](CheckpointSignature& s) { s.layers[0] = "dense 6->7"; }},
      {"parameter count differs", [](CheckpointSignature& s) { s.num_params = 60; }},
      {"mode differs", [](CheckpointSignature& s) { s.mode = Mode::kSync; }},
      {"worker count differs", [](CheckpointSignature& s) { s.num_workers = 3; }},
      {"the checkpoint has 3, this run 1", [](CheckpointSignature& s) { s.num_ranks = 3; }},
      {"batch size differs", [](CheckpointSignature& s) { s.batch_size = 9; }},
      {"seed differs", [](CheckpointSignature& s) { s.seed = 43; }},
      {"training-set size differs", [](CheckpointSignature& s) { s.train_examples = 99; }},
      // Format version 4: the optimizer's constants, named by their flags with both values.
      {"--momentum differs: the checkpoint has 0.5, this run 0.9",
       [](CheckpointSignature& s) { s.constants->momentum = 0.5f; }},
      {"--adam_beta1 differs: the checkpoint has 0.8, this run 0.9",
       [](CheckpointSignature& s) { s.constants->beta1 = 0.8f; }},
      {"--adam_beta2 differs", [](CheckpointSignature& s) { s.constants->beta2 = 0.99f; }},
      {"--rmsprop_alpha differs", [](CheckpointSignature& s) { s.constants->alpha = 0.9f; }},
      {"--eps differs: the checkpoint has 1e-06, this run 0",
       [](CheckpointSignature& s) { s.constants->eps = 1e-6f; }},
      {"--weight_decay differs", [](CheckpointSignature& s) { s.constants->weight_decay = 0.0f; }},
      {"--ema_decay differs: the checkpoint has 0.99, this run 0.999",
       [](CheckpointSignature& s) { s.constants->ema_decay = 0.99f; }},
      // Format version 6: the mode's option, named by its flag with both values.
      {"--staleness_bound differs: the checkpoint has 4, this run 0",
       [](CheckpointSignature& s) { s.staleness_bound = 4; }},
      {"--backup_workers differs: the checkpoint has 1, this run 0",
       [](CheckpointSignature& s) { s.backup_workers = 1; }},
      {"--average_every differs: the checkpoint has 8, this run 0",
       [](CheckpointSignature& s) { s.average_every = 8; }},
      // Format version 7: local_sgd's outer optimizer.
      {"--outer_lr differs: the checkpoint has 0.7, this run 1",
       [](CheckpointSignature& s) { s.outer.lr = 0.7f; }},
      {"--outer_momentum differs: the checkpoint has 0.9, this run 0",
       [](CheckpointSignature& s) { s.outer.momentum = 0.9f; }},
      {"--outer_nesterov differs: the checkpoint has true, this run false",
       [](CheckpointSignature& s) { s.outer.nesterov = true; }},
  };
  EXPECT_TRUE(CheckSignature(base, base, "c").ok());
  for (const Case& c : cases) {
    CheckpointSignature expected = base;
    expected.constants->ema_decay = 0.999f;  // so that a changed EMA decay is not a missing one
    CheckpointSignature other = expected;
    c.change(other);
    const absl::Status s = CheckSignature(expected, other, "dir/checkpoint.hwckpt");
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << c.field;
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s;
    EXPECT_NE(s.message().find("dir/checkpoint.hwckpt"), std::string::npos) << s;
  }
}

TEST(CheckpointDir, IsCheckedToBeWritableBeforeAnyWork) {
  // Missing (nested): created, and no probe file left behind.
  const std::string fresh = TempDir("probe/nested/dir");
  ASSERT_TRUE(CheckCheckpointDirWritable(fresh).ok());
  ASSERT_TRUE(fs::is_directory(fresh));
  EXPECT_TRUE(fs::is_empty(fresh));
  // An existing directory with a checkpoint: untouched.
  ASSERT_TRUE(WriteCheckpoint(fresh, SmallCheckpoint()).ok());
  ASSERT_TRUE(CheckCheckpointDirWritable(fresh).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(fresh), fs::directory_iterator()), 1);

  // A regular file.
  const std::string file = TempDir("probe_file");
  WriteBytes(file, "x");
  absl::Status s = CheckCheckpointDirWritable(file);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(file + ": exists and is not a directory"), std::string::npos) << s;
  // Below a regular file, and under /proc (where nothing can be created).
  for (const std::string& bad : {file + "/sub", std::string("/proc/x")}) {
    s = CheckCheckpointDirWritable(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(bad + ": cannot create the directory ("), std::string::npos) << s;
  }
  // A directory the user cannot write (root writes anywhere, so only as another user).
  if (geteuid() != 0) {
    const std::string read_only = TempDir("probe_read_only");
    fs::create_directories(read_only);
    chmod(read_only.c_str(), 0555);
    s = CheckCheckpointDirWritable(read_only);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
    EXPECT_NE(s.message().find(read_only + ": cannot create a file in it (Permission denied)"),
              std::string::npos)
        << s;
    chmod(read_only.c_str(), 0755);
  }
}

// Version 3: the optimizer's name and Adam's moments and step counts round-trip; another
// optimizer is refused by name.
TEST(Checkpoint, OptimizerStateAndStepCountsRoundTrip) {
  Checkpoint c = SmallCheckpoint();
  c.signature.optimizer = "adam";
  c.optimizer_state.emplace_back(59, 0.125f);
  c.optimizer_state.emplace_back(59, 0.375f);  // m and v for each of the 2 workers
  c.optimizer_steps = {uint64_t{1} << 40, 7};
  c.ema.assign(59, -0.5f);
  auto parsed = ParseCheckpoint(SerializeCheckpoint(c), "x");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectEqual(c, *parsed);
  CheckpointSignature sgd = c.signature;
  sgd.optimizer = "sgd";
  const absl::Status s = CheckSignature(sgd, parsed->signature, "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("optimizer differs: the checkpoint has adam, this run sgd"),
            std::string::npos)
      << s;
}

TEST(Checkpoint, InconsistentSizesAreRefused) {
  // Well-formed files (valid checksums) whose fields disagree: only a writer bug or a forgery
  // produces them, and the parser must still refuse them.
  Checkpoint c = SmallCheckpoint();
  c.next_step.pop_back();
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
  c = SmallCheckpoint();
  c.params.pop_back();
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
  c = SmallCheckpoint();
  c.optimizer_state.push_back(c.optimizer_state.back());  // 3 buffers: neither 1, 2, W nor 2W
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
  c = SmallCheckpoint();
  c.optimizer_steps = {1, 2, 3};  // neither 1 nor W step counts
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
  c = SmallCheckpoint();
  c.ema.assign(58, 0.0f);  // neither 0 nor P values
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
  c = SmallCheckpoint();
  c.signature.mode = static_cast<Mode>(99);  // written as "unknown"
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
  c = SmallCheckpoint();
  c.next_step[0] = -1;
  EXPECT_FALSE(ParseCheckpoint(SerializeCheckpoint(c), "x").ok());
}

TEST(Checkpoint, NonFiniteParametersAreNeverWrittenNorLoaded) {
  const std::string dir = TempDir("nonfinite");
  ASSERT_TRUE(WriteCheckpoint(dir, SmallCheckpoint()).ok());
  struct Case {
    float bad;
    bool in_ema;
    std::string what;
  };
  for (const Case& k :
       {Case{std::numeric_limits<float>::quiet_NaN(), false, "parameter 7 is nan"},
        Case{-std::numeric_limits<float>::infinity(), false, "parameter 7 is -inf"},
        Case{std::numeric_limits<float>::infinity(), true, "EMA parameter 7 is inf"}}) {
    SCOPED_TRACE(k.what);
    Checkpoint c = SmallCheckpoint();
    if (k.in_ema) c.ema.assign(c.params.size(), 0.5f);
    (k.in_ema ? c.ema : c.params)[7] = k.bad;
    const std::string diverged =
        "training diverged: " + k.what +
        " at global step 123; lower --lr (or --weight_decay or --momentum)";
    const absl::Status s = WriteCheckpoint(dir, c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(s.message(),
              diverged + "; not written into " + dir + ", the previous checkpoint is kept");
    const absl::Status read = ParseCheckpoint(SerializeCheckpoint(c), "x").status();
    EXPECT_EQ(read.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(read.message(),
              "x: " + diverged + "; a diverged checkpoint cannot be resumed or predicted with");
  }
  auto kept = ReadLatestCheckpoint(dir);
  ASSERT_TRUE(kept.ok() && kept->has_value());
  ExpectEqual(SmallCheckpoint(), **kept);
}

TEST(Checkpoint, FailedWriteKeepsThePreviousCheckpoint) {
  const std::string dir = TempDir("failed_write");
  const Checkpoint good = SmallCheckpoint();
  ASSERT_TRUE(WriteCheckpoint(dir, good).ok());
  // A file-size limit below the checkpoint's size makes the write of the new file fail (EFBIG;
  // SIGXFSZ ignored, as the kernel would otherwise end the process).
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  Checkpoint newer = SmallCheckpoint();
  newer.global_step = 999;
  const absl::Status s = WriteCheckpoint(dir, newer);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_EQ(s.message(), CheckpointPath(dir) + ": cannot write it (File too large)") << s;
  auto kept = ReadLatestCheckpoint(dir);
  ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
  EXPECT_EQ((*kept)->global_step, 123);
  // The failed write's temporary file is gone.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(Checkpoint, WriteIntoAFileInsteadOfADirectoryFails) {
  const std::string dir = TempDir("plain_file");
  WriteBytes(dir, "not a directory");
  const absl::Status s = WriteCheckpoint(dir, SmallCheckpoint());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("--checkpoint_dir=" + dir), std::string::npos) << s;
  EXPECT_EQ(ReadLatestCheckpoint(dir).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Checkpoint, BadFilesGiveClearErrors) {
  const std::string dir = TempDir("bad_files");
  fs::create_directories(dir);
  // Missing directory or file: no checkpoint yet, not an error.
  auto none = ReadLatestCheckpoint(dir + "/missing");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  none = ReadLatestCheckpoint(dir);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  EXPECT_EQ(ReadCheckpointFile(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  auto s = ReadCheckpointFile(dir).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is a directory"), std::string::npos) << s;

  WriteBytes(CheckpointPath(dir), "");
  s = ReadLatestCheckpoint(dir).status();
  EXPECT_NE(s.message().find("empty"), std::string::npos) << s;

  // A damaged file is an error, never "no checkpoint" (which would silently restart training).
  std::string bytes = SerializeCheckpoint(SmallCheckpoint());
  bytes[40] ^= 0x10;
  WriteBytes(CheckpointPath(dir), bytes);
  s = ReadLatestCheckpoint(dir).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;

  if (geteuid() != 0) {  // root reads anything
    WriteBytes(CheckpointPath(dir), SerializeCheckpoint(SmallCheckpoint()));
    chmod(CheckpointPath(dir).c_str(), 0);
    EXPECT_EQ(ReadLatestCheckpoint(dir).status().code(), absl::StatusCode::kPermissionDenied);
  }
}

TEST(Checkpoint, SeedCorpusCheckpointStillParses) {
  // The fuzzer's seed must be a valid current-format checkpoint, or fuzzing starts from noise.
  // Regenerate with `bazel run //tests:make_fuzz_seeds -- $PWD/tests/fuzz/corpus`.
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  for (const char* name :
       {"valid_async_momentum.hwckpt", "valid_async_adam.hwckpt", "valid_sync_plain.hwckpt",
        "valid_async_local_sgd.hwckpt"}) {
    const std::string path = std::string(srcdir) + "/hogwild/tests/fuzz/corpus/checkpoint/" + name;
    auto c = ReadCheckpointFile(path);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->format_version, kCheckpointVersion) << name;
    EXPECT_TRUE(c->signature.dataset.has_value()) << name;
  }
}

}  // namespace
}  // namespace hogwild
