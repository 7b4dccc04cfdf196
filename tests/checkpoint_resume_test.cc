// Resume from a checkpoint: in sync mode a run stopped (by a stop request or by a crash after a
// periodic checkpoint) and resumed ends with parameters bitwise equal to an uninterrupted run
// with the same seed; so do local_sgd (Streaming DiLoCo included), backup without backup workers,
// and async, ssp and async_local_sgd with one worker; with several, async, ssp and
// async_local_sgd resume from a consistent cut and train each remaining batch exactly once. Foreign checkpoints (another mode option included) are refused by name.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/optimizer_name.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_state.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

constexpr double kWatchdogS = 30.0;

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(base ? base : "/tmp") / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

const Dataset& Data() {
  // 203 examples, global batch 10: uneven shards and a short last batch.
  static const Dataset* data = new Dataset(testing::SyntheticDataset(203, 12, 4, 5));
  return *data;
}

TrainerOptions Options(Mode mode, int workers) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = workers;
  o.batch_size = 10;
  o.epochs = 3;
  o.lr.kind = LrSchedule::Kind::kExponential;  // the schedule must continue from the step
  o.lr.base_lr = 0.1f;
  o.lr.decay_rate = 0.5f;
  o.lr.decay_steps = 20;
  o.sgd.momentum = 0.9f;  // the momentum buffers must be restored
  o.sgd.weight_decay = 1e-4f;
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.eval_every_epochs = 0;
  o.seed = 11;
  return o;
}

absl::StatusOr<TrainResult> TrainGuarded(const TrainerOptions& o, const std::string& what) {
  return testing::WithWatchdog(kWatchdogS, what, [&] { return Train(o, Data(), Dataset()); });
}

// Runs `o` with a stop requested when worker 0 reaches `stop_step`.
absl::StatusOr<TrainResult> RunAndStop(TrainerOptions o, int64_t stop_step) {
  std::atomic<bool> stop{false};
  o.stop_requested = &stop;
  o.step_hook = [&](int worker, int64_t step) {
    if (worker == 0 && step == stop_step) stop = true;
    return absl::OkStatus();
  };
  return TrainGuarded(o, "stopped run");
}

class SyncResume : public ::testing::TestWithParam<int> {};

TEST_P(SyncResume, StopAndResumeIsBitwiseEqualToAnUninterruptedRun) {
  const int workers = GetParam();
  auto reference = TrainGuarded(Options(Mode::kSync, workers), "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();

  TrainerOptions o = Options(Mode::kSync, workers);
  o.checkpoint_dir = TempDir(absl::StrFormat("sync_stop_%d", workers));
  // Two interruptions: each resume continues the previous one.
  for (int64_t stop_step : {17, 40}) {
    TrainerOptions part = o;
    part.resume = stop_step != 17;
    auto stopped = RunAndStop(part, stop_step);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    ASSERT_TRUE(stopped->stopped_early);
    // Worker 0 sees the request at the boundary after its step `stop_step`.
    EXPECT_EQ(stopped->steps, stop_step + 1);
    EXPECT_EQ(stopped->last_checkpoint_step, stop_step + 1);
  }
  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from_step, 41);
  EXPECT_EQ(resumed->steps, reference->steps);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise
}

TEST_P(SyncResume, CrashAfterPeriodicCheckpointResumesBitwise) {
  const int workers = GetParam();
  auto reference = TrainGuarded(Options(Mode::kSync, workers), "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();

  TrainerOptions o = Options(Mode::kSync, workers);
  o.checkpoint_dir = TempDir(absl::StrFormat("sync_crash_%d", workers));
  o.checkpoint_every_steps = 7;
  TrainerOptions crashing = o;
  crashing.step_hook = [](int worker, int64_t step) {
    return worker == 0 && step == 30 ? absl::InternalError("simulated crash") : absl::OkStatus();
  };
  auto crashed = TrainGuarded(crashing, "crashing run");
  ASSERT_FALSE(crashed.ok());
  EXPECT_NE(crashed.status().message().find("last good checkpoint (global step 28)"),
            std::string::npos)
      << crashed.status();

  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from_step, 28);
  EXPECT_EQ(resumed->params, reference->params);
}

INSTANTIATE_TEST_SUITE_P(Workers, SyncResume, ::testing::Values(1, 2, 3, 4));

TEST(Resume, TimeBasedCheckpointsResumeBitwise) {
  auto reference = TrainGuarded(Options(Mode::kSync, 2), "reference");
  ASSERT_TRUE(reference.ok());
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("time_based");
  o.checkpoint_every_seconds = 1e-6;  // due at every boundary
  auto stopped = RunAndStop(o, 23);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->params, reference->params);
}

TEST(Resume, MoreEpochsContinueFromTheFinalCheckpoint) {
  auto reference = TrainGuarded(Options(Mode::kSync, 3), "reference");  // 3 epochs
  ASSERT_TRUE(reference.ok());
  TrainerOptions o = Options(Mode::kSync, 3);
  o.checkpoint_dir = TempDir("more_epochs");
  o.epochs = 2;
  auto first = TrainGuarded(o, "2 epochs");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->last_checkpoint_step, first->steps);  // written at the end
  o.epochs = 3;
  o.resume = true;
  auto resumed = TrainGuarded(o, "third epoch");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->params, reference->params);
}

// Every stateful optimizer's state (moments, Adam's step count) is checkpointed: sync runs of
// nesterov, adam, adamw, rmsprop (with momentum) and adagrad, stopped and resumed, end bitwise
// equal to uninterrupted runs; async with one worker too, with per-worker and shared state, and
// locked (async's cut) with one worker.
TEST(Resume, EveryOptimizerResumesBitwise) {
  const OptimizerKind kinds[] = {OptimizerKind::kNesterov, OptimizerKind::kAdam,
                                 OptimizerKind::kAdamW, OptimizerKind::kRmsprop,
                                 OptimizerKind::kAdagrad};
  struct Setup {
    Mode mode;
    int workers;
    bool shared;
  };
  for (const Setup setup : {Setup{Mode::kSync, 3, false}, Setup{Mode::kAsync, 1, false},
                            Setup{Mode::kAsync, 1, true}, Setup{Mode::kLocked, 1, false}}) {
    for (OptimizerKind kind : kinds) {
      TrainerOptions o = Options(setup.mode, setup.workers);
      o.sgd.optimizer = kind;
      o.sgd.shared_optimizer_state = setup.shared;
      const bool has_momentum = kind == OptimizerKind::kNesterov || kind == OptimizerKind::kRmsprop;
      o.sgd.momentum = has_momentum ? 0.5f : 0.0f;
      o.lr.base_lr = kind == OptimizerKind::kNesterov ? 0.05f : 0.005f;
      const std::string what = absl::StrFormat("%s %s%s", ModeName(setup.mode), OptimizerName(kind),
                                               setup.shared ? " shared" : "");
      auto reference = TrainGuarded(o, what + " reference");
      ASSERT_TRUE(reference.ok()) << what << ": " << reference.status();
      o.checkpoint_dir = TempDir("optimizer_resume");
      o.overwrite_checkpoint = true;
      auto stopped = RunAndStop(o, 19);
      ASSERT_TRUE(stopped.ok()) << what << ": " << stopped.status();
      ASSERT_TRUE(stopped->stopped_early) << what;
      o.overwrite_checkpoint = false;
      o.resume = true;
      auto resumed = TrainGuarded(o, what + " resumed");
      ASSERT_TRUE(resumed.ok()) << what << ": " << resumed.status();
      EXPECT_EQ(resumed->resumed_from_step, 20) << what;
      EXPECT_EQ(resumed->params, reference->params) << what;  // bitwise
    }
  }
}

// The weight EMA is checkpointed with the parameters: a sync run (3 workers) and an async run (1
// worker) with --ema_decay, stopped and resumed, end with the average bitwise equal to an
// uninterrupted run's; a checkpoint with an EMA does not resume without one.
TEST(Resume, TheWeightEmaResumesBitwise) {
  for (const auto& [mode, workers] : {std::pair{Mode::kSync, 3}, std::pair{Mode::kAsync, 1}}) {
    TrainerOptions o = Options(mode, workers);
    o.ema_decay = 0.9f;
    auto reference = TrainGuarded(o, "ema reference");
    ASSERT_TRUE(reference.ok()) << reference.status();
    o.checkpoint_dir = TempDir("ema_resume");
    o.overwrite_checkpoint = true;
    auto stopped = RunAndStop(o, 19);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    ASSERT_TRUE(stopped->stopped_early);
    o.overwrite_checkpoint = false;
    o.resume = true;
    auto resumed = TrainGuarded(o, "ema resumed");
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->resumed_from_step, 20);
    EXPECT_EQ(resumed->params, reference->params);
    ASSERT_FALSE(resumed->ema_params.empty());
    EXPECT_EQ(resumed->ema_params, reference->ema_params);  // bitwise
    EXPECT_NE(resumed->ema_params, resumed->params);
    TrainerOptions without = o;
    without.ema_decay = 0.0f;
    auto refused = TrainGuarded(without, "ema refused");
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("the weight EMA differs"), std::string::npos)
        << refused.status();
  }
}

// cnn_bn in sync mode (3 workers): the moving statistics live in the parameter array, so a
// stopped and resumed run ends with parameters (statistics included) bitwise equal to an
// uninterrupted one's.
TEST(Resume, BatchNormSyncResumesBitwise) {
  static const Dataset* images = [] {
    auto* d = new Dataset(testing::SyntheticDataset(203, 16, 4, 5));
    d->example_shape = {1, 4, 4};
    return d;
  }();
  TrainerOptions o = Options(Mode::kSync, 3);
  o.model = ModelSpec{.name = "cnn_bn", .hidden = {}};
  o.epochs = 2;
  const auto run = [&](const TrainerOptions& options, const std::string& what) {
    return testing::WithWatchdog(kWatchdogS, what,
                                 [&] { return Train(options, *images, Dataset()); });
  };
  auto reference = run(o, "cnn_bn reference");
  ASSERT_TRUE(reference.ok()) << reference.status();
  o.checkpoint_dir = TempDir("cnn_bn_resume");
  std::atomic<bool> stop{false};
  TrainerOptions part = o;
  part.stop_requested = &stop;
  part.step_hook = [&](int worker, int64_t step) {
    if (worker == 0 && step == 13) stop = true;
    return absl::OkStatus();
  };
  auto stopped = run(part, "cnn_bn stopped");
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  o.resume = true;
  auto resumed = run(o, "cnn_bn resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from_step, 14);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise, moving statistics included
}

TEST(Resume, AsyncOneWorkerIsBitwise) {
  auto reference = TrainGuarded(Options(Mode::kAsync, 1), "reference");
  ASSERT_TRUE(reference.ok());
  TrainerOptions o = Options(Mode::kAsync, 1);
  o.checkpoint_dir = TempDir("async_one");
  auto stopped = RunAndStop(o, 33);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->params, reference->params);
}

TEST(Resume, AsyncManyWorkersTrainEveryRemainingBatchOnce) {
  for (int workers : {2, 3, 4}) {
    SCOPED_TRACE(workers);
    auto reference = TrainGuarded(Options(Mode::kAsync, workers), "reference");
    ASSERT_TRUE(reference.ok());
    TrainerOptions o = Options(Mode::kAsync, workers);
    o.checkpoint_dir = TempDir("async_many");
    o.checkpoint_every_steps = 5;
    auto stopped = RunAndStop(o, 9);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
    ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
    // The snapshot is a consistent cut: the updates applied equal the batches consumed.
    int64_t consumed = 0;
    for (int64_t s : (*checkpoint)->next_step) consumed += s;
    EXPECT_EQ((*checkpoint)->global_step, consumed);
    EXPECT_EQ((*checkpoint)->global_step, stopped->steps);

    o.resume = true;
    auto resumed = TrainGuarded(o, "resumed");
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->steps, reference->steps);
    EXPECT_EQ(stopped->examples + resumed->examples, reference->examples);
  }
}

// local_sgd (W=2, H=3) takes its cuts at round boundaries only: a stop asked mid-round (step 17)
// lands at the end of a round, and twice-interrupted runs (a stop, then a crash after a periodic
// checkpoint) resume bitwise equal to the uninterrupted one: every replica's momentum is restored
// and the rounds continue where they were.
TEST(Resume, LocalSgdCutsAtTheRoundsEndAndResumesBitwise) {
  TrainerOptions o = Options(Mode::kLocalSgd, 2);
  o.average_every = 3;
  auto reference = TrainGuarded(o, "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();

  o.checkpoint_dir = TempDir("local_sgd");
  auto stopped = RunAndStop(o, 17);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  EXPECT_EQ(stopped->steps % 3, 0) << stopped->steps;  // the end of a round
  EXPECT_GE(stopped->steps, 18);
  EXPECT_EQ(stopped->last_checkpoint_step, stopped->steps);
  auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->next_step, std::vector<int64_t>(2, stopped->steps));
  EXPECT_EQ((*checkpoint)->optimizer_state.size(), 2u);  // each replica's momentum
  EXPECT_EQ((*checkpoint)->signature.average_every, 3);

  TrainerOptions crashing = o;
  crashing.resume = true;
  crashing.checkpoint_every_steps = 4;
  crashing.step_hook = [](int worker, int64_t step) {
    return worker == 1 && step == 40 ? absl::InternalError("simulated crash") : absl::OkStatus();
  };
  auto crashed = TrainGuarded(crashing, "crashing run");
  ASSERT_FALSE(crashed.ok());

  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_GT(resumed->resumed_from_step, stopped->steps);
  EXPECT_EQ(resumed->resumed_from_step % 3, 0);
  EXPECT_EQ(resumed->steps, reference->steps);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise
}

// With DiLoCo's outer optimizer the checkpoint holds the outer momentum too (after the two
// replicas' momentum buffers), and a stopped and resumed run is bitwise the uninterrupted one; a
// resume with another outer optimizer is refused naming the first value that differs.
TEST(Resume, LocalSgdWithOuterMomentumResumesBitwise) {
  TrainerOptions o = Options(Mode::kLocalSgd, 2);
  o.average_every = 3;
  o.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  auto reference = TrainGuarded(o, "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();

  o.checkpoint_dir = TempDir("local_sgd_outer");
  auto stopped = RunAndStop(o, 17);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  ASSERT_TRUE(checkpoint->has_value());
  ASSERT_EQ((*checkpoint)->optimizer_state.size(), 3u);
  // The outer momentum is live: some of it is not zero.
  const std::vector<float>& outer_momentum = (*checkpoint)->optimizer_state[2];
  EXPECT_TRUE(
      std::any_of(outer_momentum.begin(), outer_momentum.end(), [](float m) { return m != 0.0f; }));

  TrainerOptions without = o;
  without.resume = true;
  without.outer = {};
  auto refused = TrainGuarded(without, "resumed without outer momentum");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "cannot resume: --outer_lr differs: the checkpoint has 0.7, this run 1;"),
            std::string::npos)
      << refused.status();

  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->steps, reference->steps);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise
}

// Streaming DiLoCo (2 fragments, exchanges overlapped by 1 step, mixed with alpha 0.5) takes its
// cuts at the rounds' ends too, where the replicas differ from the shared parameters: the
// checkpoint holds them and each worker's local step (PolicyState::mode_state), and a stop and a
// crash after a periodic checkpoint resume bitwise equal to the uninterrupted run.
TEST(Resume, StreamingDiLoCoResumesBitwise) {
  TrainerOptions o = Options(Mode::kLocalSgd, 2);
  o.average_every = 4;
  o.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  o.streaming = {.fragments = 2, .overlap_steps = 1, .mix_alpha = 0.5f};
  auto reference = TrainGuarded(o, "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();

  o.checkpoint_dir = TempDir("streaming");
  auto stopped = RunAndStop(o, 17);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  EXPECT_EQ(stopped->steps % 4, 0) << stopped->steps;
  auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  ASSERT_TRUE(checkpoint->has_value());
  const ModeState& state = (*checkpoint)->mode_state;
  ASSERT_EQ(state.buffers.size(), 2u);  // the replicas
  EXPECT_NE(state.buffers[0], (*checkpoint)->params) << "the replica equals the parameters";
  EXPECT_EQ(state.counters, std::vector<int64_t>({20, 20, 20, 20}));  // steps, last exchange
  EXPECT_EQ((*checkpoint)->signature.streaming, o.streaming);

  TrainerOptions crashing = o;
  crashing.resume = true;
  crashing.checkpoint_every_steps = 4;
  crashing.step_hook = [](int worker, int64_t step) {
    return worker == 1 && step == 37 ? absl::InternalError("simulated crash") : absl::OkStatus();
  };
  ASSERT_FALSE(TrainGuarded(crashing, "crashing run").ok());

  TrainerOptions other = o;
  other.resume = true;
  other.streaming.mix_alpha = 0.25f;
  auto refused = TrainGuarded(other, "another mix_alpha");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "cannot resume: --mix_alpha differs: the checkpoint has 0.5, this run 0.25;"),
            std::string::npos)
      << refused.status();

  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_GT(resumed->resumed_from_step, stopped->steps);
  EXPECT_EQ(resumed->steps, reference->steps);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise
}

TrainerOptions AsyncLocalSgdOptions(int workers) {
  TrainerOptions o = Options(Mode::kAsyncLocalSgd, workers);
  o.average_every = 3;
  o.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  o.delayed_nesterov = 2;
  o.dynamic_local_updates = true;
  return o;
}

// async_local_sgd's cut is async's, anywhere in a round: with one worker a run stopped mid-round
// (17 steps are 5 rounds of 3 and 2 steps) holds the replica, the anchor, the outer momentum, the
// delayed Nesterov sum and the round's position, and resumes bitwise.
TEST(Resume, AsyncLocalSgdOneWorkerStoppedMidRoundResumesBitwise) {
  const TrainerOptions options = AsyncLocalSgdOptions(1);
  auto reference = TrainGuarded(options, "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();
  TrainerOptions o = options;
  o.checkpoint_dir = TempDir("async_local_sgd_one");
  auto stopped = RunAndStop(o, 16);  // step 16 is trained: the cut is before step 17
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  ASSERT_TRUE(checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->global_step, 17);
  const ModeState& state = (*checkpoint)->mode_state;
  EXPECT_EQ(state.buffers.size(), 4u);  // replica, anchor, outer momentum, pushed sum
  ASSERT_EQ(state.counters.size(), 6u);
  EXPECT_EQ(state.counters[0], 5);  // pushes
  EXPECT_EQ(state.counters[2], 2);  // local steps since the pull: mid-round
  EXPECT_EQ((*checkpoint)->signature.delayed_nesterov, 2);
  EXPECT_TRUE((*checkpoint)->signature.dynamic_local_updates);

  TrainerOptions other = o;
  other.resume = true;
  other.delayed_nesterov = 3;
  auto refused = TrainGuarded(other, "another delayed_nesterov");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "cannot resume: --delayed_nesterov differs: the checkpoint has 2, this run 3;"),
            std::string::npos)
      << refused.status();

  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from_step, 17);
  EXPECT_EQ(resumed->steps, reference->steps);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise
}

// With several workers the cut is a consistent one (the updates applied, i.e. the local steps,
// equal the batches consumed; the pushes are the workers' own), and the resumed run trains every
// remaining batch once.
TEST(Resume, AsyncLocalSgdManyWorkersResumeFromAConsistentCut) {
  for (int workers : {2, 3}) {
    SCOPED_TRACE(workers);
    auto reference = TrainGuarded(AsyncLocalSgdOptions(workers), "reference");
    ASSERT_TRUE(reference.ok()) << reference.status();
    TrainerOptions o = AsyncLocalSgdOptions(workers);
    o.checkpoint_dir = TempDir("async_local_sgd_many");
    o.checkpoint_every_steps = 5;
    auto stopped = RunAndStop(o, 9);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
    ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
    int64_t consumed = 0;
    for (int64_t s : (*checkpoint)->next_step) consumed += s;
    EXPECT_EQ((*checkpoint)->global_step, consumed);
    const std::vector<int64_t>& c = (*checkpoint)->mode_state.counters;
    ASSERT_EQ(c.size(), 1u + 5 * workers);
    int64_t pushes = 0;
    for (int w = 0; w < workers; ++w) {
      // Each worker's pushes and local steps since its pull add up to its batches.
      const int64_t since_pull = c[1 + 5 * w + 1], own_pushes = c[1 + 5 * w + 4];
      EXPECT_LE(own_pushes * 1 + since_pull, (*checkpoint)->next_step[w]) << w;
      EXPECT_GE(own_pushes * 3 + since_pull, (*checkpoint)->next_step[w]) << w;
      pushes += own_pushes;
    }
    EXPECT_EQ(c[0], pushes);

    o.resume = true;
    auto resumed = TrainGuarded(o, "resumed");
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->steps, reference->steps);
    EXPECT_EQ(stopped->examples + resumed->examples, reference->examples);
  }
}

// backup without backup workers is sync: stopped and resumed, it is bitwise the uninterrupted
// run; with a backup worker (not deterministic) the cut still lines every worker up before one
// step, and the resumed run finishes every step.
TEST(Resume, BackupResumesBitwiseWithoutBackupWorkers) {
  for (int backup : {0, 1}) {
    SCOPED_TRACE(absl::StrFormat("backup_workers %d", backup));
    TrainerOptions o = Options(Mode::kBackup, backup == 0 ? 2 : 3);
    o.backup_workers = backup;
    auto reference = TrainGuarded(o, "reference");
    ASSERT_TRUE(reference.ok()) << reference.status();
    o.checkpoint_dir = TempDir(absl::StrFormat("backup_%d", backup));
    o.checkpoint_every_steps = 5;
    auto stopped = RunAndStop(o, 17);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    ASSERT_TRUE(stopped->stopped_early);
    auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
    ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
    // Every worker stands before the checkpoint's step: closed steps = the workers' positions.
    EXPECT_EQ((*checkpoint)->next_step,
              std::vector<int64_t>(o.num_workers, (*checkpoint)->global_step));
    EXPECT_EQ((*checkpoint)->global_step, stopped->steps);
    EXPECT_EQ((*checkpoint)->signature.backup_workers, backup);
    o.resume = true;
    auto resumed = TrainGuarded(o, "resumed");
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->resumed_from_step, stopped->steps);
    EXPECT_EQ(resumed->steps, reference->steps);
    if (backup == 0) {
      EXPECT_EQ(resumed->params, reference->params);  // bitwise
    }
  }
}

TEST(Resume, SspOneWorkerIsBitwise) {
  TrainerOptions o = Options(Mode::kSsp, 1);
  o.staleness_bound = 2;
  auto reference = TrainGuarded(o, "reference");
  ASSERT_TRUE(reference.ok()) << reference.status();
  o.checkpoint_dir = TempDir("ssp_one");
  auto stopped = RunAndStop(o, 33);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_TRUE(stopped->stopped_early);
  EXPECT_EQ(stopped->last_checkpoint_step, 34);
  o.resume = true;
  auto resumed = TrainGuarded(o, "resumed");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from_step, 34);
  EXPECT_EQ(resumed->params, reference->params);  // bitwise
}

// ssp with several workers: frequent cuts while workers wait on the bound (bound 0: at almost
// every step) neither hang nor tear: each checkpoint is a consistent cut (updates applied =
// batches consumed, clocks within the bound), and the resumed run trains every remaining batch
// exactly once.
TEST(Resume, SspManyWorkersCutWhileWaitingOnTheBoundAndResume) {
  for (int64_t bound : {0, 2}) {
    SCOPED_TRACE(absl::StrFormat("bound %d", bound));
    TrainerOptions o = Options(Mode::kSsp, 3);
    o.staleness_bound = bound;
    auto reference = TrainGuarded(o, "reference");
    ASSERT_TRUE(reference.ok()) << reference.status();
    o.checkpoint_dir = TempDir(absl::StrFormat("ssp_many_%d", bound));
    o.checkpoint_every_steps = 1;
    auto stopped = RunAndStop(o, 9);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    ASSERT_TRUE(stopped->stopped_early);
    auto checkpoint = ReadLatestCheckpoint(o.checkpoint_dir);
    ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
    const std::vector<int64_t>& next = (*checkpoint)->next_step;
    int64_t consumed = 0;
    for (int64_t s : next) consumed += s;
    EXPECT_EQ((*checkpoint)->global_step, consumed);
    EXPECT_EQ((*checkpoint)->global_step, stopped->steps);
    EXPECT_LE(
        *std::max_element(next.begin(), next.end()) - *std::min_element(next.begin(), next.end()),
        bound + 1);
    EXPECT_EQ((*checkpoint)->signature.staleness_bound, bound);
    o.resume = true;
    o.checkpoint_every_steps = 0;
    auto resumed = TrainGuarded(o, "resumed");
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->steps, reference->steps);
    EXPECT_EQ(stopped->examples + resumed->examples, reference->examples);
  }
}

// The option of the mode shaped the checkpoint's state: a resume with another value is refused,
// naming the option and both values.
TEST(Resume, AnotherModeOptionIsRefusedNamingBothValues) {
  struct Case {
    Mode mode;
    int workers;
    void (*written)(TrainerOptions&);
    void (*resumed)(TrainerOptions&);
    const char* expected;
  };
  const Case cases[] = {
      {Mode::kSsp, 2, [](TrainerOptions& t) { t.staleness_bound = 2; },
       [](TrainerOptions& t) { t.staleness_bound = 3; },
       "checkpoint.hwckpt: cannot resume: --staleness_bound differs: the checkpoint has 2, this "
       "run 3; the checkpoint's state was built with its value; resume with --staleness_bound=2 or "
       "use another --checkpoint_dir"},
      {Mode::kBackup, 3, [](TrainerOptions& t) { t.backup_workers = 0; },
       [](TrainerOptions& t) { t.backup_workers = 1; },
       "checkpoint.hwckpt: cannot resume: --backup_workers differs: the checkpoint has 0, this run "
       "1; the checkpoint's state was built with its value; resume with --backup_workers=0 or use "
       "another --checkpoint_dir"},
      {Mode::kLocalSgd, 2, [](TrainerOptions& t) { t.average_every = 3; },
       [](TrainerOptions& t) { t.average_every = 4; },
       "checkpoint.hwckpt: cannot resume: --average_every differs: the checkpoint has 3, this run "
       "4; the checkpoint's state was built with its value; resume with --average_every=3 or use "
       "another --checkpoint_dir"},
      {Mode::kAsyncLocalSgd, 2, [](TrainerOptions& t) { t.average_every = 3; },
       [](TrainerOptions& t) { t.average_every = 4; },
       "checkpoint.hwckpt: cannot resume: --average_every differs: the checkpoint has 3, this run "
       "4; the checkpoint's state was built with its value; resume with --average_every=3 or use "
       "another --checkpoint_dir"},
      {Mode::kAsyncLocalSgd, 2, [](TrainerOptions&) {},
       [](TrainerOptions& t) { t.dynamic_local_updates = true; },
       "checkpoint.hwckpt: cannot resume: --dynamic_local_updates differs: the checkpoint has "
       "false, this run true; the checkpoint's state was built with its value; resume with "
       "--dynamic_local_updates=false or use another --checkpoint_dir"},
      {Mode::kLocalSgd, 2,
       [](TrainerOptions& t) {
         t.average_every = 4;
         t.streaming.fragments = 2;
       },
       [](TrainerOptions& t) {
         t.average_every = 4;
         t.streaming.fragments = 4;
       },
       "checkpoint.hwckpt: cannot resume: --fragments differs: the checkpoint has 2, this run 4; "
       "the checkpoint's state was built with its value; resume with --fragments=2 or use "
       "another --checkpoint_dir"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ModeName(c.mode));
    TrainerOptions o = Options(c.mode, c.workers);
    o.checkpoint_dir = TempDir("mode_option");
    o.epochs = 1;
    c.written(o);
    ASSERT_TRUE(TrainGuarded(o, "writer").ok());
    o.epochs = 2;
    o.resume = true;
    c.resumed(o);
    auto result = TrainGuarded(o, c.expected);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos) << result.status();
  }
}

TEST(Resume, ForeignCheckpointsAreRefusedNamingTheField) {
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("foreign");
  o.epochs = 1;
  ASSERT_TRUE(TrainGuarded(o, "writer").ok());
  o.resume = true;
  struct Case {
    const char* expected;
    void (*change)(TrainerOptions&);
  };
  const Case cases[] = {
      {"worker count differs", [](TrainerOptions& t) { t.num_workers = 3; }},
      {"mode differs", [](TrainerOptions& t) { t.mode = Mode::kAsync; }},
      {"layers differ:", [](TrainerOptions& t) { t.model.hidden = {17}; }},
      {"model differs",
       [](TrainerOptions& t) { t.model = ModelSpec{.name = "logreg", .hidden = {}}; }},
      {"batch size differs", [](TrainerOptions& t) { t.batch_size = 11; }},
      {"seed differs", [](TrainerOptions& t) { t.seed = 12; }},
      {"checkpoint.hwckpt: cannot resume: --momentum differs: the checkpoint has 0.9, this run 0",
       [](TrainerOptions& t) { t.sgd.momentum = 0.0f; }},
      {"--momentum differs: the checkpoint has 0.9, this run 0.5",
       [](TrainerOptions& t) { t.sgd.momentum = 0.5f; }},
      {"--weight_decay differs: the checkpoint has 0.0001, this run 0.001",
       [](TrainerOptions& t) { t.sgd.weight_decay = 1e-3f; }},
      {"optimizer differs",
       [](TrainerOptions& t) {
         t.sgd.optimizer = OptimizerKind::kAdam;
         t.sgd.momentum = 0.0f;
       }},
  };
  for (const Case& c : cases) {
    TrainerOptions other = o;
    c.change(other);
    auto result = TrainGuarded(other, c.expected);
    ASSERT_FALSE(result.ok()) << c.expected;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos) << result.status();
  }
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Resume, AnExistingCheckpointIsNeverSilentlyReplaced) {
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("existing");
  o.epochs = 1;
  auto first = TrainGuarded(o, "writer");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string path = CheckpointPath(o.checkpoint_dir);
  const std::string good = FileBytes(path);

  // Without resume: refused before any step, naming the step and both ways on; file untouched.
  std::atomic<int> steps{0};
  TrainerOptions again = o;
  again.step_hook = [&](int, int64_t) {
    ++steps;
    return absl::OkStatus();
  };
  auto refused = TrainGuarded(again, "no resume");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find(absl::StrFormat(
                "TrainerOptions::checkpoint_dir=%s already holds a checkpoint at global step %d",
                o.checkpoint_dir, first->last_checkpoint_step)),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("TrainerOptions::resume"), std::string::npos);
  EXPECT_NE(refused.status().message().find("TrainerOptions::overwrite_checkpoint"),
            std::string::npos);
  EXPECT_EQ(steps.load(), 0);
  EXPECT_EQ(FileBytes(path), good);

  // A damaged checkpoint too: refused as damaged (it cannot be resumed either).
  std::string damaged = good;
  damaged[damaged.size() / 2] ^= 0x40;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << damaged;
  refused = TrainGuarded(again, "damaged");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find("already holds a damaged checkpoint ("),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("payload checksum"), std::string::npos);
  EXPECT_EQ(steps.load(), 0);
  EXPECT_EQ(FileBytes(path), damaged);

  // overwrite_checkpoint starts over and replaces it; together with resume it is refused.
  again.overwrite_checkpoint = true;
  again.resume = true;
  EXPECT_EQ(TrainGuarded(again, "both").status().code(), absl::StatusCode::kInvalidArgument);
  again.resume = false;
  auto replaced = TrainGuarded(again, "overwrite");
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(replaced->resumed_from_step, -1);
  EXPECT_EQ(replaced->params, first->params);  // same seed, trained afresh
  EXPECT_EQ(FileBytes(path), good);            // and written again at the end
}

TEST(Resume, AnUnusableCheckpointDirFailsBeforeAnyStep) {
  const std::string file = TempDir("ckpt_is_a_file");
  std::ofstream(file) << "x";
  for (const std::string& dir : {file, std::string("/proc/x")}) {
    SCOPED_TRACE(dir);
    TrainerOptions o = Options(Mode::kAsync, 2);
    o.checkpoint_dir = dir;
    std::atomic<int> steps{0};
    o.step_hook = [&](int, int64_t) {
      ++steps;
      return absl::OkStatus();
    };
    auto result = TrainGuarded(o, "bad dir");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
    EXPECT_NE(result.status().message().find("TrainerOptions::checkpoint_dir=" + dir),
              std::string::npos)
        << result.status();
    EXPECT_EQ(steps.load(), 0);
  }
}

// Output paths that the run could not write at its first save, or that it would destroy: each
// fails before any step (a log, unlike a checkpoint, is opened only after the data is loaded).
TEST(Resume, OutputPathsThatCannotBeWrittenFailBeforeAnyStep) {
  const std::string dir = TempDir("outputs");
  std::filesystem::create_directories(dir);
  struct Case {
    std::string checkpoint_dir, log_path;
    bool overwrite_checkpoint;
    absl::StatusCode code;
    std::string part;
  };
  std::filesystem::create_directories(dir + "/dir_ckpt/checkpoint.hwckpt");
  std::filesystem::create_symlink(dir + "/b/checkpoint.hwckpt", dir + "/link_to_b_checkpoint");
  const Case cases[] = {
      {dir + "/a", dir + "/a/checkpoint.hwckpt", false, absl::StatusCode::kInvalidArgument,
       "TrainerOptions::log_path=" + dir +
           "/a/checkpoint.hwckpt is the same file as TrainerOptions::checkpoint_dir=" + dir +
           "/a (its file " + dir +
           "/a/checkpoint.hwckpt); give TrainerOptions::log_path another "
           "path"},
      {dir + "/a", dir + "/a/../a/checkpoint.hwckpt", false, absl::StatusCode::kInvalidArgument,
       "is the same file as TrainerOptions::checkpoint_dir"},
      // A symlink to where the checkpoint will be, before there is one.
      {dir + "/b", dir + "/link_to_b_checkpoint", false, absl::StatusCode::kInvalidArgument,
       "is the same file as TrainerOptions::checkpoint_dir"},
      {dir + "/dir_ckpt", "", true, absl::StatusCode::kFailedPrecondition,
       "checkpoint.hwckpt is not a regular file"},
      {"", dir + "/missing/log.csv", false, absl::StatusCode::kInvalidArgument,
       "does not exist; create it first"},
      {"", dir, false, absl::StatusCode::kInvalidArgument, "is a directory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.checkpoint_dir + " " + c.log_path);
    TrainerOptions o = Options(Mode::kAsync, 2);
    o.checkpoint_dir = c.checkpoint_dir;
    o.log_path = c.log_path;
    o.overwrite_checkpoint = c.overwrite_checkpoint;
    std::atomic<int> steps{0};
    o.step_hook = [&](int, int64_t) {
      ++steps;
      return absl::OkStatus();
    };
    auto result = TrainGuarded(o, "bad output");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), c.code) << result.status();
    EXPECT_NE(result.status().message().find(c.part), std::string::npos) << result.status();
    EXPECT_EQ(steps.load(), 0);
  }
}

// A stop before the first step saves nothing: with overwrite_checkpoint (or a fresh directory)
// an untrained snapshot would otherwise replace a checkpoint that holds training.
TEST(Resume, AStopBeforeTheFirstStepNeverReplacesACheckpoint) {
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions o = Options(mode, 2);
    o.checkpoint_dir = TempDir(absl::StrCat("early_stop_", ModeName(mode)));
    o.epochs = 1;
    auto first = TrainGuarded(o, "writer");
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_GT(first->steps, 0);
    o.overwrite_checkpoint = true;
    std::atomic<bool> stop{true};  // as if Ctrl-C came during start-up
    o.stop_requested = &stop;
    auto stopped = TrainGuarded(o, "stopped at once");
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    EXPECT_TRUE(stopped->stopped_early);
    EXPECT_EQ(stopped->steps, 0);
    EXPECT_EQ(stopped->last_checkpoint_step, -1);
    auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
    ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
    EXPECT_EQ((*kept)->global_step, first->steps);
  }
}

// Resuming a run that has trained all its epochs trains nothing: an error that says to raise
// epochs, not an exit 0 with a zero-step "result".
TEST(Resume, AFinishedRunIsNotResumedWithNothingToTrain) {
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("finished");
  o.epochs = 2;
  ASSERT_TRUE(TrainGuarded(o, "two epochs").ok());
  o.resume = true;
  for (int epochs : {1, 2}) {
    o.epochs = epochs;
    auto result = TrainGuarded(o, "nothing left");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    EXPECT_NE(result.status().message().find("nothing is left to train"), std::string::npos)
        << result.status();
    // The real position, and what epochs must be.
    EXPECT_NE(result.status().message().find("is at epoch 2.00 (global step"), std::string::npos)
        << result.status();
    EXPECT_NE(result.status().message().find("must be larger (at least 3)"), std::string::npos)
        << result.status();
  }
}

TEST(Resume, AnotherDatasetIsRefusedNamingBoth) {
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("other_dataset");
  o.epochs = 1;
  ASSERT_TRUE(TrainGuarded(o, "writer").ok());
  o.resume = true;
  // Same shape, classes and size: only the dataset tells them apart.
  Dataset other = testing::SyntheticDataset(203, 12, 4, 6);
  other.name = "other";
  Dataset same_name = other;
  same_name.name = Data().name;
  for (const Dataset* d : {&other, &same_name}) {
    auto result =
        testing::WithWatchdog(kWatchdogS, "other data", [&] { return Train(o, *d, Dataset()); });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    EXPECT_NE(result.status().message().find(absl::StrFormat(
                  "dataset differs: the checkpoint has %s (fingerprint 0x", Data().name)),
              std::string::npos)
        << result.status();
    EXPECT_NE(
        result.status().message().find(absl::StrFormat("this run %s (fingerprint 0x", d->name)),
        std::string::npos)
        << result.status();
  }
  // The same data resumes (with an epoch left to train: a finished run has nothing to resume).
  o.epochs = 2;
  EXPECT_TRUE(TrainGuarded(o, "same data").ok());
}

// Adam end to end, independent of the optimizer's own tests: a logreg run with Adam (one
// full-batch step per epoch) resumed from its step-1 checkpoint continues as a float64
// reference of the softmax cross-entropy gradient and Adam with bias correction at steps 2, 3,
// 4 would. A wrong or reset step count (bias correction 1 - beta^t) is off by far more.
TEST(Resume, AdamContinuesAsTheFloat64Reference) {
  const Dataset& data = Data();
  const int64_t n = data.size(), d = data.feature_dim(), k = data.num_classes;
  TrainerOptions o = Options(Mode::kAsync, 1);
  o.checkpoint_dir = TempDir("adam_reference");
  o.model = ModelSpec{.name = "logreg", .hidden = {}};
  o.batch_size = n;
  o.epochs = 1;
  o.lr = LrSchedule{.base_lr = 0.05f};
  o.sgd.optimizer = OptimizerKind::kAdam;
  o.sgd.momentum = 0.0f;
  o.sgd.weight_decay = 0.0f;
  ASSERT_TRUE(TrainGuarded(o, "adam step 1").ok());
  auto first = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status();
  const Checkpoint& c = **first;
  ASSERT_EQ(c.optimizer_steps, std::vector<uint64_t>{1});
  ASSERT_EQ(c.optimizer_state.size(), 2u);                      // m, v
  ASSERT_EQ(static_cast<int64_t>(c.params.size()), d * k + k);  // W [D, K] then b [K]
  std::vector<double> x(c.params.begin(), c.params.end());
  std::vector<double> m(c.optimizer_state[0].begin(), c.optimizer_state[0].end());
  std::vector<double> v(c.optimizer_state[1].begin(), c.optimizer_state[1].end());
  constexpr double kLr = 0.05, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  for (int t = 2; t <= 4; ++t) {
    std::vector<double> g(x.size(), 0.0);
    for (int64_t e = 0; e < n; ++e) {
      const float* f = data.features.data() + e * d;
      std::vector<double> z(k);
      for (int64_t j = 0; j < k; ++j) {
        z[j] = x[d * k + j];
        for (int64_t i = 0; i < d; ++i) z[j] += f[i] * x[i * k + j];
      }
      const double top = *std::max_element(z.begin(), z.end());
      double sum = 0.0;
      for (double& zj : z) sum += (zj = std::exp(zj - top));
      for (int64_t j = 0; j < k; ++j) {
        const double dz = (z[j] / sum - (j == data.labels[e] ? 1.0 : 0.0)) / n;
        for (int64_t i = 0; i < d; ++i) g[i * k + j] += f[i] * dz;
        g[d * k + j] += dz;
      }
    }
    for (size_t i = 0; i < x.size(); ++i) {
      m[i] = kBeta1 * m[i] + (1 - kBeta1) * g[i];
      v[i] = kBeta2 * v[i] + (1 - kBeta2) * g[i] * g[i];
      const double m_hat = m[i] / (1 - std::pow(kBeta1, t));
      const double v_hat = v[i] / (1 - std::pow(kBeta2, t));
      x[i] -= kLr * m_hat / (std::sqrt(v_hat) + kEps);
    }
  }
  o.resume = true;
  o.epochs = 4;
  auto rest = TrainGuarded(o, "adam steps 2-4");
  ASSERT_TRUE(rest.ok()) << rest.status();
  ASSERT_EQ(rest->steps, 4);
  double moved = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(rest->params[i], x[i], 1e-5 + 1e-4 * std::abs(x[i])) << "parameter " << i;
    moved = std::max(moved, std::abs(x[i] - c.params[i]));
  }
  EXPECT_GT(moved, 0.05);  // about lr per step: the comparison is not vacuous
}

// Shared Adam end to end: with three workers updating one Adam state, the step count its bias
// correction uses (saved in the checkpoint) is every worker's updates, the run's global step,
// not one worker's share.
TEST(Resume, SharedAdamStepCountIsEveryWorkersUpdates) {
  TrainerOptions o = Options(Mode::kAsync, 3);
  o.checkpoint_dir = TempDir("shared_adam");
  o.epochs = 2;
  o.lr = LrSchedule{.base_lr = 0.005f};
  o.sgd.optimizer = OptimizerKind::kAdam;
  o.sgd.momentum = 0.0f;
  o.sgd.shared_optimizer_state = true;
  auto result = TrainGuarded(o, "shared adam");
  ASSERT_TRUE(result.ok()) << result.status();
  auto kept = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
  // 203 examples in shards of 68, 68 and 67, batches of 10: 7 steps per worker per epoch.
  EXPECT_EQ(result->steps, 2 * 3 * 7);
  EXPECT_EQ((*kept)->global_step, result->steps);
  EXPECT_EQ((*kept)->optimizer_steps, std::vector<uint64_t>{static_cast<uint64_t>(result->steps)});
  EXPECT_EQ((*kept)->optimizer_state.size(), 2u);  // one m and one v for all workers
}

// The fingerprint covers the labels as well as the examples: the same examples relabelled (one
// label changed) are another training set.
TEST(Resume, ARelabelledCopyOfTheTrainingSetIsRefused) {
  TrainerOptions o = Options(Mode::kAsync, 1);
  o.checkpoint_dir = TempDir("relabelled");
  o.epochs = 1;
  ASSERT_TRUE(TrainGuarded(o, "writer").ok());
  Dataset relabelled = Data();
  relabelled.labels[0] = (relabelled.labels[0] + 1) % static_cast<int32_t>(Data().num_classes);
  o.resume = true;
  o.epochs = 2;
  auto result = testing::WithWatchdog(kWatchdogS, "relabelled",
                                      [&] { return Train(o, relabelled, Dataset()); });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      result.status().message(),
      absl::StrFormat("%s: cannot resume: dataset differs: the checkpoint has %s "
                      "(fingerprint 0x%08x), this run %s (fingerprint 0x%08x); resume on "
                      "the dataset the checkpoint was trained on, or use another "
                      "--checkpoint_dir",
                      CheckpointPath(o.checkpoint_dir), Data().name, DatasetFingerprint(Data()),
                      Data().name, DatasetFingerprint(relabelled)));
  EXPECT_NE(DatasetFingerprint(relabelled), DatasetFingerprint(Data()));
}

TEST(Resume, AVersion1CheckpointResumesWithAWarningAndIsMigrated) {
  auto reference = TrainGuarded(Options(Mode::kSync, 2), "reference");
  ASSERT_TRUE(reference.ok());
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("version1");
  ASSERT_TRUE(RunAndStop(o, 21).ok());
  // Rewrite it as the previous release would have: format version 1, no dataset.
  auto current = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(current.ok() && current->has_value());
  Checkpoint old = **current;
  old.format_version = 1;
  old.signature.dataset.reset();
  ASSERT_TRUE(WriteCheckpoint(o.checkpoint_dir, old).ok());

  o.resume = true;
  ::testing::internal::CaptureStderr();
  auto resumed = TrainGuarded(o, "resumed from version 1");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from_step, old.global_step);
  EXPECT_EQ(resumed->params, reference->params);
  EXPECT_NE(err.find("warning: " + CheckpointPath(o.checkpoint_dir) +
                     " (format version 1) does not record its dataset"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  auto migrated = ReadLatestCheckpoint(o.checkpoint_dir);
  ASSERT_TRUE(migrated.ok() && migrated->has_value());
  EXPECT_EQ((*migrated)->format_version, kCheckpointVersion);
  EXPECT_EQ((*migrated)->signature.dataset, (*current)->signature.dataset);
}

TEST(Resume, NoCheckpointYetStartsAfresh) {
  TrainerOptions o = Options(Mode::kSync, 2);
  o.checkpoint_dir = TempDir("fresh");
  o.resume = true;
  auto result = TrainGuarded(o, "fresh");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->resumed_from_step, -1);
  auto reference = TrainGuarded(Options(Mode::kSync, 2), "reference");
  EXPECT_EQ(result->params, reference->params);
}

TEST(Resume, CheckpointOptionsAreValidated) {
  TrainerOptions o = Options(Mode::kSync, 1);
  o.resume = true;  // without a directory
  EXPECT_EQ(ValidateOptions(o).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ValidateOptions(o).message().find("TrainerOptions::checkpoint_dir"), std::string::npos);
  o = Options(Mode::kSync, 1);
  o.checkpoint_dir = "/tmp/x";
  o.checkpoint_every_steps = -1;
  EXPECT_NE(ValidateOptions(o).message().find("TrainerOptions::checkpoint_every_steps=-1"),
            std::string::npos);
  o.checkpoint_every_steps = 0;
  o.checkpoint_every_seconds = -2;
  EXPECT_NE(ValidateOptions(o).message().find("TrainerOptions::checkpoint_every_seconds=-2"),
            std::string::npos);
}

}  // namespace
}  // namespace hogwild
