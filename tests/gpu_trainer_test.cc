// The trainer invariants of DESIGN.md on GPU workers:
// - async with 1 GPU worker is sequential minibatch SGD: equal to the CPU run up to float
//   rounding (cuBLAS sums in another order than OpenBLAS; the device contracts multiply-adds),
//   with the master on the GPU and with the master in pinned host memory;
// - sync with k workers (on one GPU, and across GPUs where there are several) equals 1 worker
//   with the same global batch, and the GPU sync run equals the CPU sync run;
// - several async workers sharing one GPU train (the loss falls) and never produce NaNs;
// - a worker's error stops every GPU worker and reaches the caller;
// - a GPU run stopped with a checkpoint and resumed ends bitwise equal to an uninterrupted GPU
//   run (sync with several workers on one GPU; async with one worker), momentum included;
// - every other optimizer, with the biases exempt from weight decay, equals the CPU run.
// Every case skips with "no CUDA device: <reason>" where there is no GPU.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kernels/cuda/devices.h"
#include "kernels/optimizer.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

// Worst absolute difference between parameter vectors; float rounding over the ~40 steps of
// these runs stays around 1e-6..1e-5 on parameters of size ~0.1..1.
constexpr double kFloatTolerance = 2e-4;

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double{a[i]} - b[i]));
  return m;
}

TrainerOptions Options(Mode mode, int64_t batch) {
  TrainerOptions o;
  o.mode = mode;
  o.batch_size = batch;
  o.epochs = 2;
  o.lr.base_lr = 0.1f;
  o.sgd.momentum = 0.9f;
  o.sgd.weight_decay = 1e-4f;
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.eval_every_epochs = 0;
  o.seed = 11;
  return o;
}

TrainerOptions OnGpus(TrainerOptions o, std::vector<int> gpus, int workers_per_device) {
  o.devices.clear();
  for (int g : gpus) o.devices.push_back(DeviceSpec::Gpu(g));
  o.workers_per_device = workers_per_device;
  return o;
}

class GpuTrainer : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::StatusOr<int> count = CudaDeviceCount();
    if (!count.ok()) GTEST_SKIP() << "no CUDA device: " << count.status().message();
    gpus_ = *count;
  }
  // 203 examples, batch 10: uneven last batch; 12 features, 4 classes.
  const Dataset train_ = testing::SyntheticDataset(203, 12, 4, 5);
  const Dataset test_ = testing::SyntheticDataset(100, 12, 4, 6);
  int gpus_ = 0;
};

TEST_F(GpuTrainer, AsyncOneGpuWorkerEqualsTheCpuRun) {
  auto cpu = Train(Options(Mode::kAsync, 10), train_, Dataset());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto gpu = Train(OnGpus(Options(Mode::kAsync, 10), {0}, 1), train_, Dataset());
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->steps, cpu->steps);
  EXPECT_EQ(gpu->examples, cpu->examples);
  EXPECT_LT(MaxAbsDiff(gpu->params, cpu->params), kFloatTolerance);
  // Not vacuous: training moved the parameters far more than the tolerance.
  TrainerOptions frozen = Options(Mode::kAsync, 10);
  frozen.lr.base_lr = 1e-30f;
  auto init = Train(frozen, train_, Dataset());
  ASSERT_TRUE(init.ok());
  EXPECT_GT(MaxAbsDiff(gpu->params, init->params), 1e-2);
}

TEST_F(GpuTrainer, AsyncWithTheMasterInPinnedHostMemoryEqualsTheCpuRun) {
  auto cpu = Train(Options(Mode::kAsync, 10), train_, Dataset());
  TrainerOptions o = OnGpus(Options(Mode::kAsync, 10), {0}, 1);
  o.force_host_master = true;
  auto gpu = Train(o, train_, Dataset());
  ASSERT_TRUE(cpu.ok() && gpu.ok()) << gpu.status();
  EXPECT_LT(MaxAbsDiff(gpu->params, cpu->params), kFloatTolerance);
}

TEST_F(GpuTrainer, EvaluationOfGpuParametersMatchesTheCpuRun) {
  TrainerOptions o = Options(Mode::kAsync, 10);
  o.eval_every_epochs = 1.0;
  auto cpu = Train(o, train_, test_);
  auto gpu = Train(OnGpus(o, {0}, 1), train_, test_);
  ASSERT_TRUE(cpu.ok() && gpu.ok()) << gpu.status();
  EXPECT_NEAR(gpu->final_test_loss, cpu->final_test_loss, 1e-3);
  EXPECT_NEAR(gpu->final_test_accuracy, cpu->final_test_accuracy, 0.011);  // one example of 100
}

class GpuSyncWorkers : public GpuTrainer, public ::testing::WithParamInterface<int> {};

TEST_P(GpuSyncWorkers, WorkersOnOneGpuEqualOneWorkerWithTheSameGlobalBatch) {
  const int k = GetParam();
  auto one = Train(OnGpus(Options(Mode::kSync, 10), {0}, 1), train_, Dataset());
  ASSERT_TRUE(one.ok()) << one.status();
  auto many = Train(OnGpus(Options(Mode::kSync, 10), {0}, k), train_, Dataset());
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(many->steps, one->steps);
  EXPECT_EQ(many->examples, one->examples);
  EXPECT_LT(MaxAbsDiff(many->params, one->params), 1e-4);
}

// 3 and 7 workers split a batch of 10 unevenly; 7 and 11 leave shards of the 3-example last
// batch empty.
INSTANTIATE_TEST_SUITE_P(Workers, GpuSyncWorkers, ::testing::Values(2, 3, 7, 11));

TEST_F(GpuTrainer, SyncOnTheGpuEqualsSyncOnTheCpu) {
  TrainerOptions cpu_options = Options(Mode::kSync, 10);
  cpu_options.num_workers = 2;
  auto cpu = Train(cpu_options, train_, Dataset());
  auto gpu = Train(OnGpus(Options(Mode::kSync, 10), {0}, 2), train_, Dataset());
  ASSERT_TRUE(cpu.ok() && gpu.ok()) << gpu.status();
  EXPECT_LT(MaxAbsDiff(gpu->params, cpu->params), kFloatTolerance);
}

// Every optimizer other than sgd/momentum, with the biases exempt from weight decay, through the
// whole trainer: async with one GPU worker and sync with two workers on one GPU equal the CPU
// runs up to float rounding. The adaptive optimizers run at lr 1e-3 (their steps are about lr
// per element, so rounding moves a parameter by a fraction of lr at most).
class GpuOptimizers : public GpuTrainer, public ::testing::WithParamInterface<OptimizerKind> {};

TEST_P(GpuOptimizers, AsyncAndSyncOnTheGpuEqualTheCpuRuns) {
  for (const Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    const int workers = mode == Mode::kSync ? 2 : 1;
    TrainerOptions o = Options(mode, 10);
    o.sgd.optimizer = GetParam();
    if (GetParam() != OptimizerKind::kNesterov && GetParam() != OptimizerKind::kRmsprop) {
      o.sgd.momentum = 0.0f;
    }
    if (GetParam() != OptimizerKind::kNesterov) o.lr.base_lr = 1e-3f;
    o.weight_decay_biases = false;
    TrainerOptions cpu_options = o;
    cpu_options.num_workers = workers;
    auto cpu = Train(cpu_options, train_, Dataset());
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    auto gpu = Train(OnGpus(o, {0}, workers), train_, Dataset());
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ(gpu->steps, cpu->steps);
    EXPECT_LT(MaxAbsDiff(gpu->params, cpu->params), kFloatTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, GpuOptimizers,
                         ::testing::Values(OptimizerKind::kNesterov, OptimizerKind::kAdam,
                                           OptimizerKind::kAdamW, OptimizerKind::kRmsprop,
                                           OptimizerKind::kAdagrad));

TEST_F(GpuTrainer, SyncIsBitwiseReproducibleOnTheGpu) {
  auto a = Train(OnGpus(Options(Mode::kSync, 10), {0}, 3), train_, Dataset());
  auto b = Train(OnGpus(Options(Mode::kSync, 10), {0}, 3), train_, Dataset());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->params, b->params);
}

TEST_F(GpuTrainer, SyncAcrossGpusEqualsOneGpu) {
  if (gpus_ < 2) GTEST_SKIP() << "needs 2 CUDA devices, this machine has " << gpus_;
  std::vector<int> all;
  for (int g = 0; g < gpus_; ++g) all.push_back(g);
  auto one = Train(OnGpus(Options(Mode::kSync, 10), {0}, 1), train_, Dataset());
  auto across = Train(OnGpus(Options(Mode::kSync, 10), all, 2), train_, Dataset());
  ASSERT_TRUE(one.ok() && across.ok()) << across.status();
  EXPECT_LT(MaxAbsDiff(across->params, one->params), 1e-4);
}

TEST_F(GpuTrainer, AsyncAcrossGpusTrains) {
  if (gpus_ < 2) GTEST_SKIP() << "needs 2 CUDA devices, this machine has " << gpus_;
  std::vector<int> all;
  for (int g = 0; g < gpus_; ++g) all.push_back(g);
  TrainerOptions o = OnGpus(Options(Mode::kAsync, 10), all, 1);
  o.epochs = 5;
  auto run = Train(o, train_, test_);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_GT(run->final_test_accuracy, 0.5);
}

TEST_F(GpuTrainer, SeveralAsyncWorkersShareOneGpuAndTrain) {
  TrainerOptions o = OnGpus(Options(Mode::kAsync, 10), {0}, 4);
  o.epochs = 5;
  auto run = Train(o, train_, test_);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->num_workers, 4);
  EXPECT_EQ(run->examples, 5 * train_.size());
  for (float p : run->params) ASSERT_TRUE(std::isfinite(p));
  // 4 classes: chance is 0.25; the CPU run of this setup reaches well above 0.5.
  EXPECT_GT(run->final_test_accuracy, 0.5);
}

TEST_F(GpuTrainer, AWorkerErrorStopsEveryGpuWorker) {
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    TrainerOptions o = OnGpus(Options(mode, 10), {0}, 3);
    o.epochs = 50;
    o.step_hook = [](int worker, int64_t step) {
      if (worker == 1 && step == 3) return absl::DataLossError("injected fault");
      return absl::OkStatus();
    };
    auto run = Train(o, train_, Dataset());
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.status().code(), absl::StatusCode::kDataLoss) << run.status();
    EXPECT_NE(run.status().message().find("worker 1"), std::string::npos) << run.status();
  }
}

// Runs `o` with a stop requested when worker 0 reaches `stop_step`, checkpointing into `dir`.
absl::StatusOr<TrainResult> StopAt(TrainerOptions o, const std::string& dir, int64_t stop_step,
                                   const Dataset& train) {
  std::atomic<bool> stop{false};
  o.checkpoint_dir = dir;
  o.stop_requested = &stop;
  o.step_hook = [&](int worker, int64_t step) {
    if (worker == 0 && step == stop_step) stop = true;
    return absl::OkStatus();
  };
  return Train(o, train, Dataset());
}

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST_F(GpuTrainer, StoppedAndResumedGpuRunsAreBitwiseEqualToUninterruptedOnes) {
  struct Case {
    Mode mode;
    int workers;
  };
  for (const Case c : {Case{Mode::kSync, 3}, Case{Mode::kAsync, 1}}) {
    SCOPED_TRACE(ModeName(c.mode));
    const TrainerOptions o = OnGpus(Options(c.mode, 10), {0}, c.workers);
    auto reference = Train(o, train_, Dataset());
    ASSERT_TRUE(reference.ok()) << reference.status();
    const std::string dir = FreshDir(std::string("gpu_resume_") + ModeName(c.mode));
    auto stopped = StopAt(o, dir, 13, train_);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    ASSERT_TRUE(stopped->stopped_early);
    ASSERT_GT(stopped->last_checkpoint_step, 0);
    TrainerOptions resume = o;
    resume.checkpoint_dir = dir;
    resume.resume = true;
    auto resumed = Train(resume, train_, Dataset());
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->resumed_from_step, stopped->last_checkpoint_step);
    EXPECT_EQ(resumed->steps, reference->steps);
    EXPECT_EQ(resumed->params, reference->params);  // bitwise: momentum and step restored
  }
}

}  // namespace
}  // namespace hogwild
