// The input pipeline (trainer/input_pipeline.h): distinct shards and every example exactly once
// per epoch (async), shards that partition every global batch (sync), deterministic order per
// seed (invariant 7 of DESIGN.md), and Cancel() unblocking a waiting Next().
#include "trainer/data/input_pipeline.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/thread_state.h"
#include "tests/watchdog.h"

namespace hogwild {
namespace {

constexpr int64_t kDim = 3;

// Bounds a hang only (sanitizer builds included); a healthy wait takes microseconds.
constexpr double kHangS = 60.0;

// Row i has features {i, -i, 0.5 i} and label i % 7, so a batch's contents identify its rows.
Dataset IndexedDataset(int64_t n) {
  Dataset d;
  d.name = "indexed";
  d.example_shape = {kDim};
  d.num_classes = 7;
  for (int64_t i = 0; i < n; ++i) {
    d.features.insert(d.features.end(), {float(i), -float(i), 0.5f * float(i)});
    d.labels.push_back(static_cast<int32_t>(i % 7));
  }
  return d;
}

// Every batch each worker receives, in order. Each worker drains its queue on its own thread,
// as the trainer's workers do.
std::vector<std::vector<Batch>> DrainAll(const Dataset& data, const PipelineOptions& options) {
  InputPipeline pipeline(&data, options);
  std::vector<std::vector<Batch>> batches(options.num_workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < options.num_workers; ++w) {
    threads.emplace_back([&, w] {
      while (true) {
        auto next = pipeline.Next(w);
        EXPECT_TRUE(next.ok()) << next.status();
        if (!next.ok() || !next->has_value()) return;
        batches[w].push_back(std::move(**next));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return batches;
}

// The batch's features and labels are the rows its indices name.
void ExpectContentsMatchIndices(const Batch& b, const Dataset& data) {
  ASSERT_EQ(static_cast<int64_t>(b.features.size()), b.size() * kDim);
  ASSERT_EQ(b.size(), static_cast<int64_t>(b.labels.size()));
  for (int64_t i = 0; i < b.size(); ++i) {
    const int64_t row = b.indices[i];
    ASSERT_GE(row, 0);
    ASSERT_LT(row, data.size());
    for (int64_t j = 0; j < kDim; ++j) {
      EXPECT_EQ(b.features[i * kDim + j], data.features[row * kDim + j]);
    }
    EXPECT_EQ(b.labels[i], data.labels[row]);
  }
}

std::vector<int64_t> Rows(const std::vector<Batch>& batches, int64_t epoch) {
  std::vector<int64_t> rows;
  for (const Batch& b : batches) {
    if (b.epoch == epoch) rows.insert(rows.end(), b.indices.begin(), b.indices.end());
  }
  return rows;
}

// ---- async ------------------------------------------------------------------------------------

TEST(InputPipeline, AsyncWorkersGetDistinctShardsCoveringEveryExampleOncePerEpoch) {
  for (int64_t n : {60, 61, 7, 1}) {
    for (int workers : {1, 2, 3, 4, 7}) {
      SCOPED_TRACE(::testing::Message() << "N=" << n << " W=" << workers);
      constexpr int64_t kBatch = 8, kEpochs = 3;
      const Dataset data = IndexedDataset(n);
      const PipelineOptions options{.mode = Mode::kAsync,
                                    .num_workers = workers,
                                    .batch_size = kBatch,
                                    .epochs = kEpochs,
                                    .seed = 42,
                                    .prefetch = 2};
      const auto batches = DrainAll(data, options);
      const BatchPlan plan(n, options);
      for (int64_t epoch = 0; epoch < kEpochs; ++epoch) {
        std::vector<int> visits(n, 0);
        for (int w = 0; w < workers; ++w) {
          const std::vector<int64_t> rows = Rows(batches[w], epoch);
          // Shard sizes differ by at most one: N*(w+1)/W - N*w/W.
          EXPECT_EQ(static_cast<int64_t>(rows.size()), n * (w + 1) / workers - n * w / workers)
              << "worker " << w;
          for (int64_t r : rows) ++visits[r];
        }
        for (int64_t r = 0; r < n; ++r) {
          EXPECT_EQ(visits[r], 1) << "example " << r << " in epoch " << epoch;
        }
      }
      for (int w = 0; w < workers; ++w) {
        EXPECT_EQ(static_cast<int64_t>(batches[w].size()), kEpochs * plan.StepsPerEpoch(w));
        for (size_t s = 0; s < batches[w].size(); ++s) {
          const Batch& b = batches[w][s];
          EXPECT_EQ(b.step, static_cast<int64_t>(s));
          EXPECT_GE(b.size(), 1);
          EXPECT_LE(b.size(), kBatch);
          EXPECT_EQ(b.global_size, b.size()) << "async scales by the worker's own batch";
          ExpectContentsMatchIndices(b, data);
        }
      }
    }
  }
}

// ---- sync -------------------------------------------------------------------------------------

TEST(InputPipeline, SyncShardsPartitionEachGlobalBatch) {
  // (N, B, W): uneven splits, B < W (empty shards), and a short last batch.
  struct Case {
    int64_t n, batch;
    int workers;
  };
  for (const Case c : {Case{50, 10, 3}, Case{50, 10, 4}, Case{23, 3, 7}, Case{9, 4, 2},
                       Case{12, 12, 5}, Case{5, 1, 2}}) {
    SCOPED_TRACE(::testing::Message() << "N=" << c.n << " B=" << c.batch << " W=" << c.workers);
    constexpr int64_t kEpochs = 2;
    const Dataset data = IndexedDataset(c.n);
    const PipelineOptions options{.mode = Mode::kSync,
                                  .num_workers = c.workers,
                                  .batch_size = c.batch,
                                  .epochs = kEpochs,
                                  .seed = 9,
                                  .prefetch = 3};
    const auto batches = DrainAll(data, options);
    const BatchPlan plan(c.n, options);
    const int64_t steps_per_epoch = (c.n + c.batch - 1) / c.batch;
    for (int w = 0; w < c.workers; ++w) {
      ASSERT_EQ(static_cast<int64_t>(batches[w].size()), kEpochs * steps_per_epoch)
          << "every worker takes the same number of steps; worker " << w;
    }
    bool saw_empty_shard = false;
    for (int64_t s = 0; s < kEpochs * steps_per_epoch; ++s) {
      const int64_t epoch = s / steps_per_epoch;
      const int64_t lo = (s % steps_per_epoch) * c.batch;
      const int64_t global = std::min(c.batch, c.n - lo);
      // Concatenated in worker order, the shards are the global batch: a contiguous chunk of
      // the epoch's permutation.
      const std::vector<int64_t> perm = plan.EpochPermutation(epoch);
      std::vector<int64_t> joined;
      for (int w = 0; w < c.workers; ++w) {
        const Batch& b = batches[w][s];
        EXPECT_EQ(b.step, s);
        EXPECT_EQ(b.epoch, epoch);
        EXPECT_EQ(b.global_size, global);
        EXPECT_EQ(b.size(), global * (w + 1) / c.workers - global * w / c.workers);
        saw_empty_shard |= b.size() == 0;
        ExpectContentsMatchIndices(b, data);
        joined.insert(joined.end(), b.indices.begin(), b.indices.end());
      }
      EXPECT_EQ(joined, std::vector<int64_t>(perm.begin() + lo, perm.begin() + lo + global))
          << "step " << s;
    }
    if (c.batch < c.workers) {
      EXPECT_TRUE(saw_empty_shard);
    }
    // Every example once per epoch.
    for (int64_t epoch = 0; epoch < kEpochs; ++epoch) {
      std::vector<int64_t> rows;
      for (int w = 0; w < c.workers; ++w) {
        const std::vector<int64_t> r = Rows(batches[w], epoch);
        rows.insert(rows.end(), r.begin(), r.end());
      }
      std::sort(rows.begin(), rows.end());
      std::vector<int64_t> all(c.n);
      for (int64_t i = 0; i < c.n; ++i) all[i] = i;
      EXPECT_EQ(rows, all) << "epoch " << epoch;
    }
  }
}

// drop_last: the epoch's short last batch (sync) or each worker's (async) is left out, so every
// batch is full: 10,000 examples at batch 64 are 156 steps of 9,984 examples, not 157 of 10,000.
TEST(InputPipeline, DropLastLeavesOutTheShortLastBatches) {
  const Dataset data = IndexedDataset(10000);
  for (const bool drop : {false, true}) {
    SCOPED_TRACE(drop ? "drop_last" : "keep last");
    const PipelineOptions sync{.mode = Mode::kSync,
                               .num_workers = 4,
                               .batch_size = 64,
                               .epochs = 2,
                               .seed = 3,
                               .drop_last = drop};
    const auto sync_batches = DrainAll(data, sync);
    EXPECT_EQ(BatchPlan(data.size(), sync).StepsPerEpoch(0), drop ? 156 : 157);
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      int64_t examples = 0;
      for (int w = 0; w < 4; ++w) {
        EXPECT_EQ(static_cast<int64_t>(sync_batches[w].size()), 2 * (drop ? 156 : 157));
        for (const Batch& b : sync_batches[w]) {
          if (b.epoch != epoch) continue;
          examples += b.size();
          EXPECT_EQ(b.global_size, drop || b.step % 157 != 156 ? 64 : 16) << "step " << b.step;
          EXPECT_EQ(b.size(), b.global_size / 4);
        }
      }
      EXPECT_EQ(examples, drop ? 9984 : 10000) << "epoch " << epoch;
    }
    // Async: shards of 3,333, 3,333 and 3,334 examples are 52 full batches each (3,328
    // examples), plus a short one of 5 or 6 without drop_last.
    const PipelineOptions async{.mode = Mode::kAsync,
                                .num_workers = 3,
                                .batch_size = 64,
                                .epochs = 1,
                                .seed = 3,
                                .drop_last = drop};
    const auto async_batches = DrainAll(data, async);
    const BatchPlan plan(data.size(), async);
    int64_t examples = 0;
    for (int w = 0; w < 3; ++w) {
      EXPECT_EQ(plan.StepsPerEpoch(w), drop ? 52 : 53);
      ASSERT_EQ(static_cast<int64_t>(async_batches[w].size()), drop ? 52 : 53);
      for (const Batch& b : async_batches[w]) {
        examples += b.size();
        ExpectContentsMatchIndices(b, data);
      }
      EXPECT_EQ(async_batches[w].back().size(), drop ? 64 : (w == 2 ? 6 : 5));
    }
    EXPECT_EQ(examples, drop ? 3 * 3328 : 10000);
  }
}

// ---- order --------------------------------------------------------------------------------------

std::vector<std::vector<int64_t>> OrderPerWorker(const Dataset& data,
                                                 const PipelineOptions& options) {
  std::vector<std::vector<int64_t>> order;
  for (const auto& batches : DrainAll(data, options)) {
    order.emplace_back();
    for (const Batch& b : batches)
      order.back().insert(order.back().end(), b.indices.begin(), b.indices.end());
  }
  return order;
}

TEST(InputPipeline, SameSeedSameOrderPerWorkerDifferentSeedDifferentOrder) {
  const Dataset data = IndexedDataset(100);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    PipelineOptions options{
        .mode = mode, .num_workers = 3, .batch_size = 7, .epochs = 2, .seed = 5, .prefetch = 1};
    const auto a = OrderPerWorker(data, options);
    options.prefetch = 4;  // prefetching depth must not change the order
    const auto b = OrderPerWorker(data, options);
    EXPECT_EQ(a, b);
    options.seed = 6;
    const auto c = OrderPerWorker(data, options);
    for (int w = 0; w < 3; ++w) EXPECT_NE(a[w], c[w]) << "worker " << w;
  }
}

TEST(InputPipeline, EpochsArePermutedDifferently) {
  constexpr int64_t kN = 200;
  const PipelineOptions options{
      .mode = Mode::kAsync, .num_workers = 1, .batch_size = 16, .epochs = 3};
  const BatchPlan plan(kN, options);
  std::vector<int64_t> identity(kN);
  for (int64_t i = 0; i < kN; ++i) identity[i] = i;
  std::vector<std::vector<int64_t>> perms;
  for (int64_t e = 0; e < 3; ++e) {
    perms.push_back(plan.EpochPermutation(e));
    std::vector<int64_t> sorted = perms.back();
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, identity) << "epoch " << e << " is not a permutation";
    EXPECT_NE(perms.back(), identity) << "epoch " << e << " is not shuffled";
    EXPECT_EQ(plan.EpochPermutation(e), perms.back()) << "not deterministic";
  }
  EXPECT_NE(perms[0], perms[1]);
  EXPECT_NE(perms[1], perms[2]);
  EXPECT_NE(perms[0], perms[2]);
  // And the pipeline delivers exactly that order, epoch after epoch.
  const Dataset data = IndexedDataset(kN);
  const auto order = OrderPerWorker(data, options);
  std::vector<int64_t> expected;
  for (const auto& p : perms) expected.insert(expected.end(), p.begin(), p.end());
  EXPECT_EQ(order[0], expected);
}

// ---- cancellation -------------------------------------------------------------------------------

// Recycle(): the producer refills the buffers handed back instead of allocating new ones, and
// the batches are the same as without recycling. A recycled batch is marked by a capacity no
// fresh batch has (a fresh vector's resize(n) allocates exactly n); with every batch recycled
// before the next Next(), only the batches in circulation (queue, worker, producer) are fresh.
TEST(InputPipeline, RecycledBuffersAreRefilledWithTheSameBatches) {
  const Dataset data = IndexedDataset(103);
  const PipelineOptions options{
      .mode = Mode::kAsync, .num_workers = 2, .batch_size = 10, .epochs = 3, .prefetch = 2};
  const std::vector<std::vector<Batch>> reference = DrainAll(data, options);
  constexpr size_t kMarkCapacity = 777 * kDim;
  InputPipeline pipeline(&data, options);
  std::vector<std::vector<Batch>> got(options.num_workers);
  std::vector<int> fresh(options.num_workers, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < options.num_workers; ++w) {
    threads.emplace_back([&, w] {
      while (true) {
        auto next = pipeline.Next(w);
        EXPECT_TRUE(next.ok()) << next.status();
        if (!next.ok() || !next->has_value()) return;
        Batch& b = **next;
        if (b.features.capacity() != kMarkCapacity) ++fresh[w];
        got[w].push_back(b);  // a copy: `b` itself goes back
        b.features.reserve(kMarkCapacity);
        pipeline.Recycle(w, std::move(b));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int w = 0; w < options.num_workers; ++w) {
    ASSERT_EQ(got[w].size(), reference[w].size());
    for (size_t i = 0; i < got[w].size(); ++i) {
      const Batch &a = got[w][i], &r = reference[w][i];
      EXPECT_EQ(a.epoch, r.epoch);
      EXPECT_EQ(a.step, r.step);
      EXPECT_EQ(a.global_size, r.global_size);
      EXPECT_EQ(a.indices, r.indices);
      EXPECT_EQ(a.features, r.features);
      EXPECT_EQ(a.labels, r.labels);
      ExpectContentsMatchIndices(a, data);
    }
    EXPECT_GT(got[w].size(), static_cast<size_t>(options.prefetch + 2));
    EXPECT_LE(fresh[w], options.prefetch + 2) << "worker " << w << " of " << got[w].size();
  }
}

TEST(InputPipeline, CancelUnblocksABlockedNext) {
  const Dataset data = IndexedDataset(10);
  InputPipeline pipeline(
      &data, PipelineOptions{.mode = Mode::kAsync, .num_workers = 2, .batch_size = 4, .epochs = 1});
  // Worker 0 takes all its batches; a further Next(0) has nothing to wait for but Cancel().
  while (true) {
    auto next = pipeline.Next(0);
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
  }
  std::atomic<bool> returned{false};
  std::atomic<pid_t> tid{0};
  absl::Status status;
  std::thread blocked([&] {
    tid.store(testing::CurrentThreadId());
    status = pipeline.Next(0).status();
    returned.store(true);
  });
  // Asleep inside Next(): the wake-up Cancel() must deliver is the one that could be lost.
  while (tid.load() == 0) std::this_thread::yield();
  EXPECT_TRUE(testing::WaitUntilAsleep(tid.load(), kHangS)) << "Next() did not block";
  EXPECT_FALSE(returned.load()) << "Next() returned without data or cancellation";
  testing::WithWatchdog(kHangS, "Next() released by Cancel()", [&] {
    pipeline.Cancel();
    blocked.join();
  });
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_EQ(pipeline.Next(1).status().code(), absl::StatusCode::kCancelled);
  pipeline.Cancel();  // idempotent
}

TEST(InputPipeline, DestroyingWithFullQueuesDoesNotHang) {
  // Producers blocked on full queues (nobody consumes) must be released by the destructor.
  const Dataset data = IndexedDataset(1000);
  testing::WithWatchdog(kHangS, "the pipeline's destructor", [&] {
    InputPipeline pipeline(
        &data,
        PipelineOptions{
            .mode = Mode::kSync, .num_workers = 3, .batch_size = 6, .epochs = 5, .prefetch = 1});
    auto first = pipeline.Next(1);
    ASSERT_TRUE(first.ok() && first->has_value());
    // Every producer has filled its queue and is blocked on it (5 epochs never fit in one
    // batch): only then is the destructor's wake-up the one under test.
    EXPECT_TRUE(testing::WaitUntilAllOthersAsleep(kHangS)) << "a producer never blocked";
  });
}

}  // namespace
}  // namespace hogwild
