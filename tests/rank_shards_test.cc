// The data plan of a job of several processes (PipelineOptions::first_worker, total_workers;
// trainer/cluster.h): rank r's pipeline feeds exactly the plan's workers [r·W, (r+1)·W) of
// R·W, so the ranks read distinct shards that together cover every epoch once (async), and
// split every global batch as R·W workers of one process would (sync).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "trainer/data/input_pipeline.h"

namespace hogwild {
namespace {

// Every batch of `worker` of `pipeline`, as its rows.
std::vector<std::vector<int64_t>> AllBatches(InputPipeline& pipeline, int worker) {
  std::vector<std::vector<int64_t>> batches;
  while (true) {
    absl::StatusOr<std::optional<Batch>> batch = pipeline.Next(worker);
    EXPECT_TRUE(batch.ok()) << batch.status();
    if (!batch.ok() || !batch->has_value()) break;
    batches.push_back((*batch)->indices);
  }
  return batches;
}

TEST(RankShards, EachRankFeedsItsOwnWorkersOfTheJobsPlan) {
  const Dataset data = testing::SyntheticDataset(103, 4, 3, /*seed=*/5);
  for (const Mode mode : {Mode::kAsync, Mode::kSync}) {
    for (const int ranks : {2, 3}) {
      for (const int workers : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << ModeName(mode) << " " << ranks << "x" << workers);
        const PipelineOptions one{.mode = mode,
                                  .num_workers = ranks * workers,
                                  .batch_size = mode == Mode::kSync ? 10 : 4,
                                  .epochs = 2,
                                  .seed = 9};
        InputPipeline whole(&data, one);
        std::vector<int64_t> seen(data.size(), 0);
        for (int r = 0; r < ranks; ++r) {
          PipelineOptions part = one;
          part.num_workers = workers;
          part.first_worker = r * workers;
          part.total_workers = ranks * workers;
          InputPipeline rank(&data, part);
          for (int w = 0; w < workers; ++w) {
            const auto mine = AllBatches(rank, w);
            EXPECT_EQ(mine, AllBatches(whole, r * workers + w)) << "rank " << r << " worker " << w;
            for (const auto& rows : mine) {
              for (const int64_t row : rows) ++seen[row];
            }
          }
        }
        // Two epochs: every example twice, by exactly one rank's worker each time.
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int64_t n) { return n == 2; }));
      }
    }
  }
}

}  // namespace
}  // namespace hogwild
