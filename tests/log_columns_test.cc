// The convergence log's communication columns (docs/convergence_log.md): exchanges,
// bytes_per_worker, outer_step_norm and dropped. Against hand cases and float64 references on the
// policies (local_sgd's averaging and DiLoCo's outer step, Streaming DiLoCo's fragment exchanges,
// async_local_sgd's pushes), real runs (sync: one exchange of [P] floats per step; local_sgd:
// ceil(steps / H); backup: the dropped column is TrainResult::dropped; async: none), the CSV and
// JSON Lines forms, the summaries, and the simulator against the real trainer on sync, local_sgd
// and Streaming DiLoCo.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sync/async_local_sgd.h"
#include "sync/local_sgd.h"
#include "sync/parameter_store.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/metrics/convergence_log.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

constexpr double kWatchdogS = 20.0;
constexpr int64_t kFloat = 4;  // bytes

std::string TempPath(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path path = std::filesystem::path(base != nullptr ? base : "/tmp") / name;
  std::filesystem::remove_all(path);
  return path.string();
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ||after - before||_2 in float64: the independent reference of outer_step_norm.
double Norm(const std::vector<float>& after, const std::vector<float>& before) {
  double squares = 0.0;
  for (size_t i = 0; i < after.size(); ++i) {
    squares += std::pow(static_cast<double>(after[i]) - static_cast<double>(before[i]), 2);
  }
  return std::sqrt(squares);
}

std::vector<float> Params(const UpdatePolicy& policy) {
  std::vector<float> out(static_cast<size_t>(policy.num_params()));
  EXPECT_TRUE(policy.ReadParams(absl::MakeSpan(out)).ok());
  return out;
}

// One worker's step with gradient `grad`.
void Step(UpdatePolicy& policy, int worker, const std::vector<float>& grad, float lr) {
  ASSERT_TRUE(policy.BeginStep(worker).ok());
  ASSERT_TRUE(
      policy.FinishStep(worker, DeviceSpan<const float>(grad.data(), grad.size()), lr).ok());
}

// local_sgd_test's two-worker hand case: replicas {0, 1.5} and {2, 0} average to {1, 0.75} from
// the store {1, 2}: one exchange of each worker's [2] replica, and the outer step's norm is
// ||{0, -1.25}|| = 1.25. Nothing before the round ends.
TEST(LogColumns, LocalSgdCountsAnAveragingAndItsNormByHand) {
  ParameterStore store(2);
  store.unsafe_values()[0] = 1.0f;
  store.unsafe_values()[1] = 2.0f;
  LocalSgd policy(&store, 2, SgdOptions{}, /*average_every=*/2);
  const std::vector<std::vector<float>> grads = {{0.5f, 0.25f}, {-0.5f, 1.0f}};
  std::vector<CommunicationStats> mid(2);
  auto run = [&](int w) {
    Step(policy, w, grads[w], 1.0f);
    mid[w] = policy.communication();
    Step(policy, w, grads[w], 1.0f);
  };
  testing::WithWatchdog(kWatchdogS, "two replicas", [&] {
    std::thread a(run, 0), b(run, 1);
    a.join();
    b.join();
    return 0;
  });
  for (const CommunicationStats& c : mid) {
    EXPECT_EQ(c.exchanges, 0);
    EXPECT_EQ(c.bytes_sent, 0);
    EXPECT_FALSE(c.last_outer_step_norm.has_value());
  }
  const CommunicationStats c = policy.communication();
  EXPECT_EQ(c.exchanges, 1);
  EXPECT_EQ(c.bytes_sent, 2 * 2 * kFloat);
  EXPECT_EQ(c.bytes_per_worker, 2 * kFloat);
  ASSERT_TRUE(c.last_outer_step_norm.has_value());
  EXPECT_EQ(*c.last_outer_step_norm, 1.25);
}

// One worker with momentum and DiLoCo's outer optimizer, H = 3, 7 steps and the end of the
// data: exchanges at steps 3, 6 and the last, shorter round (ceil(7 / 3) = 3), each the float64
// norm of the store's change across it; the parameters are those of the same run's policy
// without anyone reading the columns (computing the norm changes no bit).
TEST(LogColumns, LocalSgdNormIsTheFloat64NormOfEachOuterStep) {
  const int64_t p = 5;
  const std::vector<float> initial = {0.3f, -1.2f, 2.5f, 0.01f, -0.7f};
  ParameterStore store(p);
  std::copy(initial.begin(), initial.end(), store.unsafe_values().begin());
  const OuterOptimizer outer{.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  LocalSgd policy(&store, 1, SgdOptions{.momentum = 0.5f}, /*average_every=*/3, outer);
  std::vector<float> before = Params(policy);
  int64_t exchanges = 0;
  for (int64_t step = 1; step <= 7; ++step) {
    std::vector<float> grad(p);
    for (int64_t i = 0; i < p; ++i)
      grad[i] = 0.1f * static_cast<float>((step * 7 + i * 3) % 5) - 0.2f;
    Step(policy, 0, grad, 0.05f);
    if (step % 3 == 0) {
      ++exchanges;
      const std::vector<float> after = Params(policy);
      const CommunicationStats c = policy.communication();
      EXPECT_EQ(c.exchanges, exchanges);
      ASSERT_TRUE(c.last_outer_step_norm.has_value());
      EXPECT_DOUBLE_EQ(*c.last_outer_step_norm, Norm(after, before)) << "step " << step;
      EXPECT_GT(*c.last_outer_step_norm, 0.0);
      before = after;
    }
  }
  ASSERT_TRUE(policy.WorkerDone(0).ok());
  const std::vector<float> after = Params(policy);
  const CommunicationStats c = policy.communication();
  EXPECT_EQ(c.exchanges, 3);
  EXPECT_EQ(c.bytes_per_worker, 3 * p * kFloat);
  EXPECT_DOUBLE_EQ(*c.last_outer_step_norm, Norm(after, before));
}

// Streaming DiLoCo with F = 2 fragments of [2] floats, H = 2, 5 steps of one worker: fragment 0
// is exchanged at steps 2 and 4, fragment 1 at 1, 3 and 5, and the end of the data exchanges
// fragment 0 once more: 6 exchanges of 2 floats each.
TEST(LogColumns, StreamingCountsEveryFragmentExchange) {
  ParameterStore store(4);
  LocalSgd policy(&store, 1, SgdOptions{}, /*average_every=*/2, OuterOptimizer{},
                  StreamingOptions{.fragments = 2});
  const std::vector<float> grad = {1.0f, -1.0f, 0.5f, 2.0f};
  std::vector<float> before = Params(policy);
  for (int step = 1; step <= 5; ++step) {
    Step(policy, 0, grad, 0.1f);
    const std::vector<float> after = Params(policy);
    const CommunicationStats c = policy.communication();
    EXPECT_EQ(c.exchanges, step) << "step " << step;
    // Plain averaging of one replica: the fragment becomes the replica's.
    EXPECT_DOUBLE_EQ(*c.last_outer_step_norm, Norm(after, before)) << "step " << step;
    before = after;
  }
  ASSERT_TRUE(policy.WorkerDone(0).ok());
  const CommunicationStats c = policy.communication();
  EXPECT_EQ(c.exchanges, 6);
  EXPECT_EQ(c.bytes_per_worker, 6 * 2 * kFloat);
  EXPECT_DOUBLE_EQ(*c.last_outer_step_norm, Norm(Params(policy), before));
}

// async_local_sgd: an exchange per push (num_pushes), each of one worker's [P] pseudo-gradient,
// so bytes_per_worker = pushes x P x 4 / W; with one worker, each push's norm is the float64
// norm of theta's change across it.
TEST(LogColumns, AsyncLocalSgdCountsItsPushes) {
  const int64_t p = 3;
  {
    ParameterStore store(p);
    const OuterOptimizer outer{.lr = 0.8f, .momentum = 0.5f};
    AsyncLocalSgd policy(&store, 1, SgdOptions{},
                         AsyncLocalSgdOptions{.average_every = 2, .outer = outer});
    std::vector<float> before = Params(policy);
    for (int step = 1; step <= 5; ++step) {
      Step(policy, 0, {0.5f, -0.25f * step, 1.0f}, 0.1f);
      if (step % 2 == 0) {
        const std::vector<float> after = Params(policy);
        EXPECT_DOUBLE_EQ(*policy.communication().last_outer_step_norm, Norm(after, before));
        before = after;
      }
    }
    ASSERT_TRUE(policy.WorkerDone(0).ok());  // the last, one-step round
    const CommunicationStats c = policy.communication();
    EXPECT_EQ(policy.num_pushes(), 3);
    EXPECT_EQ(c.exchanges, 3);
    EXPECT_EQ(c.bytes_per_worker, 3 * p * kFloat);
    EXPECT_DOUBLE_EQ(*c.last_outer_step_norm, Norm(Params(policy), before));
  }
  // Three workers on threads, 7 steps each, H = 2: 4 pushes each (3 rounds and the last step).
  ParameterStore store(p);
  AsyncLocalSgd policy(&store, 3, SgdOptions{}, AsyncLocalSgdOptions{.average_every = 2});
  auto run = [&](int w) {
    for (int step = 0; step < 7; ++step) Step(policy, w, {0.1f * w, 0.2f, -0.3f}, 0.1f);
    ASSERT_TRUE(policy.WorkerDone(w).ok());
  };
  testing::WithWatchdog(kWatchdogS, "three workers", [&] {
    std::thread a(run, 0), b(run, 1), c(run, 2);
    a.join();
    b.join();
    c.join();
    return 0;
  });
  const CommunicationStats c = policy.communication();
  EXPECT_EQ(policy.num_pushes(), 12);
  EXPECT_EQ(c.exchanges, policy.num_pushes());
  EXPECT_EQ(c.bytes_sent, 12 * p * kFloat);
  EXPECT_DOUBLE_EQ(c.bytes_per_worker, 12.0 * p * kFloat / 3);
}

// A real run's rows, as the sink gets them (the log's rows, in order).
struct LoggedRun {
  TrainResult result;
  std::vector<LogRow> rows;
};

TrainerOptions Options(Mode mode, int workers) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = workers;
  o.batch_size = 8;
  o.epochs = 2;
  o.seed = 7;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.lr = LrSchedule{.base_lr = 0.05f};
  o.sgd = SgdOptions{.momentum = 0.9f};
  o.eval_every_epochs = 0;
  o.eval_every_steps = 0;
  o.log_every_steps = 3;
  return o;
}

LoggedRun TrainLogged(TrainerOptions options, const Dataset& train, const Dataset& test) {
  LoggedRun run;
  std::mutex mu;
  options.log_row_sink = [&](const LogRow& row) {
    std::lock_guard<std::mutex> lock(mu);
    run.rows.push_back(row);
    return absl::OkStatus();
  };
  auto result = hogwild::Train(options, train, test);
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) run.result = *std::move(result);
  return run;
}

// Counters never decrease down the log.
void ExpectCumulative(const std::vector<LogRow>& rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GE(rows[i].exchanges, rows[i - 1].exchanges) << "row " << i;
    EXPECT_GE(rows[i].bytes_per_worker, rows[i - 1].bytes_per_worker) << "row " << i;
    EXPECT_GE(rows[i].dropped, rows[i - 1].dropped) << "row " << i;
  }
}

TEST(LogColumns, SyncSendsEveryWorkersGradientOncePerStep) {
  const Dataset train = testing::SyntheticDataset(200, 6, 3, 1);
  const Dataset test = testing::SyntheticDataset(40, 6, 3, 2);
  const LoggedRun run = TrainLogged(Options(Mode::kSync, 3), train, test);
  ASSERT_FALSE(run.rows.empty());
  const int64_t p = static_cast<int64_t>(run.result.params.size());
  const int64_t steps = run.result.steps;
  EXPECT_EQ(steps, 2 * 25);
  EXPECT_EQ(run.result.exchanges, steps);
  EXPECT_EQ(run.result.bytes_per_worker, steps * p * kFloat);
  const LogRow& last = run.rows.back();
  EXPECT_TRUE(last.eval);
  EXPECT_EQ(last.exchanges, steps);
  EXPECT_EQ(last.bytes_per_worker, steps * p * kFloat);
  for (const LogRow& row : run.rows) {
    EXPECT_EQ(row.exchanges, row.step) << "sync: one all-reduce per global step";
    EXPECT_FALSE(row.outer_step_norm.has_value());
    EXPECT_EQ(row.dropped, 0);
  }
  ExpectCumulative(run.rows);
  EXPECT_NE(FormatSummary(run.result).find(absl::StrCat(" | ", steps, " exchanges, ")),
            std::string::npos)
      << FormatSummary(run.result);
}

TEST(LogColumns, LocalSgdExchangesOncePerRoundWithItsNorm) {
  const Dataset train = testing::SyntheticDataset(200, 6, 3, 1);
  TrainerOptions options = Options(Mode::kLocalSgd, 2);
  options.average_every = 4;  // 50 steps: 12 rounds and a last one of 2 steps
  const LoggedRun run = TrainLogged(options, train, Dataset());
  ASSERT_FALSE(run.rows.empty());
  const int64_t p = static_cast<int64_t>(run.result.params.size());
  EXPECT_EQ(run.result.steps, 50);
  EXPECT_EQ(run.result.exchanges, 13);
  EXPECT_EQ(run.result.bytes_per_worker, 13 * p * kFloat);
  const LogRow& last = run.rows.back();
  EXPECT_EQ(last.exchanges, 13);
  ASSERT_TRUE(last.outer_step_norm.has_value());
  EXPECT_GT(*last.outer_step_norm, 0.0);
  for (const LogRow& row : run.rows) {
    EXPECT_LE(row.exchanges, 13);
    EXPECT_EQ(row.outer_step_norm.has_value(), row.exchanges > 0);
    EXPECT_EQ(row.bytes_per_worker, row.exchanges * p * kFloat);
  }
  ExpectCumulative(run.rows);
}

TEST(LogColumns, SharedMemoryModesExchangeNothing) {
  const Dataset train = testing::SyntheticDataset(200, 6, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kLocked}) {
    const LoggedRun run = TrainLogged(Options(mode, 2), train, Dataset());
    ASSERT_FALSE(run.rows.empty());
    EXPECT_EQ(run.result.exchanges, 0);
    for (const LogRow& row : run.rows) {
      EXPECT_EQ(row.exchanges, 0);
      EXPECT_EQ(row.bytes_per_worker, 0.0);
      EXPECT_FALSE(row.outer_step_norm.has_value());
    }
    EXPECT_EQ(FormatSummary(run.result).find("exchanges"), std::string::npos);
  }
}

// Backup with one backup worker and worker 2 sleeping before each step: its gradients arrive
// late and are dropped; the log's last dropped is the result's, and every worker sent a
// gradient for each step it took (used or dropped).
TEST(LogColumns, BackupsDroppedColumnIsTheResults) {
  const Dataset train = testing::SyntheticDataset(240, 6, 3, 1);
  TrainerOptions options = Options(Mode::kBackup, 3);
  options.backup_workers = 1;
  options.batch_size = 12;
  options.step_hook = [](int worker, int64_t) {
    if (worker == 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return absl::OkStatus();
  };
  const LoggedRun run = TrainLogged(options, train, Dataset());
  ASSERT_FALSE(run.rows.empty());
  EXPECT_GT(run.result.dropped, 0);
  EXPECT_EQ(run.rows.back().dropped, run.result.dropped);
  EXPECT_EQ(run.result.exchanges, run.result.steps);
  const int64_t p = static_cast<int64_t>(run.result.params.size());
  // Each step: 2 contributors; each dropped gradient: sent too.
  EXPECT_DOUBLE_EQ(
      run.result.bytes_per_worker,
      static_cast<double>((2 * run.result.steps + run.result.dropped) * p * kFloat) / 3);
  ExpectCumulative(run.rows);
}

// The four columns in both forms: counts as integers, bytes rounded to whole bytes, the norm
// empty (CSV) or null (JSON) when there is none.
TEST(LogColumns, CsvAndJsonLinesForms) {
  const std::string csv = TempPath("columns.csv");
  const std::string jsonl = TempPath("columns.jsonl");
  for (const std::string& path : {csv, jsonl}) {
    auto log = ConvergenceLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.status();
    LogRow row{.step = 4, .exchanges = 4, .bytes_per_worker = 1333.3333, .dropped = 2};
    ASSERT_TRUE((*log)->Write(row).ok());
    row.outer_step_norm = 0.125;
    ASSERT_TRUE((*log)->Write(row).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  const std::vector<std::string> c = Lines(csv);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(
      absl::EndsWith(c[0], ",eval_seconds,exchanges,bytes_per_worker,outer_step_norm,dropped"))
      << c[0];
  EXPECT_TRUE(absl::EndsWith(c[1], ",4,1333,,2")) << c[1];
  EXPECT_TRUE(absl::EndsWith(c[2], ",4,1333,0.125,2")) << c[2];
  const std::vector<std::string> j = Lines(jsonl);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_TRUE(absl::EndsWith(
      j[0], "\"exchanges\":4,\"bytes_per_worker\":1333,\"outer_step_norm\":null,\"dropped\":2}"))
      << j[0];
  EXPECT_TRUE(absl::EndsWith(
      j[1], "\"exchanges\":4,\"bytes_per_worker\":1333,\"outer_step_norm\":0.125,\"dropped\":2}"))
      << j[1];
}

TEST(LogColumns, SummaryPart) {
  EXPECT_EQ(FormatExchanges(0, 0.0), "");
  EXPECT_EQ(FormatExchanges(705, 4.5e6), " | 705 exchanges, 4.5 MB sent per worker");
  EXPECT_EQ(FormatExchanges(3, 48), " | 3 exchanges, 48 bytes sent per worker");
  EXPECT_EQ(FormatExchanges(3, 2500), " | 3 exchanges, 2.5 kB sent per worker");
  EXPECT_EQ(FormatExchanges(3, 3.25e9), " | 3 exchanges, 3.25 GB sent per worker");
}

// The last CSV row of `path` as column name -> text.
std::map<std::string, std::string> LastRow(const std::string& path) {
  const std::vector<std::string> lines = Lines(path);
  std::map<std::string, std::string> row;
  if (lines.size() < 2) return row;
  const std::vector<std::string> names = absl::StrSplit(lines.front(), ',');
  const std::vector<std::string> values = absl::StrSplit(lines.back(), ',');
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) row[names[i]] = values[i];
  return row;
}

// The simulator's columns are the real trainer's: sync, local_sgd (DiLoCo's outer optimizer)
// and Streaming DiLoCo (F = 2, an overlap of 1, 25 steps: the end of the data exchanges a
// fragment of its own).
TEST(LogColumns, SimulatedRunsLogTheRealColumns) {
  const Dataset train = testing::SyntheticDataset(200, 6, 3, 1);
  // With a test set both end with the final evaluation's row, at the last step.
  const Dataset test = testing::SyntheticDataset(40, 6, 3, 2);
  struct Case {
    const char* name;
    TrainerOptions options;
  };
  std::vector<Case> cases;
  cases.push_back({"sync", Options(Mode::kSync, 3)});
  TrainerOptions local = Options(Mode::kLocalSgd, 2);
  local.average_every = 4;
  local.outer = OuterOptimizer{.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  cases.push_back({"local_sgd", local});
  TrainerOptions streaming = Options(Mode::kLocalSgd, 2);
  streaming.epochs = 1;
  streaming.average_every = 4;
  streaming.streaming = StreamingOptions{.fragments = 2, .overlap_steps = 1};
  cases.push_back({"streaming", streaming});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TrainerOptions real = c.options;
    real.log_path = TempPath(absl::StrCat("real_", c.name, ".csv"));
    auto trained = hogwild::Train(real, train, test);
    ASSERT_TRUE(trained.ok()) << trained.status();
    SimOptions sim{.trainer = c.options};
    sim.trainer.log_path = TempPath(absl::StrCat("sim_", c.name, ".csv"));
    auto simulated = Simulate(sim, train, test);
    ASSERT_TRUE(simulated.ok()) << simulated.status();
    EXPECT_GT(trained->exchanges, 0);
    EXPECT_EQ(simulated->exchanges, trained->exchanges);
    EXPECT_EQ(simulated->bytes_per_worker, trained->bytes_per_worker);
    const std::map<std::string, std::string> r = LastRow(real.log_path);
    const std::map<std::string, std::string> s = LastRow(sim.trainer.log_path);
    ASSERT_FALSE(r.empty());
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s.at("step"), r.at("step"));
    EXPECT_EQ(s.at("exchanges"), r.at("exchanges"));
    EXPECT_EQ(s.at("exchanges"), absl::StrCat(trained->exchanges));
    EXPECT_EQ(s.at("bytes_per_worker"), r.at("bytes_per_worker"));
    EXPECT_EQ(s.at("dropped"), r.at("dropped"));
    if (c.options.mode == Mode::kSync) {
      EXPECT_EQ(r.at("outer_step_norm"), "");
      EXPECT_EQ(s.at("outer_step_norm"), "");
    } else {
      // The same parameters bitwise (tests/simulated_policies_test.cc); the norm's float64 sum
      // is associated by the workers' slices on threads, in one pass in the simulator.
      double real_norm = 0.0, sim_norm = 0.0;
      ASSERT_TRUE(absl::SimpleAtod(r.at("outer_step_norm"), &real_norm)) << r.at("outer_step_norm");
      ASSERT_TRUE(absl::SimpleAtod(s.at("outer_step_norm"), &sim_norm)) << s.at("outer_step_norm");
      EXPECT_GT(real_norm, 0.0);
      EXPECT_NEAR(sim_norm, real_norm, 1e-5 * real_norm);
    }
  }
}

// The policies the simulator runs for real (async, async_local_sgd) give the columns, and their
// counts outlive them: the last rows (the end's flush and final evaluation, written after the
// policy is gone) keep the totals. Backup's late parts are counted by the simulator itself.
TEST(LogColumns, SimulatedRealPoliciesKeepTheirCountsInTheLastRows) {
  const Dataset train = testing::SyntheticDataset(256, 6, 3, 9);
  const Dataset test = testing::SyntheticDataset(40, 6, 3, 2);
  // async_local_sgd: 3 workers, H = 4, one of them twice as slow.
  SimOptions local{.trainer = Options(Mode::kAsyncLocalSgd, 3)};
  local.trainer.average_every = 4;
  local.compute = {.step_time_s = 0.01, .stragglers = {{1, 2.0}}};
  local.trainer.log_path = TempPath("sim_async_local_sgd.csv");
  auto l = Simulate(local, train, test);
  ASSERT_TRUE(l.ok()) << l.status();
  std::map<std::string, std::string> last = LastRow(local.trainer.log_path);
  ASSERT_FALSE(last.empty());
  const int64_t p = static_cast<int64_t>(l->params.size());
  EXPECT_GT(l->exchanges, 0);
  EXPECT_EQ(last.at("exchanges"), absl::StrCat(l->exchanges));
  EXPECT_DOUBLE_EQ(l->bytes_per_worker, static_cast<double>(l->exchanges * p * kFloat) / 3);
  EXPECT_NE(last.at("outer_step_norm"), "");
  EXPECT_NE(FormatSimSummary(*l).find(absl::StrCat(" | ", l->exchanges, " exchanges, ")),
            std::string::npos)
      << FormatSimSummary(*l);

  // async with max_delay (simulator_test's strict bound): the dropped column is the result's.
  SimOptions async{.trainer = Options(Mode::kAsync, 8)};
  async.trainer.sgd = SgdOptions{.max_delay = 6};
  async.compute.step_time_s = 0.25;
  async.trainer.log_path = TempPath("sim_async.csv");
  auto a = Simulate(async, train, test);
  ASSERT_TRUE(a.ok()) << a.status();
  int64_t dropped = 0;
  for (int64_t d : a->dropped) dropped += d;
  EXPECT_GT(dropped, 0);
  last = LastRow(async.trainer.log_path);
  EXPECT_EQ(last.at("dropped"), absl::StrCat(dropped));
  EXPECT_EQ(last.at("exchanges"), "0");
  EXPECT_EQ(a->exchanges, 0);

  // backup with a persistent straggler: its late parts are dropped, and sent.
  SimOptions backup{.trainer = Options(Mode::kBackup, 4)};
  backup.trainer.backup_workers = 1;
  backup.compute = {.step_time_s = 0.01, .stragglers = {{2, 3.0}}};
  backup.trainer.log_path = TempPath("sim_backup.csv");
  auto b = Simulate(backup, train, test);
  ASSERT_TRUE(b.ok()) << b.status();
  dropped = 0;
  for (int64_t d : b->dropped) dropped += d;
  EXPECT_GT(dropped, 0);
  last = LastRow(backup.trainer.log_path);
  EXPECT_EQ(last.at("dropped"), absl::StrCat(dropped));
  EXPECT_EQ(b->exchanges, b->steps);
  EXPECT_DOUBLE_EQ(b->bytes_per_worker,
                   static_cast<double>((3 * b->steps + dropped) * p * kFloat) / 4);
}

}  // namespace
}  // namespace hogwild
