// Which GPUs a rank of a multi-process job takes (trainer/rank_gpus.h), and which multi-process
// runs with GPU workers are refused (CheckClusterOptions). Pure functions: no GPU, no MPI.
#include "trainer/rank_gpus.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/device.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

RankHost Host(int local_rank, int local_ranks, int visible, bool restricted = false) {
  return RankHost{.local_rank = local_rank,
                  .local_ranks = local_ranks,
                  .visible_gpus = visible,
                  .visible_gpus_restricted = restricted};
}

TEST(RankGpus, OneRankPerHostUsesTheListAsGiven) {
  const absl::StatusOr<std::vector<int>> gpus = RankGpus({1, 0}, Host(0, 1, 2));
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_THAT(*gpus, ElementsAre(1, 0));
}

TEST(RankGpus, EachLocalRankTakesItsOwnBlock) {
  // --devices gpu:0 with 2 ranks on a 2-GPU host: rank l on GPU l.
  EXPECT_THAT(*RankGpus({0}, Host(0, 2, 2)), ElementsAre(0));
  EXPECT_THAT(*RankGpus({0}, Host(1, 2, 2)), ElementsAre(1));
  // --devices gpu:1,0 with 2 ranks on 4 GPUs: blocks {0,1} and {2,3}, the listed order kept.
  EXPECT_THAT(*RankGpus({1, 0}, Host(1, 2, 4)), ElementsAre(3, 2));
  // A block spans up to the largest index listed: gpu:1 alone is a block of 2.
  EXPECT_THAT(*RankGpus({1}, Host(1, 2, 4)), ElementsAre(3));
}

// Independent of the formula: whatever the list and the host, the ranks of one host never
// share a GPU and every GPU exists.
TEST(RankGpus, RanksOfOneHostNeverShareAGpu) {
  const std::vector<std::vector<int>> lists = {{0}, {1}, {0, 1}, {2, 0}, {3, 1, 2}};
  for (const std::vector<int>& listed : lists) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      for (int visible = 1; visible <= 16; ++visible) {
        std::set<int> taken;
        int placed = 0;
        for (int l = 0; l < ranks; ++l) {
          const absl::StatusOr<std::vector<int>> gpus = RankGpus(listed, Host(l, ranks, visible));
          if (!gpus.ok()) continue;
          ASSERT_EQ(gpus->size(), listed.size());
          for (const int g : *gpus) {
            EXPECT_GE(g, 0);
            EXPECT_LT(g, visible) << "ranks " << ranks << " visible " << visible;
            EXPECT_TRUE(taken.insert(g).second)
                << "GPU " << g << " taken twice, ranks " << ranks << " visible " << visible;
          }
          ++placed;
        }
        // Either every rank is placed or none is (the rule depends on the host, not the rank).
        EXPECT_TRUE(placed == 0 || placed == ranks);
      }
    }
  }
}

TEST(RankGpus, ARestrictedVisibleSetIsUsedAsGiven) {
  // A launcher gave each of 2 ranks one GPU (CUDA_VISIBLE_DEVICES): gpu:0 is that GPU.
  EXPECT_THAT(*RankGpus({0}, Host(0, 2, 1, /*restricted=*/true)), ElementsAre(0));
  EXPECT_THAT(*RankGpus({0}, Host(1, 2, 1, /*restricted=*/true)), ElementsAre(0));
}

TEST(RankGpus, RanksThatWouldShareAGpuAreRefused) {
  const absl::StatusOr<std::vector<int>> gpus = RankGpus({0}, Host(1, 2, 1));
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(gpus.status().message(), HasSubstr("2 ranks run on this host"));
  EXPECT_THAT(gpus.status().message(), HasSubstr("needs 2 GPUs"));
  EXPECT_THAT(gpus.status().message(), HasSubstr("this host has 1"));
  EXPECT_THAT(gpus.status().message(), HasSubstr("CUDA_VISIBLE_DEVICES"));
}

TEST(RankGpus, AnIndexBeyondTheVisibleGpusIsRefused) {
  const absl::StatusOr<std::vector<int>> gpus = RankGpus({1}, Host(0, 1, 1));
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(gpus.status().message(), HasSubstr("names GPU 1, but this rank sees 1"));
}

TEST(RankGpus, BadListsAreInvalidArguments) {
  for (const std::vector<int>& listed : std::vector<std::vector<int>>{{}, {-1}, {0, 0}}) {
    EXPECT_EQ(RankGpus(listed, Host(0, 1, 4)).status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(RankGpus({0}, Host(2, 2, 4)).status().code(), absl::StatusCode::kInvalidArgument);
}

TrainerOptions GpuOptions(Mode mode) {
  TrainerOptions options;
  options.mode = mode;
  options.devices = {DeviceSpec::Gpu(0)};
  options.batch_size = 16;
  return options;
}

TEST(ClusterGpuOptions, SyncGpuWorkersRunAcrossProcesses) {
  EXPECT_TRUE(CheckClusterOptions(GpuOptions(Mode::kSync), 2).ok());
}

TEST(ClusterGpuOptions, AsyncGpuWorkersAcrossProcessesAreRefused) {
  const absl::Status s = CheckClusterOptions(GpuOptions(Mode::kAsync), 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("devices=gpu:0"));
  EXPECT_THAT(s.message(),
              HasSubstr("async GPU workers do not run across processes yet (2 ranks)"));
  EXPECT_THAT(s.message(), HasSubstr("use sync mode"));
  // One process: no cluster check at all.
  EXPECT_TRUE(CheckClusterOptions(GpuOptions(Mode::kAsync), 1).ok());
}

TEST(ClusterGpuOptions, OtherModesStayRefusedOnGpus) {
  const absl::Status s = CheckClusterOptions(GpuOptions(Mode::kSsp), 2);
  EXPECT_EQ(s,
            absl::InvalidArgumentError(
                "TrainerOptions::mode: ssp is not available for dense networks across "
                "processes: it has no policy across MPI ranks yet (mpi/mpi_cluster.h); use async "
                "or sync, or run ssp on threads or in the simulator"));
}

}  // namespace
}  // namespace hogwild
