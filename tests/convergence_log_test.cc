// The convergence log (trainer/metrics/convergence_log.h): write errors are never ignored (a
// full device, a file-size limit), a failing log stops the run naming the path and the OS
// reason, the rows written before the failure stay as whole rows; in a real async run with
// several workers, frequent evaluations and a row per step, `step` never goes backwards; and the
// row sink (TrainerOptions::log_row_sink) gets exactly the log's rows, one call at a time.
#include "trainer/metrics/convergence_log.h"

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "tests/watchdog.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const fs::path path = fs::path(base != nullptr ? base : "/tmp") / name;
  fs::remove_all(path);
  return path.string();
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "/dev/full" under a name ending in .jsonl: JSON Lines has no header, so Open() succeeds and
// the first row is the first write.
std::string DevFullJsonl() {
  const std::string link = TempPath("full.jsonl");
  fs::create_symlink("/dev/full", link);
  return link;
}

LogRow Row(int64_t step) {
  return LogRow{.wall_time_s = 0.5, .step = step, .examples_seen = 8 * step, .worker = 0};
}

// The CSV's column count, from its header.
size_t NumColumns() {
  return std::vector<std::string>(absl::StrSplit(ConvergenceLog::Header(), ',')).size();
}

TEST(ConvergenceLog, AFullDeviceIsAnErrorNamingThePathAndTheReason) {
  // CSV: the header is the first write, so Open() itself fails.
  auto csv = ConvergenceLog::Open("/dev/full");
  ASSERT_FALSE(csv.ok());
  EXPECT_EQ(csv.status().code(), absl::StatusCode::kResourceExhausted) << csv.status();
  EXPECT_NE(csv.status().message().find(
                "convergence log /dev/full: cannot write a row (No space left on device)"),
            std::string::npos)
      << csv.status();

  const std::string path = DevFullJsonl();
  auto log = ConvergenceLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status();
  const absl::Status first = (*log)->Write(Row(1));
  EXPECT_EQ(first.code(), absl::StatusCode::kResourceExhausted) << first;
  EXPECT_NE(first.message().find(path), std::string::npos) << first;
  EXPECT_NE(first.message().find("No space left on device"), std::string::npos) << first;
  // Sticky: later rows and the close report the same first error.
  EXPECT_EQ((*log)->Write(Row(2)), first);
  EXPECT_EQ((*log)->Close(), first);
  EXPECT_EQ((*log)->Close(), first);
}

TEST(ConvergenceLog, RowsBeforeAFailureStayAsWholeRows) {
  // A file-size limit makes a regular file fail mid-row (EFBIG), as a full disk would.
  const std::string path = TempPath("limited.csv");
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct sigaction ignore = {};
  struct sigaction old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);  // EFBIG instead of a signal
  rlimit limit = old;
  limit.rlim_cur = 1000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  int ok_rows = 0;
  absl::Status status;
  {
    auto log = ConvergenceLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.status();
    for (int64_t step = 1; step <= 100 && status.ok(); ++step) {
      status = (*log)->Write(Row(step));
      if (status.ok()) ++ok_rows;
    }
    EXPECT_EQ((*log)->Close(), status);
  }
  setrlimit(RLIMIT_FSIZE, &old);
  sigaction(SIGXFSZ, &old_action, nullptr);

  ASSERT_FALSE(status.ok()) << "1000 bytes held 100 rows?";
  EXPECT_NE(status.message().find(path), std::string::npos) << status;
  EXPECT_NE(status.message().find("File too large"), std::string::npos) << status;
  // The header and every row that was reported written, each whole; no partial last row.
  const std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(static_cast<int>(lines.size()), 1 + ok_rows);
  EXPECT_EQ(lines[0], ConvergenceLog::Header());
  for (int i = 1; i <= ok_rows; ++i) {
    const std::vector<std::string> fields = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(fields.size(), NumColumns()) << lines[i];
    EXPECT_EQ(fields[3], absl::StrCat(i));
  }
  EXPECT_GT(ok_rows, 5);
}

TrainerOptions LoggedRun(Mode mode, int workers, const std::string& log_path) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = workers;
  o.batch_size = 4;
  o.epochs = 2;
  o.lr.base_lr = 0.05f;
  o.model = ModelSpec{.name = "mlp", .hidden = {16}};
  o.eval_every_epochs = 0;
  o.eval_every_steps = 3;  // an evaluation every few global steps
  o.log_every_steps = 1;   // a row per step of each worker
  o.log_path = log_path;
  return o;
}

TEST(ConvergenceLog, AFailingLogStopsTheRun) {
  const Dataset train = testing::SyntheticDataset(400, 8, 3, 1);
  const Dataset test = testing::SyntheticDataset(100, 8, 3, 2);
  for (const std::string& path : {std::string("/dev/full"), DevFullJsonl()}) {
    SCOPED_TRACE(path);
    for (Mode mode : {Mode::kAsync, Mode::kSync}) {
      const TrainerOptions o = LoggedRun(mode, 2, path);
      auto result =
          testing::WithWatchdog(30, "run with a full log", [&] { return Train(o, train, test); });
      ASSERT_FALSE(result.ok()) << "a run whose log cannot be written must not succeed";
      EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted) << result.status();
      EXPECT_NE(result.status().message().find("convergence log " + path +
                                               ": cannot write a row (No space left on device)"),
                std::string::npos)
          << result.status();
    }
  }
}

TEST(ConvergenceLog, APreviousRunsLogIsNeverReplacedWithoutOverwriteLog) {
  const Dataset train = testing::SyntheticDataset(200, 8, 3, 1);
  const std::string path = TempPath("previous.csv");
  {
    std::ofstream out(path);
    out << "rows of an earlier run\n";
  }
  TrainerOptions o = LoggedRun(Mode::kAsync, 1, path);
  auto refused = Train(o, train, Dataset());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  for (const std::string& part : {"TrainerOptions::log_path=" + path, std::string("(23 bytes)"),
                                  std::string("TrainerOptions::overwrite_log")}) {
    EXPECT_NE(refused.status().message().find(part), std::string::npos)
        << "no '" << part << "' in: " << refused.status();
  }
  EXPECT_EQ(Lines(path), std::vector<std::string>{"rows of an earlier run"});

  // Empty files and devices hold no rows to lose; overwrite_log replaces the file.
  EXPECT_TRUE(ConvergenceLog::CheckWouldNotReplace("/dev/null", "x").ok());
  EXPECT_TRUE(ConvergenceLog::CheckWouldNotReplace(TempPath("absent.csv"), "x").ok());
  o.overwrite_log = true;
  auto replaced = Train(o, train, Dataset());
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  const std::vector<std::string> lines = Lines(path);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], ConvergenceLog::Header());
}

TEST(ConvergenceLog, TheJsonLinesSuffixIsReadInAnyCase) {
  const std::string path = TempPath("upper.JSONL");
  auto log = ConvergenceLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE((*log)->Write(Row(1)).ok());
  ASSERT_TRUE((*log)->Close().ok());
  const std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);  // no CSV header
  EXPECT_EQ(lines[0].substr(0, 1), "{") << lines[0];
}

struct CsvRow {
  double wall_time_s;
  std::string kind;
  int64_t step;
  int64_t examples_seen;
};

std::vector<CsvRow> ReadCsvLog(const std::string& path) {
  std::vector<std::string> lines = Lines(path);
  std::vector<CsvRow> rows;
  if (lines.empty() || lines[0] != ConvergenceLog::Header()) {
    ADD_FAILURE() << path << ": no CSV header";
    return rows;
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    CsvRow row;
    if (f.size() != NumColumns() || !absl::SimpleAtod(f[0], &row.wall_time_s) ||
        !absl::SimpleAtoi(f[3], &row.step) || !absl::SimpleAtoi(f[4], &row.examples_seen)) {
      ADD_FAILURE() << path << ":" << i + 1 << ": malformed row: " << lines[i];
      continue;
    }
    row.kind = f[1];
    // One process: no exchange with other ranks, so the remote staleness columns (14 and 15)
    // stay empty.
    EXPECT_EQ(f[13], "") << path << ":" << i + 1 << ": " << lines[i];
    EXPECT_EQ(f[14], "") << path << ":" << i + 1 << ": " << lines[i];
    rows.push_back(row);
  }
  return rows;
}

TEST(ConvergenceLog, AsyncRowsNeverGoBackwardsInStep) {
  // 4 workers (more than this machine's cores is fine: they interleave more), a row per worker
  // step and an evaluation every 3 global steps on a test set large enough that the other
  // workers log many rows while it runs.
  const Dataset train = testing::SyntheticDataset(1200, 16, 4, 3);
  const Dataset test = testing::SyntheticDataset(6000, 16, 4, 4);
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    const std::string path = TempPath(absl::StrCat("async_", run, ".csv"));
    const TrainerOptions o = LoggedRun(Mode::kAsync, 4, path);
    auto result =
        testing::WithWatchdog(60, "logged async run", [&] { return Train(o, train, test); });
    ASSERT_TRUE(result.ok()) << result.status();
    const std::vector<CsvRow> rows = ReadCsvLog(path);
    int evals = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      evals += rows[i].kind == "eval";
      if (i == 0) continue;
      // Counters of one instant, rows in the order of their instants: all three never decrease.
      ASSERT_GE(rows[i].step, rows[i - 1].step)
          << "row " << i + 2 << " (" << rows[i].kind << ") after a " << rows[i - 1].kind << " row";
      ASSERT_GE(rows[i].examples_seen, rows[i - 1].examples_seen) << "row " << i + 2;
      ASSERT_GE(rows[i].wall_time_s, rows[i - 1].wall_time_s) << "row " << i + 2;
    }
    EXPECT_GT(evals, 20);
    EXPECT_EQ(rows.back().step, result->steps);
    EXPECT_EQ(rows.back().examples_seen, result->examples);
  }
}

TEST(ConvergenceLog, TheRowSinkGetsTheLogsRowsInOrder) {
  const Dataset train = testing::SyntheticDataset(600, 8, 3, 1);
  const Dataset test = testing::SyntheticDataset(300, 8, 3, 2);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    const std::string path = TempPath(absl::StrCat("sink_", ModeName(mode), ".csv"));
    TrainerOptions o = LoggedRun(mode, 3, path);
    o.overwrite_log = true;
    std::mutex mu;
    std::vector<LogRow> rows;
    int concurrent = 0;
    int max_concurrent = 0;
    o.log_row_sink = [&](const LogRow& row) {
      {
        std::lock_guard<std::mutex> lock(mu);
        max_concurrent = std::max(max_concurrent, ++concurrent);
        rows.push_back(row);
      }
      std::this_thread::yield();  // give another call a chance to overlap, were it possible
      std::lock_guard<std::mutex> lock(mu);
      --concurrent;
      return absl::OkStatus();
    };
    auto result =
        testing::WithWatchdog(60, "run with a row sink", [&] { return Train(o, train, test); });
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(max_concurrent, 1) << "calls of the sink overlapped";
    const std::vector<CsvRow> logged = ReadCsvLog(path);
    ASSERT_EQ(rows.size(), logged.size()) << "the sink and the log got different rows";
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].step, logged[i].step) << "row " << i;
      EXPECT_EQ(rows[i].examples_seen, logged[i].examples_seen) << "row " << i;
      EXPECT_EQ(rows[i].eval ? "eval" : "train", logged[i].kind) << "row " << i;
      if (i > 0) {
        EXPECT_GE(rows[i].step, rows[i - 1].step) << "row " << i;
      }
    }
    // The last evaluation is of the final parameters (other workers' rows may follow it).
    auto last_eval =
        std::find_if(rows.rbegin(), rows.rend(), [](const LogRow& r) { return r.eval; });
    ASSERT_NE(last_eval, rows.rend());
    EXPECT_EQ(last_eval->step, result->steps);
    ASSERT_TRUE(last_eval->test_accuracy.has_value());
    EXPECT_EQ(*last_eval->test_accuracy, result->final_test_accuracy);
  }
}

TEST(ConvergenceLog, AFailingRowSinkStopsTheRunAndIsNotCalledAgain) {
  const Dataset train = testing::SyntheticDataset(2000, 8, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    SCOPED_TRACE(ModeName(mode));
    TrainerOptions o = LoggedRun(mode, 2, "");
    std::atomic<int> calls{0};
    o.log_row_sink = [&](const LogRow&) {
      return ++calls == 5 ? absl::AbortedError("the sink gives up") : absl::OkStatus();
    };
    auto result = testing::WithWatchdog(30, "run with a failing row sink",
                                        [&] { return Train(o, train, Dataset()); });
    ASSERT_FALSE(result.ok()) << "a run whose row sink failed must not succeed";
    EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted) << result.status();
    EXPECT_NE(result.status().message().find("the sink gives up"), std::string::npos)
        << result.status();
    EXPECT_EQ(calls.load(), 5);
  }
}

}  // namespace
}  // namespace hogwild
