// Nothing the caller gave is silently dropped or changed (issue 10): options that do nothing in
// their mode, batches larger than the data, a head larger than the dataset, IDX files whose
// header disagrees with the stream (gzip bombs), runs too large for memory, and the divergence
// message's spelling of NaN. Each case checks the code and that the message names the values.
#include <malloc.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// From the sanitizer runtime (GCC ships no <sanitizer/allocator_interface.h>).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "trainer/data/dataset.h"
#include "trainer/data/idx_reader.h"
#include "trainer/memory_estimate.h"
#include "trainer/model/model.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

namespace fs = std::filesystem;

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

TrainerOptions SmallOptions() {
  TrainerOptions o;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.epochs = 1;
  o.eval_every_epochs = 0;
  return o;
}

// ---- Batches and heads larger than the data -----------------------------------------------------

TEST(BatchVersusData, SyncGlobalBatchLargerThanTheTrainingSetIsRefused) {
  const Dataset data = testing::SyntheticDataset(100, 4, 3, 1);
  TrainerOptions o = SmallOptions();
  o.mode = Mode::kSync;
  o.num_workers = 2;
  o.batch_size = 101;
  ExpectError(ValidateOptionsForDataset(o, data.size()), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::batch_size=101", "100 examples", "global"});
  ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::batch_size=101", "100 examples"});
  o.batch_size = 100;  // the whole set in one step is fine
  EXPECT_TRUE(ValidateOptionsForDataset(o, data.size()).ok());
}

TEST(BatchVersusData, AsyncBatchLargerThanAWorkersShareIsRefused) {
  const Dataset data = testing::SyntheticDataset(100, 4, 3, 1);
  TrainerOptions o = SmallOptions();
  o.mode = Mode::kAsync;
  o.num_workers = 3;  // shards of 33, 33 and 34 examples
  o.batch_size = 35;
  ExpectError(
      ValidateOptionsForDataset(o, data.size()), absl::StatusCode::kInvalidArgument,
      {"TrainerOptions::batch_size=35", "34 examples", "100 examples / 3 workers", "per worker"});
  ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
              {"TrainerOptions::batch_size=35"});
  o.batch_size = 34;
  EXPECT_TRUE(ValidateOptionsForDataset(o, data.size()).ok());
}

// 100 examples in batches of 10 for 2 epochs: 20 global steps in sync mode, and in async mode
// with 2 workers (5 steps each per epoch); a warm-up of 21 steps would never end.
TEST(BatchVersusData, AWarmupLongerThanTheRunIsRefused) {
  const Dataset data = testing::SyntheticDataset(100, 4, 3, 1);
  for (Mode mode : {Mode::kSync, Mode::kAsync}) {
    TrainerOptions o = SmallOptions();
    o.mode = mode;
    o.num_workers = 2;
    o.batch_size = 10;
    o.epochs = 2;
    o.lr.warmup_steps = 21;
    ExpectError(ValidateOptionsForDataset(o, data.size()), absl::StatusCode::kInvalidArgument,
                {"LrSchedule::warmup_steps=21", "at most 20 global steps", "2 epochs of 10"});
    ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
                {"LrSchedule::warmup_steps=21"});
    o.lr.warmup_steps = 20;  // the last step runs at the base rate
    EXPECT_TRUE(ValidateOptionsForDataset(o, data.size()).ok()) << ModeName(mode);
  }
}

// The same run: an evaluation period of 21 steps would never come before the final evaluation
// (the period in epochs is refused against the epochs; the period in steps against the steps).
TEST(BatchVersusData, AnEvalPeriodInStepsLongerThanTheRunIsRefused) {
  const Dataset data = testing::SyntheticDataset(100, 4, 3, 1);
  for (Mode mode : {Mode::kSync, Mode::kAsync}) {
    TrainerOptions o = SmallOptions();
    o.mode = mode;
    o.num_workers = 2;
    o.batch_size = 10;
    o.epochs = 2;
    o.eval_every_steps = 21;
    ExpectError(ValidateOptionsForDataset(o, data.size()), absl::StatusCode::kInvalidArgument,
                {"TrainerOptions::eval_every_steps=21 is longer than the whole run (at most 20 "
                 "global steps: 2 epochs of 10), so the only evaluation would be the final one; "
                 "give at most 20, or 0"});
    ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kInvalidArgument,
                {"TrainerOptions::eval_every_steps=21"});
    o.eval_every_steps = 20;
    EXPECT_TRUE(ValidateOptionsForDataset(o, data.size()).ok()) << ModeName(mode);
  }
}

TEST(BatchVersusData, AHeadLargerThanTheDatasetIsRefusedNotCut) {
  Dataset data = testing::SyntheticDataset(50, 4, 3, 1);
  data.name = "synthetic";
  ExpectError(FirstExamples(data, 51).status(), absl::StatusCode::kInvalidArgument,
              {"asked for the first 51 examples of synthetic, which has 50"});
  // The range is the caller's to give, in its own terms (a flag, a keyword); predict's count
  // comes from a checkpoint and has no number to change.
  EXPECT_FALSE(absl::StrContains(FirstExamples(data, 51).status().message(), "use a number"));
  ExpectError(FirstExamples(data, 0).status(), absl::StatusCode::kInvalidArgument, {"0"});
  auto head = FirstExamples(data, 50);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->size(), 50);
  EXPECT_EQ(head->labels, data.labels);
}

// ---- Options that do nothing in this mode -------------------------------------------------------

TEST(OptionsInEffect, EveryModeOrDeviceSpecificOptionIsRefusedWhereItDoesNothing) {
  struct Case {
    void (*set)(TrainerOptions&);
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {[](TrainerOptions& o) {
         o.mode = Mode::kSync;
         o.sgd.staleness_aware_lr = true;
       },
       {"TrainerOptions::sgd.staleness_aware_lr=true", "sync mode"}},
      {[](TrainerOptions& o) { o.workers_per_device = 2; },
       {"TrainerOptions::workers_per_device=2", "cpu"}},
      {[](TrainerOptions& o) {
         o.devices = {DeviceSpec::Gpu(0)};
         o.num_workers = 4;
       },
       {"TrainerOptions::num_workers=4", "GPU"}},
      {[](TrainerOptions& o) { o.force_host_master = true; },
       {"TrainerOptions::force_host_master=true", "cpu"}},
      {[](TrainerOptions& o) {
         o.devices = {DeviceSpec::Gpu(0)};
         o.mode = Mode::kSync;
         o.force_host_master = true;
       },
       {"TrainerOptions::force_host_master=true", "sync mode"}},
      {[](TrainerOptions& o) {
         o.eval_every_steps = 50;
         o.eval_every_epochs = 1.0;
       },
       {"TrainerOptions::eval_every_steps=50", "eval_every_epochs=1"}},
      {[](TrainerOptions& o) { o.model = ModelSpec{.name = "logreg", .hidden = {64}}; },
       {"TrainerOptions::model.hidden=64", "'logreg'"}},
      {[](TrainerOptions& o) { o.lr.decay_rate = 0.5f; },
       {"LrSchedule::decay_rate=0.5", "constant schedule"}},
      {[](TrainerOptions& o) { o.lr.decay_steps = 30; },
       {"LrSchedule::decay_steps=30", "constant schedule"}},
      {[](TrainerOptions& o) { o.lr.kind = LrSchedule::Kind::kStep; },
       {"LrSchedule::decay_rate=1", "never decays"}},
      {[](TrainerOptions& o) {
         o.num_workers = 1;
         o.sgd.staleness_aware_lr = true;
       },
       {"TrainerOptions::sgd.staleness_aware_lr=true", "one worker"}},
      {[](TrainerOptions& o) {
         o.mode = Mode::kSsp;
         o.sgd.delay_adaptive_lr = true;
       },
       {"TrainerOptions::sgd.delay_adaptive_lr=true", "ssp mode", "async mode only"}},
      {[](TrainerOptions& o) {
         o.mode = Mode::kSync;
         o.sgd.max_delay = 4;
       },
       {"TrainerOptions::sgd.max_delay", "sync mode", "async mode only"}},
      {[](TrainerOptions& o) {
         o.num_workers = 1;
         o.sgd.max_delay = 4;
       },
       {"TrainerOptions::sgd.max_delay", "one worker"}},

      {[](TrainerOptions& o) {
         o.epochs = 2;
         o.eval_every_epochs = 3;
       },
       {"evaluation period of 3 epochs", "TrainerOptions::epochs=2"}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    TrainerOptions o = SmallOptions();
    cases[i].set(o);
    const absl::Status status = ValidateOptions(o);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    for (const std::string& part : cases[i].parts) {
      EXPECT_NE(status.message().find(part), std::string::npos) << status;
    }
    EXPECT_NE(status.message().find("has no effect"), std::string::npos) << status;
  }
}

TEST(OptionsInEffect, TwoLearningRateRulesOfAsyncAreRefusedTogether) {
  TrainerOptions o = SmallOptions();
  o.num_workers = 2;
  o.sgd.delay_adaptive_lr = true;
  o.sgd.staleness_aware_lr = true;
  EXPECT_EQ(ValidateOptions(o).message(),
            "TrainerOptions::sgd.delay_adaptive_lr and TrainerOptions::sgd.staleness_aware_lr are "
            "two rules for the same learning rate; choose one");
  o.sgd.staleness_aware_lr = false;
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.sgd.max_delay = -1;
  EXPECT_EQ(ValidateOptions(o).message(),
            "TrainerOptions::sgd.max_delay=-1 is out of range; it must be in [0, 1099511627776]");
}

TEST(OptionsInEffect, AJsonLogNameIsRefusedNotWrittenAsCsv) {
  TrainerOptions o = SmallOptions();
  for (const char* name : {"run.json", "run.JSON"}) {
    o.log_path = name;
    ExpectError(ValidateOptions(o), absl::StatusCode::kInvalidArgument, {name, ".jsonl"});
  }
  for (const char* name : {"run.jsonl", "run.JSONL", "run.csv", "run"}) {
    o.log_path = name;
    EXPECT_TRUE(ValidateOptions(o).ok()) << name;
  }
}

TEST(OptionsInEffect, TheSameOptionsAreAcceptedWhereTheyAreRead) {
  TrainerOptions async = SmallOptions();
  async.sgd.staleness_aware_lr = true;
  async.num_workers = 2;
  EXPECT_TRUE(ValidateOptions(async).ok());
  TrainerOptions gpu = SmallOptions();
  gpu.devices = {DeviceSpec::Gpu(0)};
  gpu.workers_per_device = 2;
  gpu.force_host_master = true;
  EXPECT_TRUE(ValidateOptions(gpu).ok()) << ValidateOptions(gpu);
  TrainerOptions decay = SmallOptions();
  decay.lr = {.kind = LrSchedule::Kind::kExponential, .decay_rate = 0.5f, .decay_steps = 30};
  EXPECT_TRUE(ValidateOptions(decay).ok());
  TrainerOptions cnn = SmallOptions();
  cnn.model = ModelSpec{.name = "cnn"};  // the default hidden sizes are not a choice
  EXPECT_TRUE(ValidateOptions(cnn).ok());
  TrainerOptions steps = SmallOptions();
  steps.eval_every_steps = 50;
  steps.eval_every_epochs = 0;
  EXPECT_TRUE(ValidateOptions(steps).ok());
}

// ---- IDX streams that disagree with their header ------------------------------------------------

std::string FreshDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::path(::testing::TempDir()) / "input_limits" / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string Deflated(const std::string& bytes) {
  std::string out(compressBound(static_cast<uLong>(bytes.size())) + 64, '\0');
  z_stream z{};
  // windowBits 15 + 16: a gzip member (header and trailer), as gzip(1) writes.
  EXPECT_EQ(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void PutBigEndian32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::string IdxHeader3(uint32_t n) {
  std::string out;
  PutBigEndian32(out, 0x803);
  for (uint32_t d : {n, 28u, 28u}) PutBigEndian32(out, d);
  return out;
}

// A second gzip member whose deflate data is garbage: a reader that goes on to it fails with
// "corrupt gzip". A reader that stopped where the header told it to never sees it, so the
// error it reports tells how far it read.
std::string CorruptMember() {
  std::string member = Deflated(std::string(1000, 'x'));
  for (size_t i = 10; i < member.size() - 8; ++i) member[i] = static_cast<char>(0xff);
  return member;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

TEST(IdxStream, AGzipBombOfZerosIsRefusedAtItsMagicNumber) {
  const std::string path = FreshDir() + "/bomb-images-idx3-ubyte.gz";
  // 16 MiB of zeros deflate to ~16 KiB, then the corrupt member.
  const std::string zeros = Deflated(std::string(16 << 20, '\0'));
  ASSERT_LT(zeros.size(), 100000u);
  WriteFile(path, zeros + CorruptMember());
  const absl::Status status = ReadIdxFile(path, 3).status();
  ExpectError(status, absl::StatusCode::kInvalidArgument, {path, "magic number 0x00000000"});
  // Reading the whole stream first would have reached the corrupt member.
  EXPECT_EQ(status.message().find("gzip"), std::string::npos) << status;
}

TEST(IdxStream, AStreamLongerThanItsHeaderIsRefusedAfterThePromisedBytes) {
  const std::string path = FreshDir() + "/long-images-idx3-ubyte.gz";
  // A valid header for 2 images, then 8 MiB of zeros, then the corrupt member.
  const std::string body = IdxHeader3(2) + std::string(8 << 20, '\0');
  WriteFile(path, Deflated(body) + CorruptMember());
  const absl::Status status = ReadIdxFile(path, 3).status();
  ExpectError(status, absl::StatusCode::kInvalidArgument,
              {path, "longer than its header", std::to_string(2 * 784)});
  EXPECT_EQ(status.message().find("gzip"), std::string::npos) << status;
}

TEST(IdxStream, CountsLargerThanThePayloadAreRefusedAsTruncated) {
  const std::string path = FreshDir() + "/short-images-idx3-ubyte.gz";
  // The header promises 1000 images (784,000 bytes); the stream holds 3.
  WriteFile(path, Deflated(IdxHeader3(1000) + std::string(3 * 784, '\x07')));
  ExpectError(ReadIdxFile(path, 3).status(), absl::StatusCode::kInvalidArgument,
              {path, "truncated", "784000", std::to_string(3 * 784)});
}

TEST(IdxStream, AWellFormedStreamStillReadsToItsEndAndIsChecked) {
  const std::string dir = FreshDir();
  const std::string body = IdxHeader3(2) + std::string(2 * 784, '\x05');
  WriteFile(dir + "/ok.gz", Deflated(body));
  auto array = ReadIdxFile(dir + "/ok.gz", 3);
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->dims, (std::vector<int64_t>{2, 28, 28}));
  EXPECT_EQ(array->data, std::vector<uint8_t>(2 * 784, 5));
  // The gzip trailer is still verified: a wrong CRC is refused.
  std::string bad_crc = Deflated(body);
  bad_crc[bad_crc.size() - 8] ^= 0x55;
  WriteFile(dir + "/crc.gz", bad_crc);
  ExpectError(ReadIdxFile(dir + "/crc.gz", 3).status(), absl::StatusCode::kInvalidArgument,
              {"gzip"});
}

// ---- Memory ----------------------------------------------------------------------------------

// Bytes the heap holds now (the sanitizers' allocator when there is one, else glibc's).
int64_t LiveHeapBytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#endif
}

struct Measured {
  int64_t peak_bytes = 0;
  int64_t estimate_bytes = 0;
};

// Trains with a step hook that samples the live heap before every step of every worker, and
// returns the largest sample above the heap before Train() (the datasets are already there),
// next to the estimate.
Measured MeasureRun(const TrainerOptions& base, const Dataset& train, const Dataset& test) {
  std::atomic<int64_t> peak{0};
  TrainerOptions o = base;
  const int64_t before = LiveHeapBytes();
  o.step_hook = [&](int, int64_t) {
    const int64_t live = LiveHeapBytes() - before;
    int64_t seen = peak.load();
    while (live > seen && !peak.compare_exchange_weak(seen, live)) {
    }
    return absl::OkStatus();
  };
  auto result = Train(o, train, test);
  EXPECT_TRUE(result.ok()) << result.status();
  ModelSpec spec = o.model;
  spec.input_shape = train.example_shape;
  spec.num_classes = train.num_classes;
  auto model = Model::Create(spec);
  EXPECT_TRUE(model.ok());
  return {peak.load(),
          EstimateTrainingMemory(o, **model, train.size(), test.size() > 0).total_bytes()};
}

TEST(MemoryEstimate, IsAnUpperBoundWithinAFactorOfTwoOfARealRun) {
  // Parameters dominate: 784 -> 1024 -> 10 (814,090 parameters, 3.3 MB a copy), async with
  // momentum, 2 workers (store, 2 snapshots, 2 velocities, 2 gradients).
  const Dataset images = testing::SyntheticDataset(512, 784, 10, 3);
  TrainerOptions params = SmallOptions();
  params.model = ModelSpec{.name = "mlp", .hidden = {1024}};
  params.num_workers = 2;
  params.batch_size = 16;
  params.epochs = 2;
  params.sgd.momentum = 0.9f;
  params.lr.base_lr = 0.001f;
  // Activations dominate: a wide layer and a large global batch, sync, 2 workers.
  TrainerOptions activations = SmallOptions();
  activations.mode = Mode::kSync;
  activations.model = ModelSpec{.name = "mlp", .hidden = {2048}};
  activations.num_workers = 2;
  activations.batch_size = 512;
  activations.epochs = 4;
  activations.prefetch = 1;
  activations.lr.base_lr = 0.001f;
  for (const TrainerOptions& o : {params, activations}) {
    const Measured m = MeasureRun(o, images, Dataset());
    SCOPED_TRACE(
        absl::StrCat("measured peak ", m.peak_bytes, " bytes, estimate ", m.estimate_bytes));
    std::printf("measured peak %lld bytes, estimate %lld bytes (%.2fx)\n",
                static_cast<long long>(m.peak_bytes), static_cast<long long>(m.estimate_bytes),
                static_cast<double>(m.estimate_bytes) / static_cast<double>(m.peak_bytes));
    ASSERT_GT(m.peak_bytes, 1 << 20);  // the measurement saw the run's buffers
    EXPECT_GE(m.estimate_bytes, m.peak_bytes);
    EXPECT_LE(m.estimate_bytes, 2 * m.peak_bytes);
  }
}

TEST(MemoryEstimate, ARunThatDoesNotFitIsRefusedBeforeAllocatingNamingBothNumbers) {
  MemoryEstimate e;
  e.parameters_bytes = int64_t{3} << 30;
  e.gradients_bytes = int64_t{1} << 30;
  ExpectError(CheckMemoryFits(e, int64_t{2} << 30), absl::StatusCode::kResourceExhausted,
              {"4.0 GiB", "parameters 3.0 GiB", "gradients 1.0 GiB", "2.0 GiB is available"});
  EXPECT_TRUE(CheckMemoryFits(e, int64_t{4} << 30).ok());
  EXPECT_TRUE(CheckMemoryFits(e, std::nullopt).ok());

  // Eight 65536-wide layers: 30 G parameters, over 100 GB a copy. Train() must refuse it from
  // the estimate; allocating it would take the machine down (or abort the test).
  const Dataset data = testing::SyntheticDataset(8, 784, 10, 1);
  TrainerOptions o = SmallOptions();
  o.model = ModelSpec{.name = "mlp", .hidden = std::vector<int64_t>(8, 65536)};
  o.batch_size = 8;
  const std::optional<int64_t> available = AvailableMemoryBytes();
  ASSERT_TRUE(available.has_value());
  ASSERT_GT(*available, 0);
  const ModelSpec spec{.name = "mlp", .hidden = o.model.hidden, .input_shape = {784}};
  const int64_t estimate =
      EstimateTrainingMemory(o, *Model::Create(spec).value(), data.size(), false).total_bytes();
  if (estimate <= *available) GTEST_SKIP() << "this machine has " << *available << " bytes free";
  ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kResourceExhausted,
              {"needs about", "GiB", "is available"});
}

// An allocation that fails in a worker (here thrown by the step hook at step 2 of worker 1) is
// kResourceExhausted and stops every worker, in both modes; never std::terminate.
TEST(MemoryEstimate, AFailedAllocationInAWorkerIsResourceExhausted) {
  const Dataset data = testing::SyntheticDataset(64, 4, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    TrainerOptions o = SmallOptions();
    o.mode = mode;
    o.num_workers = 2;
    o.batch_size = 4;
    o.step_hook = [](int worker, int64_t step) -> absl::Status {
      if (worker == 1 && step == 2) throw std::bad_alloc();
      return absl::OkStatus();
    };
    ExpectError(Train(o, data, Dataset()).status(), absl::StatusCode::kResourceExhausted,
                {"out of memory", "worker 1"});
  }
}

TEST(MemoryEstimate, ScalesWithWorkersMomentumAndCheckpointsAndSaturates) {
  const auto model = Model::Create(ModelSpec{.name = "mlp", .hidden = {100}}).value();
  const int64_t p = model->num_params();
  TrainerOptions o = SmallOptions();
  o.model = ModelSpec{.name = "mlp", .hidden = {100}};
  const MemoryEstimate one = EstimateTrainingMemory(o, *model, 1000);
  o.num_workers = 4;
  const MemoryEstimate four = EstimateTrainingMemory(o, *model, 1000);
  EXPECT_EQ(four.gradients_bytes, 4 * one.gradients_bytes);
  EXPECT_EQ(four.snapshots_bytes, 4 * 4 * p);  // a snapshot per worker
  // Plain SGD has no optimizer state: the summary must not show one.
  EXPECT_EQ(four.optimizer_bytes, 0);
  EXPECT_TRUE(absl::StrContains(four.ToString(), "parameter snapshots")) << four.ToString();
  EXPECT_FALSE(absl::StrContains(four.ToString(), "optimizer state")) << four.ToString();
  o.sgd.momentum = 0.9f;
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).optimizer_bytes, 4 * 4 * p);  // per worker
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).snapshots_bytes, 4 * 4 * p);
  o.mode = Mode::kSync;
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).optimizer_bytes, 4 * p);  // one state
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).snapshots_bytes, 0);
  // The workers' gradients and the average.
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).gradients_bytes, 5 * 4 * p);
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).checkpoint_bytes, 0);
  o.checkpoint_dir = "/tmp/x";
  EXPECT_EQ(EstimateTrainingMemory(o, *model, 1000).checkpoint_bytes, 2 * 2 * 4 * p);
  // 4096 workers of a batch of 2^24 on 1024 layers of 65536: past 2^63 bytes, saturated.
  const auto huge =
      Model::Create(ModelSpec{.name = "mlp", .hidden = std::vector<int64_t>(1024, 65536)}).value();
  o.num_workers = 4096;
  o.batch_size = int64_t{1} << 24;
  EXPECT_EQ(EstimateTrainingMemory(o, *huge, 60000).total_bytes(),
            std::numeric_limits<int64_t>::max());
}

// ---- Messages -----------------------------------------------------------------------------------

TEST(Divergence, NonFiniteValuesAreSpelledNanOrInfNeverMinusNan) {
  const Dataset data = testing::SyntheticDataset(64, 8, 3, 2);
  int saw_nan = 0;
  for (float lr : {1e30f, 1e36f, 3e38f}) {
    TrainerOptions o = SmallOptions();
    o.batch_size = 8;
    o.epochs = 3;
    o.lr.base_lr = lr;
    const absl::Status status = Train(o, data, Dataset()).status();
    SCOPED_TRACE(status.ToString());
    ASSERT_NE(status.message().find("diverged"), std::string::npos);
    EXPECT_EQ(status.message().find("-nan"), std::string::npos);
    if (status.message().find(" is nan ") != std::string::npos) ++saw_nan;
  }
  EXPECT_GT(saw_nan, 0) << "no case reached a NaN: the check above tested nothing";
}

}  // namespace
}  // namespace hogwild
