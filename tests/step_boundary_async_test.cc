// StepBoundary in an async job of several processes (Options::test_agreement): rounds are
// polled, never awaited; the job's decision, not the rank's own, makes a rank take part in a
// checkpoint or stop; every rank takes the snapshot (the collective cut), only the writer
// writes; a rank out of data keeps joining rounds until none is busy.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/step_boundary.h"

namespace hogwild {
namespace {

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/step_boundary_async_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A tiny valid checkpoint of 2 ranks x 1 worker at `global_step`.
Checkpoint Snapshot(int64_t global_step, int64_t next_step) {
  Checkpoint c;
  c.signature = CheckpointSignature{.model_name = "logreg",
                                    .input_shape = {2},
                                    .num_classes = 2,
                                    .layers = {"dense 2->2"},
                                    .num_params = 6,
                                    .mode = Mode::kAsync,
                                    .num_workers = 1,
                                    .batch_size = 4,
                                    .seed = 1,
                                    .train_examples = 8,
                                    .num_ranks = 2};
  c.global_step = global_step;
  c.next_step = {next_step, next_step};
  c.params.assign(6, 0.5f);
  return c;
}

// The job as this rank sees it: `decided` are the ORs of the coming rounds, in order (nullopt:
// that poll finds the round not complete yet).
struct Job {
  std::atomic<bool> stop{false};
  std::deque<std::optional<uint32_t>> decided;
  std::vector<uint32_t> asked;  // what this rank started each round with
  int snapshots = 0;
};

StepBoundary MakeBoundary(Job& job, const std::string& dir, bool writes) {
  StepBoundary::Options options{.mode = Mode::kAsync,
                                .num_workers = 1,
                                .checkpoint_dir = dir,
                                .stop_requested = &job.stop,
                                .start_next_step = {0}};
  options.poll_period = std::chrono::microseconds(0);  // every boundary polls
  options.start_agreement = [&job](uint32_t mine) {
    job.asked.push_back(mine);
    return absl::OkStatus();
  };
  options.test_agreement = [&job]() -> absl::StatusOr<std::optional<uint32_t>> {
    if (job.decided.empty()) return std::nullopt;
    const std::optional<uint32_t> next = job.decided.front();
    job.decided.pop_front();
    return next;
  };
  options.finish_agreement = [&job]() -> absl::StatusOr<uint32_t> {
    // Waiting: skip the polls that would not have found it complete.
    while (!job.decided.empty() && !job.decided.front().has_value()) job.decided.pop_front();
    if (job.decided.empty()) return 0u;
    const uint32_t next = *job.decided.front();
    job.decided.pop_front();
    return next;
  };
  options.writes_checkpoints = writes;
  return StepBoundary(
      options,
      [&job](const std::vector<int64_t>& next_step) -> absl::StatusOr<Checkpoint> {
        ++job.snapshots;  // every rank takes part in the cut
        return Snapshot(/*global_step=*/10 * job.snapshots, next_step[0]);
      },
      [] {});
}

constexpr uint32_t kBusy = StepBoundary::kBusyBit;

TEST(StepBoundaryAsyncAcrossRanks, TrainsOnUntilTheJobDecidesThenEveryRankTakesTheCut) {
  for (const bool writes : {true, false}) {
    SCOPED_TRACE(writes ? "rank 0 (writes)" : "rank 1 (does not write)");
    Job job;
    const std::string dir = FreshDir(writes ? "writer" : "other");
    StepBoundary boundary = MakeBoundary(job, dir, writes);
    ASSERT_TRUE(boundary.StartAgreement().ok());
    ASSERT_EQ(job.asked, std::vector<uint32_t>{kBusy});
    // Not complete, then complete with nothing to do, then a stop another rank asked for.
    job.decided = {std::nullopt, kBusy, std::nullopt, kBusy | StepBoundary::kStopBit};
    absl::StatusOr<bool> stop = boundary.AtBoundary(0, 1, 1);
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_FALSE(*stop);
    EXPECT_EQ(job.asked.size(), 1u) << "no new round while one is pending";
    job.stop = true;  // this rank's own request goes into the next round, not straight to a stop
    stop = boundary.AtBoundary(0, 2, 2);
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_FALSE(*stop);
    ASSERT_EQ(job.asked.size(), 2u);
    EXPECT_EQ(job.asked[1], kBusy | StepBoundary::kStopBit);
    EXPECT_EQ(job.snapshots, 0);
    stop = boundary.AtBoundary(0, 3, 3);
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_FALSE(*stop);
    stop = boundary.AtBoundary(0, 4, 4);
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_TRUE(*stop);
    EXPECT_TRUE(boundary.stopped());
    EXPECT_EQ(job.snapshots, 1);
    EXPECT_EQ(std::filesystem::exists(CheckpointPath(dir)), writes);
    EXPECT_EQ(job.asked.size(), 2u) << "no round is started after the stop";
    EXPECT_TRUE(boundary.FinishAgreement().ok());  // nothing pending: returns at once
    EXPECT_TRUE(boundary.WriteFinal().ok());       // the stop wrote it already
    EXPECT_EQ(job.snapshots, 1);
  }
}

TEST(StepBoundaryAsyncAcrossRanks, ARankOutOfDataJoinsTheOthersCheckpointsUntilNoneIsBusy) {
  Job job;
  const std::string dir = FreshDir("finished");
  StepBoundary boundary = MakeBoundary(job, dir, /*writes=*/true);
  ASSERT_TRUE(boundary.StartAgreement().ok());
  boundary.Finished(0, 7);
  // Another rank still trains and asks for a checkpoint; then it trains on; then it finishes.
  job.decided = {kBusy | StepBoundary::kDueBit, kBusy, 0u};
  ASSERT_TRUE(boundary.FinishAgreement().ok());
  EXPECT_TRUE(job.decided.empty()) << "joined every round until none was busy";
  EXPECT_EQ(job.snapshots, 1) << "took part in the checkpoint another rank asked for";
  EXPECT_TRUE(std::filesystem::exists(CheckpointPath(dir)));
  // Its own rounds no longer say busy (nor due: it has no steps of its own).
  EXPECT_EQ(job.asked, (std::vector<uint32_t>{kBusy, 0u, 0u}));
  EXPECT_FALSE(boundary.stopped());
  ASSERT_TRUE(boundary.WriteFinal().ok());  // the final cut, on every rank
  EXPECT_EQ(job.snapshots, 2);
}

}  // namespace
}  // namespace hogwild
