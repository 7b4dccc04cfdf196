// Evaluations off the worker thread (trainer/metrics/eval_runner.h): a sync run's log rows are
// the same, bitwise, whether its evaluations run inline on worker 0 or on the evaluator thread;
// the weight EMA's accuracy is in every periodic evaluation row; eval_seconds accumulates; an
// async run with evaluations slower than their period keeps a row per evaluation point, each
// before the next point; queued snapshots are evaluated in order, each with its row, and pending
// rows keep their place whatever order they finish in; and Cancel() stops a running evaluation
// within a chunk, closes the queued ones and releases a waiting worker.
#include "trainer/metrics/eval_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/metrics/evaluator.h"
#include "trainer/metrics/training_metrics.h"
#include "trainer/model/model.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

TrainerOptions EvaluatedRun(Mode mode, bool background) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = 2;
  o.batch_size = 8;
  o.epochs = 2;
  o.lr.base_lr = 0.05f;
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.eval_every_epochs = 0;
  o.eval_every_steps = 5;
  o.log_every_steps = 3;
  o.eval_in_background = background;
  return o;
}

struct Rows {
  std::mutex mu;
  std::vector<LogRow> rows;
};

absl::StatusOr<TrainResult> TrainLogged(TrainerOptions o, const Dataset& train, const Dataset& test,
                                        Rows& rows) {
  o.log_row_sink = [&rows](const LogRow& row) {
    std::lock_guard<std::mutex> lock(rows.mu);
    rows.rows.push_back(row);
    return absl::OkStatus();
  };
  return testing::WithWatchdog(60, "a logged run", [&] { return Train(o, train, test); });
}

TEST(EvalRunner, SyncLogRowsAreBitwiseTheSameInlineAndInTheBackground) {
  const Dataset train = testing::SyntheticDataset(800, 8, 3, 1);
  const Dataset test = testing::SyntheticDataset(300, 8, 3, 2);
  for (float ema_decay : {0.0f, 0.9f}) {
    SCOPED_TRACE(ema_decay);
    Rows inline_rows, background_rows;
    TrainerOptions inline_options = EvaluatedRun(Mode::kSync, false);
    TrainerOptions background_options = EvaluatedRun(Mode::kSync, true);
    inline_options.ema_decay = background_options.ema_decay = ema_decay;
    auto a = TrainLogged(inline_options, train, test, inline_rows);
    auto b = TrainLogged(background_options, train, test, background_rows);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(a->params, b->params);
    ASSERT_EQ(inline_rows.rows.size(), background_rows.rows.size());
    // Which of the two workers records a step first is a race in either mode, so a row's
    // examples_seen (and an eval row's train_loss, of the latest windows) may differ between any
    // two runs; the rest is compared per kind and worker, in order.
    auto split = [](const std::vector<LogRow>& rows, int worker) {
      std::vector<LogRow> out;
      for (const LogRow& r : rows) {
        if (r.worker == worker) out.push_back(r);
      }
      return out;
    };
    int evals = 0;
    for (int worker : {-1, 0, 1}) {
      SCOPED_TRACE(worker);
      const std::vector<LogRow> xs = split(inline_rows.rows, worker);
      const std::vector<LogRow> ys = split(background_rows.rows, worker);
      ASSERT_EQ(xs.size(), ys.size());
      EXPECT_FALSE(xs.empty());
      for (size_t i = 0; i < xs.size(); ++i) {
        SCOPED_TRACE(i);
        const LogRow& x = xs[i];
        const LogRow& y = ys[i];
        EXPECT_EQ(x.eval, y.eval);
        EXPECT_EQ(x.step, y.step);
        EXPECT_EQ(x.test_loss, y.test_loss);
        EXPECT_EQ(x.test_accuracy, y.test_accuracy);
        EXPECT_EQ(x.ema_test_accuracy, y.ema_test_accuracy);
        EXPECT_EQ(x.lr, y.lr);
        if (!x.eval) {
          EXPECT_EQ(x.train_loss, y.train_loss);
          continue;
        }
        ++evals;
        ASSERT_TRUE(x.test_accuracy.has_value());
        // The EMA column: on every evaluation row of a run with an EMA, on none without one.
        EXPECT_EQ(x.ema_test_accuracy.has_value(), ema_decay != 0.0f);
        if (x.ema_test_accuracy) {
          EXPECT_GE(*x.ema_test_accuracy, 0.0);
          EXPECT_LE(*x.ema_test_accuracy, 1.0);
        }
      }
    }
    // 800 examples / global batch 8 = 100 steps per epoch, 2 epochs, one every 5 steps.
    EXPECT_EQ(evals, 40);
    EXPECT_EQ(b->periodic_evals, 40);
    if (ema_decay != 0.0f) {
      // The last evaluation row is of the final parameters and their EMA.
      const std::vector<LogRow>& rows = background_rows.rows;
      auto last_eval =
          std::find_if(rows.rbegin(), rows.rend(), [](const LogRow& r) { return r.eval; });
      ASSERT_NE(last_eval, rows.rend());
      EXPECT_EQ(last_eval->step, b->steps);
      EXPECT_EQ(*last_eval->ema_test_accuracy, b->final_ema_test_accuracy);
    }
  }
}

TEST(EvalRunner, EvalSecondsAccumulateAndTheSummarySaysSo) {
  const Dataset train = testing::SyntheticDataset(800, 8, 3, 1);
  const Dataset test = testing::SyntheticDataset(2000, 8, 3, 2);
  for (bool background : {false, true}) {
    SCOPED_TRACE(background);
    Rows rows;
    auto result = TrainLogged(EvaluatedRun(Mode::kAsync, background), train, test, rows);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_GT(result->eval_seconds, 0.0);
    EXPECT_LT(result->eval_seconds, result->wall_time_s);
    double last = 0.0;
    for (const LogRow& row : rows.rows) {
      EXPECT_GE(row.eval_seconds, last) << "eval_seconds is cumulative";
      last = row.eval_seconds;
    }
    EXPECT_GT(last, 0.0);
    EXPECT_NE(FormatSummary(*result).find("periodic evaluations"), std::string::npos)
        << FormatSummary(*result);
  }
}

// The bug a tryout found: with 2 async workers and evaluations slower than their period, worker 0
// waited for the evaluation in flight while worker 1 moved the global step past the next points,
// which then had no row (or one taken far late). Every point must keep its row, taken before the
// next point is reached.
TEST(EvalRunner, AsyncRunsKeepARowPerEvaluationPointWhenEvaluationsAreSlowerThanThePeriod) {
  const Dataset train = testing::SyntheticDataset(800, 8, 3, 1);
  // 20000 test examples: one evaluation is tens of training periods of 10 tiny steps.
  const Dataset test = testing::SyntheticDataset(20000, 8, 3, 2);
  for (bool background : {true, false}) {
    SCOPED_TRACE(background);
    Rows rows;
    TrainerOptions o = EvaluatedRun(Mode::kAsync, background);
    o.log_every_steps = 1;
    o.eval_every_steps = 10;
    auto result = TrainLogged(o, train, test, rows);
    ASSERT_TRUE(result.ok()) << result.status();
    // 800 examples / batch 8 = 100 global steps per epoch, 2 epochs: points 10, 20, ..., 200.
    ASSERT_EQ(result->steps, 200);
    EXPECT_EQ(result->periodic_evals, 20);
    std::vector<int64_t> eval_steps;
    for (const LogRow& row : rows.rows) {
      if (row.eval) eval_steps.push_back(row.step);
    }
    // The row of point 200 is the final evaluation's too (not repeated).
    ASSERT_EQ(eval_steps.size(), 20u) << ::testing::PrintToString(eval_steps);
    for (int k = 1; k <= 20; ++k) {
      SCOPED_TRACE(k);
      EXPECT_GE(eval_steps[k - 1], 10 * k) << ::testing::PrintToString(eval_steps);
      EXPECT_LT(eval_steps[k - 1], 10 * (k + 1)) << ::testing::PrintToString(eval_steps);
    }
  }
}

// An evaluation long enough to cancel in the middle: a wide MLP over many examples.
class SlowEvaluation : public ::testing::Test {
 protected:
  void SetUp() override {
    test_ = testing::SyntheticDataset(20000, 32, 10, 3);
    auto model = Model::Create(
        ModelSpec{.name = "mlp", .hidden = {1024, 1024}, .input_shape = {32}, .num_classes = 10});
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    params_.resize(model_->num_params());
    model_->InitParams(1, absl::MakeSpan(params_));
    auto evaluator = Evaluator::Create(model_.get(), &test_, &backend_);
    ASSERT_TRUE(evaluator.ok()) << evaluator.status();
    evaluator_ = *std::move(evaluator);
  }

  Dataset test_;
  std::unique_ptr<Model> model_;
  std::vector<float> params_;
  CpuBackend backend_;
  std::unique_ptr<Evaluator> evaluator_;
  TrainingMetrics metrics_{1, 100, nullptr, 1};
};

TEST_F(SlowEvaluation, CancelStopsTheRunningEvaluationWithinAChunk) {
  const absl::Time start = absl::Now();
  ASSERT_TRUE(evaluator_->Evaluate(params_).ok());
  const absl::Duration full = absl::Now() - start;

  EvalRunner runner(evaluator_.get(), &metrics_, /*background=*/true);
  // A row recorded meanwhile is held back until the evaluation is closed.
  ASSERT_TRUE(runner.Submit(metrics_.BeginEval(1, 0.1f), params_, {}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const absl::Time cancelled_at = absl::Now();
  runner.Cancel();
  const absl::Status status =
      testing::WithWatchdog(30, "Finish after Cancel", [&] { return runner.Finish(); });
  const absl::Duration to_stop = absl::Now() - cancelled_at;
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  // 20 chunks of 1000 examples: stopping takes at most about one, far less than the whole pass.
  EXPECT_LT(to_stop, full / 3) << "full evaluation " << full << ", stop after cancel " << to_stop;
  EXPECT_FALSE(metrics_.Get().last_eval.has_value()) << "a cancelled evaluation logs no result";
}

TEST_F(SlowEvaluation, CancelReleasesAWorkerWaitingForTheEvaluationInFlight) {
  EvalRunner runner(evaluator_.get(), &metrics_, /*background=*/true);
  ASSERT_TRUE(runner.Submit(metrics_.BeginEval(1, 0.1f), params_, {}).ok());
  std::atomic<bool> released{false};
  absl::Status waited;
  std::thread worker([&] {
    waited = runner.WaitIdle();
    released = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  runner.Cancel();
  testing::WithWatchdog(30, "WaitIdle after Cancel", [&] {
    worker.join();
    return 0;
  });
  EXPECT_TRUE(released);
  EXPECT_EQ(waited.code(), absl::StatusCode::kCancelled) << waited;
  // A request after the cancellation is refused, and its row closed (not left holding rows).
  EXPECT_EQ(runner.Submit(metrics_.BeginEval(2, 0.1f), params_, {}).code(),
            absl::StatusCode::kCancelled);
}

TEST_F(SlowEvaluation, QueuedSnapshotsAreEvaluatedInOrderEachWithItsRow) {
  // A quarter of the test set: still far longer than three Submits, at a quarter of the time.
  const Dataset test = testing::SyntheticDataset(5000, 32, 10, 3);
  auto evaluator = Evaluator::Create(model_.get(), &test, &backend_);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  std::vector<LogRow> written;
  TrainingMetrics metrics(1, 100, nullptr, 1, [&written](const LogRow& row) {
    written.push_back(row);  // under the metrics' lock
    return absl::OkStatus();
  });
  // One evaluating, one queued: the third Submit waits for room, none is coalesced.
  EvalRunner runner(evaluator->get(), &metrics, /*background=*/true, /*max_queued=*/1);
  for (int64_t step = 1; step <= 3; ++step) {
    ASSERT_TRUE(metrics.RecordStep(0, 1, 0.5, 0, 0.1f, step).ok());
    ASSERT_TRUE(runner.Submit(metrics.BeginEval(step, 0.1f), params_, {}).ok());
  }
  EXPECT_GT(runner.wait_seconds(), 0.0) << "the third waited for the first to finish";
  ASSERT_TRUE(runner.Finish().ok());
  EXPECT_EQ(metrics.Get().evals, 3);
  EXPECT_EQ(metrics.last_eval_step(), 3);
  // Train row, its evaluation row, in the order of their instants, steps 1, 1, 2, 2, 3, 3.
  ASSERT_EQ(written.size(), 6u);
  for (size_t i = 0; i < written.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(written[i].eval, i % 2 == 1);
    EXPECT_EQ(written[i].step, static_cast<int64_t>(i / 2 + 1));
    if (written[i].eval) {
      EXPECT_TRUE(written[i].test_accuracy.has_value());
    }
  }
}

TEST_F(SlowEvaluation, CancelClosesTheQueuedSnapshotsUnevaluated) {
  std::vector<LogRow> written;
  TrainingMetrics metrics(1, 100, nullptr, 1, [&written](const LogRow& row) {
    written.push_back(row);
    return absl::OkStatus();
  });
  EvalRunner runner(evaluator_.get(), &metrics, /*background=*/true, /*max_queued=*/4);
  for (int64_t step = 1; step <= 3; ++step) {
    ASSERT_TRUE(runner.Submit(metrics.BeginEval(step, 0.1f), params_, {}).ok());
  }
  ASSERT_TRUE(metrics.RecordStep(0, 1, 0.5, 0, 0.1f, 3).ok());  // held behind them
  runner.Cancel();
  const absl::Status status =
      testing::WithWatchdog(30, "Finish after Cancel", [&] { return runner.Finish(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_EQ(metrics.Get().evals, 3) << "every pending row closed";
  // The held train row is written; the cancelled evaluations' rows are not.
  ASSERT_EQ(written.size(), 1u);
  EXPECT_FALSE(written[0].eval);
}

TEST(TrainingMetrics, PendingEvaluationsKeepTheirPlaceWhateverOrderTheyFinishIn) {
  std::vector<LogRow> written;
  TrainingMetrics metrics(1, 100, nullptr, 1, [&written](const LogRow& row) {
    written.push_back(row);
    return absl::OkStatus();
  });
  const TrainingMetrics::PendingEval a = metrics.BeginEval(1, 0.1f);
  ASSERT_TRUE(metrics.RecordStep(0, 1, 0.5, 0, 0.1f, 2).ok());
  const TrainingMetrics::PendingEval b = metrics.BeginEval(2, 0.1f);
  ASSERT_TRUE(metrics.RecordStep(0, 1, 0.5, 0, 0.1f, 3).ok());
  // b first: nothing can be written while a, before it, is pending.
  ASSERT_TRUE(metrics.FinishEval(b, EvalResult{.loss = 1.0, .accuracy = 0.25}).ok());
  EXPECT_TRUE(written.empty());
  ASSERT_TRUE(metrics.FinishEval(a, EvalResult{.loss = 2.0, .accuracy = 0.5}).ok());
  ASSERT_EQ(written.size(), 4u);
  EXPECT_TRUE(written[0].eval);
  EXPECT_EQ(written[0].step, 1);
  EXPECT_EQ(written[0].test_accuracy, 0.5);
  EXPECT_FALSE(written[1].eval);
  EXPECT_EQ(written[1].step, 2);
  EXPECT_TRUE(written[2].eval);
  EXPECT_EQ(written[2].step, 2);
  EXPECT_EQ(written[2].test_accuracy, 0.25);
  EXPECT_FALSE(written[3].eval);
  EXPECT_EQ(written[3].step, 3);
  EXPECT_EQ(metrics.last_eval_step(), 2);
  // A pending evaluation finished twice is a programmer error, not a second row.
  EXPECT_EQ(metrics.FinishEval(a, EvalResult{}).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(written.size(), 4u);
}

}  // namespace
}  // namespace hogwild
