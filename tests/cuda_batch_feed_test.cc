// CudaBatchFeed against the host pipeline: every batch arrives on the GPU whole, in order, with
// the pipeline's metadata, across many slot reuses (double buffering must never hand out a slot
// that is being refilled), for uneven last batches and for empty sync shards. Plus the GPU
// policies' refusal of a backend on the wrong device kind. Skips with "no CUDA device: <reason>"
// where there is no GPU.
#include "trainer/data/cuda_batch_feed.h"

#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/devices.h"
#include "sync/device_hogwild.h"
#include "sync/nccl_tower_average.h"
#include "sync/parameter_store.h"
#include "tests/test_data.h"
#include "trainer/data/batch_feed.h"
#include "trainer/data/input_pipeline.h"

namespace hogwild {
namespace {

class CudaBatchFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::StatusOr<int> count = CudaDeviceCount();
    if (!count.ok()) GTEST_SKIP() << "no CUDA device: " << count.status().message();
    auto backend = CudaBackend::Create(0);
    ASSERT_TRUE(backend.ok()) << backend.status();
    gpu_ = std::move(*backend);
  }

  // Drains worker `worker`'s batches through a CudaBatchFeed and through a HostBatchFeed of an
  // identical pipeline, comparing every batch. Between batches it enqueues a kernel that reads
  // the batch (a ReLU into scratch), so a slot refilled too early would be caught too.
  void ExpectSameBatches(const Dataset& data, const PipelineOptions& options, int worker) {
    InputPipeline device_pipeline(&data, options);
    InputPipeline host_pipeline(&data, options);
    const int64_t max_batch = options.batch_size;
    const int64_t dim = data.feature_dim();
    auto feed = CudaBatchFeed::Create(&device_pipeline, worker, gpu_.get(), max_batch, dim);
    ASSERT_TRUE(feed.ok()) << feed.status();
    HostBatchFeed reference(&host_pipeline, worker);
    auto scratch = gpu_->Allocate(max_batch * dim * sizeof(float));
    ASSERT_TRUE(scratch.ok());
    int64_t batches = 0;
    while (true) {
      auto got = (*feed)->Next();
      auto want = reference.Next();
      ASSERT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
      ASSERT_EQ(got->has_value(), want->has_value()) << "after " << batches << " batches";
      if (!got->has_value()) break;
      const BatchView& g = **got;
      const BatchView& w = **want;
      ASSERT_EQ(g.size, w.size);
      EXPECT_EQ(g.step, w.step);
      EXPECT_EQ(g.epoch, w.epoch);
      EXPECT_EQ(g.global_size, w.global_size);
      ASSERT_TRUE(gpu_->Relu(g.size * dim, g.features, static_cast<float*>(*scratch)).ok());
      std::vector<float> features(g.size * dim, -1.0f);
      std::vector<int32_t> labels(g.size, -1);
      ASSERT_TRUE(gpu_->CopyToHost(features.data(), g.features, features.size() * sizeof(float)).ok());
      ASSERT_TRUE(gpu_->CopyToHost(labels.data(), g.labels, labels.size() * sizeof(int32_t)).ok());
      EXPECT_EQ(features, std::vector<float>(w.features, w.features + g.size * dim))
          << "batch " << batches;
      EXPECT_EQ(labels, std::vector<int32_t>(w.labels, w.labels + g.size)) << "batch " << batches;
      ++batches;
    }
    EXPECT_GT(batches, 2);
    // After the end the feed keeps saying so.
    auto again = (*feed)->Next();
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->has_value());
    gpu_->Free(*scratch);
  }

  std::unique_ptr<CudaBackend> gpu_;
};

TEST_F(CudaBatchFeedTest, AsyncBatchesArriveWholeAndInOrder) {
  const Dataset data = testing::SyntheticDataset(203, 7, 3, 4);
  // 203 / 2 workers, batch 10: uneven last batches; 3 epochs = many reuses of both slots.
  const PipelineOptions options{.mode = Mode::kAsync, .num_workers = 2, .batch_size = 10,
                                .epochs = 3, .seed = 5, .prefetch = 2};
  ExpectSameBatches(data, options, 0);
  ExpectSameBatches(data, options, 1);
}

TEST_F(CudaBatchFeedTest, SyncShardsIncludingEmptyOnes) {
  const Dataset data = testing::SyntheticDataset(23, 5, 3, 8);
  // Global batch 4 over 6 workers: workers 4 and 5 get empty shards at every step.
  const PipelineOptions options{.mode = Mode::kSync, .num_workers = 6, .batch_size = 4,
                                .epochs = 2, .seed = 2, .prefetch = 1};
  ExpectSameBatches(data, options, 0);
  ExpectSameBatches(data, options, 5);
}

TEST_F(CudaBatchFeedTest, CancelledPipelineEndsTheFeedWithCancelled) {
  const Dataset data = testing::SyntheticDataset(500, 5, 3, 8);
  InputPipeline pipeline(&data, PipelineOptions{.batch_size = 4, .epochs = 5});
  auto feed = CudaBatchFeed::Create(&pipeline, 0, gpu_.get(), 4, 5);
  ASSERT_TRUE(feed.ok());
  ASSERT_TRUE((*feed)->Next().ok());
  pipeline.Cancel();
  // The slot staged before the cancel may still be handed out; after that, kCancelled.
  absl::StatusOr<std::optional<BatchView>> next = (*feed)->Next();
  if (next.ok()) next = (*feed)->Next();
  if (next.ok()) next = (*feed)->Next();
  EXPECT_EQ(next.status().code(), absl::StatusCode::kCancelled) << next.status();
}

TEST_F(CudaBatchFeedTest, GpuPoliciesRejectACpuBackend) {
  ParameterStore store(10);
  CpuBackend cpu;
  auto hogwild = DeviceHogwild::Create(&store, {0}, {});
  ASSERT_TRUE(hogwild.ok()) << hogwild.status();
  absl::Status s = (*hogwild)->AttachWorker(0, &cpu);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("got cpu"), std::string::npos) << s;
  EXPECT_EQ((*hogwild)->BeginStep(0).status().code(), absl::StatusCode::kFailedPrecondition);
  auto towers = NcclTowerAverage::Create(&store, {0, 0}, {});
  ASSERT_TRUE(towers.ok()) << towers.status();
  EXPECT_EQ((*towers)->AttachWorker(1, &cpu).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*towers)->num_replicas(), 1);
}

}  // namespace
}  // namespace hogwild
