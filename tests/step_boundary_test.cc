// StepBoundary in a sync job of several processes (Options::start_agreement): the job's decision,
// not the rank's own, makes a rank stop or checkpoint, one boundary after the request, and only
// the writing rank writes. And the lockstep cut of backup and local_sgd.
#include "trainer/checkpoint/step_boundary.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "trainer/checkpoint/checkpoint.h"

namespace hogwild {
namespace {

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/step_boundary_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A tiny valid checkpoint of 2 ranks x 1 worker at `global_step`.
Checkpoint Snapshot(int64_t global_step, const std::vector<int64_t>& next_step) {
  Checkpoint c;
  c.signature = CheckpointSignature{.model_name = "logreg",
                                    .input_shape = {2},
                                    .num_classes = 2,
                                    .layers = {"dense 2->2"},
                                    .num_params = 6,
                                    .mode = Mode::kSync,
                                    .num_workers = 1,
                                    .batch_size = 4,
                                    .seed = 1,
                                    .train_examples = 8,
                                    .num_ranks = 2};
  c.global_step = global_step;
  c.next_step = {next_step[0], next_step[0]};
  c.params.assign(6, 0.5f);
  return c;
}

struct Rank {
  std::atomic<bool> stop{false};
  std::vector<uint32_t> asked;    // what this rank started a round with, per boundary
  std::optional<uint32_t> round;  // the pending round's OR over the job
  int snapshots = 0;
};

// The other ranks' requests are `job_adds`: a round's OR is theirs with this rank's.
StepBoundary MakeBoundary(Rank& rank, const std::string& dir, bool writes, uint32_t job_adds,
                          absl::Status start_error = absl::OkStatus()) {
  StepBoundary::Options options{.mode = Mode::kSync,
                                .num_workers = 1,
                                .checkpoint_dir = dir,
                                .stop_requested = &rank.stop,
                                .start_next_step = {0}};
  options.start_agreement = [&rank, job_adds, start_error](uint32_t mine) {
    rank.asked.push_back(mine);
    rank.round = mine | job_adds;
    return start_error;
  };
  options.finish_agreement = [&rank]() -> absl::StatusOr<uint32_t> {
    const uint32_t all = rank.round.value_or(0);
    rank.round.reset();
    return all;
  };
  options.writes_checkpoints = writes;
  return StepBoundary(
      options,
      [&rank](const std::vector<int64_t>& next_step) -> absl::StatusOr<Checkpoint> {
        ++rank.snapshots;
        return Snapshot(next_step[0], next_step);
      },
      [] {});
}

TEST(StepBoundaryAcrossRanks, StopsOneStepAfterAnotherRankAsksAndOnlyTheWriterWrites) {
  for (const bool writes : {true, false}) {
    SCOPED_TRACE(writes ? "rank 0 (writes)" : "rank 1 (does not write)");
    Rank rank;
    const std::string dir = FreshDir(writes ? "writer" : "other");
    StepBoundary boundary = MakeBoundary(rank, dir, writes, StepBoundary::kStopBit);
    // Boundary 5: no round decided yet; this rank asks for nothing, another rank for a stop.
    absl::StatusOr<bool> stop = boundary.AtBoundary(0, /*next_step=*/5, /*global_step=*/5);
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_FALSE(*stop);
    ASSERT_EQ(rank.asked.size(), 1u);
    EXPECT_EQ(rank.asked[0], 0u);
    // Boundary 6: the job's decision is a stop, with the checkpoint of step 6.
    stop = boundary.AtBoundary(0, 6, 6);
    ASSERT_TRUE(stop.ok()) << stop.status();
    EXPECT_TRUE(*stop);
    EXPECT_TRUE(boundary.stopped());
    EXPECT_EQ(rank.asked.size(), 1u) << "no round is started after the stop";
    EXPECT_EQ(rank.snapshots, writes ? 1 : 0);
    EXPECT_EQ(std::filesystem::exists(CheckpointPath(dir)), writes);
    EXPECT_EQ(boundary.last_checkpoint_step(), 6);
    EXPECT_TRUE(boundary.WriteFinal().ok());  // the stop wrote it already
    EXPECT_EQ(rank.snapshots, writes ? 1 : 0);
  }
}

TEST(StepBoundaryAcrossRanks, ARanksOwnRequestsGoToTheJob) {
  Rank rank;
  rank.stop = true;
  StepBoundary boundary = MakeBoundary(rank, FreshDir("own"), true, 0);
  absl::StatusOr<bool> stop = boundary.AtBoundary(0, 3, 3);
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_FALSE(*stop);
  ASSERT_EQ(rank.asked.size(), 1u);
  EXPECT_EQ(rank.asked[0], StepBoundary::kStopBit);
  stop = boundary.AtBoundary(0, 4, 4);
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_TRUE(*stop);
}

TEST(StepBoundaryAcrossRanks, ACheckpointDueElsewhereIsWrittenWithoutStopping) {
  Rank rank;
  const std::string dir = FreshDir("due");
  StepBoundary boundary = MakeBoundary(rank, dir, true, StepBoundary::kDueBit);
  ASSERT_TRUE(boundary.AtBoundary(0, 6, 6).ok());
  EXPECT_EQ(rank.snapshots, 0);
  absl::StatusOr<bool> stop = boundary.AtBoundary(0, 7, 7);
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_FALSE(*stop);
  EXPECT_EQ(rank.snapshots, 1);
  absl::StatusOr<std::optional<Checkpoint>> written = ReadLatestCheckpoint(dir);
  ASSERT_TRUE(written.ok() && written->has_value()) << written.status();
  EXPECT_EQ((*written)->global_step, 7);
  EXPECT_EQ((*written)->signature.num_ranks, 2);
  EXPECT_EQ(rank.asked.size(), 2u) << "training goes on: the next round is started";
}

TEST(StepBoundaryAcrossRanks, AFailedAgreementFailsTheStep) {
  Rank rank;
  StepBoundary boundary =
      MakeBoundary(rank, FreshDir("error"), true, 0, absl::InternalError("MPI_Iallreduce failed"));
  absl::StatusOr<bool> stop = boundary.AtBoundary(0, 1, 1);
  EXPECT_EQ(stop.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(rank.snapshots, 0);
}

// The lockstep cut (backup, local_sgd): a checkpoint found due at worker 0's boundary before
// step 1 is taken before step 3, the first multiple of the period 3 past every worker's
// announced step, where the last worker to arrive snapshots once, with every worker at 3; no
// worker waits at a boundary before that.
TEST(StepBoundaryLockstep, TheCutWaitsForEveryWorkerAtTheNextCutPoint) {
  std::atomic<bool> stop{false};
  StepBoundary::Options options{.mode = Mode::kLocalSgd,
                                .num_workers = 2,
                                .checkpoint_dir = FreshDir("lockstep"),
                                .every_steps = 1,
                                .stop_requested = &stop,
                                .start_next_step = {0, 0},
                                .cut_period = 3};
  std::vector<std::vector<int64_t>> snapshots;
  StepBoundary boundary(
      options,
      [&](const std::vector<int64_t>& next_step) -> absl::StatusOr<Checkpoint> {
        snapshots.push_back(next_step);
        Checkpoint c = Snapshot(next_step[0], next_step);
        c.signature.num_ranks = 1;
        c.signature.num_workers = 2;
        c.signature.mode = Mode::kLocalSgd;
        c.signature.average_every = 3;
        c.next_step = next_step;
        return c;
      },
      [] {});
  for (int64_t step : {0, 1, 2}) {
    auto stop_now = boundary.AtBoundary(0, step, step);  // due from step 1 on
    ASSERT_TRUE(stop_now.ok()) << stop_now.status();
    EXPECT_FALSE(*stop_now);
  }
  absl::StatusOr<bool> worker0 = false;
  std::thread waiting([&] { worker0 = boundary.AtBoundary(0, 3, 3); });
  for (int64_t step : {0, 1, 2}) {
    auto stop_now = boundary.AtBoundary(1, step, step);
    ASSERT_TRUE(stop_now.ok()) << stop_now.status();
    EXPECT_FALSE(*stop_now);
  }
  EXPECT_TRUE(snapshots.empty());  // worker 0 waits at 3 for worker 1
  stop = true;                     // taken at the same cut
  auto worker1 = boundary.AtBoundary(1, 3, 3);
  waiting.join();
  ASSERT_TRUE(worker1.ok()) << worker1.status();
  ASSERT_TRUE(worker0.ok()) << worker0.status();
  EXPECT_TRUE(*worker1);
  EXPECT_TRUE(*worker0);
  EXPECT_EQ(snapshots, (std::vector<std::vector<int64_t>>{{3, 3}}));
  EXPECT_EQ(boundary.last_checkpoint_step(), 3);
}

}  // namespace
}  // namespace hogwild
