// The `train` command under bad flags and signals (issue 5): every numeric flag out of range is
// refused with a message naming the flag, the value and the range (exit 1, before any data is
// read); SIGINT/SIGTERM finish the step, write a checkpoint and exit with 128 + signal, and
// --resume continues from that checkpoint.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/dir_events.h"
#include "trainer/checkpoint/checkpoint.h"

extern char** environ;

namespace hogwild {
namespace {

namespace fs = std::filesystem;

constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";

std::string TrainPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : "hogwild",
                      "/trainer/cli/train");
}

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/", name);
}

// Starts the train binary with `args`, stdout and stderr into `log`.
pid_t Start(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all = {TrainPath()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return err == 0 ? pid : -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Exit code (128 + signal if killed), or -1 when it did not end within the limit (which only
// bounds a hang: the child is then killed). Blocks in waitpid(2), so it returns the moment the
// child ends.
int Wait(pid_t pid, double limit_s) {
  std::future<int> waited = std::async(std::launch::async, [pid] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  });
  const bool hung =
      waited.wait_for(std::chrono::duration<double>(limit_s)) != std::future_status::ready;
  if (hung) kill(pid, SIGKILL);
  const int status = waited.get();
  if (hung) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct TrainRun {
  int exit_code;
  std::string output;
};

TrainRun RunTrain(const std::vector<std::string>& args, double limit_s = 60) {
  const std::string log = TempPath("train.log");
  const pid_t pid = Start(args, log);
  if (pid < 0) return {-2, "cannot start " + TrainPath()};
  const int code = Wait(pid, limit_s);
  return {code, ReadFile(log)};
}

TEST(CliFlags, EveryNumericFlagOutOfRangeIsRefusedByName) {
  // {flags (space-separated), text the message must contain}. The data directory does not exist:
  // a flag error must come first, before anything is read. The decay flags need a decaying
  // schedule (with the constant one they are refused as having no effect).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--workers=0", "--workers=0 is out of range; it must be in [1, 4096]"},
      {"--workers=5000", "--workers=5000 is out of range"},
      {"--batch_size=0", "--batch_size=0 is out of range; it must be in [1, 16777216]"},
      {"--epochs=0", "--epochs=0 is out of range; it must be in [1, 1000000]"},
      {"--lr=-1", "--lr=-1 is out of range; the learning rate must be > 0"},
      {"--lr=nan", "--lr=nan is out of range"},
      {"--lr_schedule=exponential --lr_decay_rate=2",
       "--lr_decay_rate=2 is out of range; it must be in (0, 1]"},
      {"--lr_schedule=step --lr_decay_steps=0",
       "--lr_decay_steps=0 is out of range; it must be >= 1"},
      {"--momentum=1.5", "--momentum=1.5 is out of range; it must be in [0, 1)"},
      {"--weight_decay=-1", "--weight_decay=-1 is out of range; it must be >= 0"},
      {"--log=unused.csv --log_every=0", "--log_every=0 is out of range; it must be >= 1"},
      {"--train_examples=-5", "--train_examples=-5 is out of range; it must be >= 0"},
      {"--eval_every=-3", "--eval_every=-3 does not parse"},
      {"--hidden=0", "--hidden=0 does not parse: '0' is not an integer in [1, 65536]"},
      {"--checkpoint_every=-1", "--checkpoint_every=-1 is out of range"},
      {"--checkpoint_every=0s", "--checkpoint_every=0s is out of range: a period must be in"},
      {"--checkpoint_every=99999999h", "--checkpoint_every=99999999h is out of range"},
      {"--resume", "--resume needs --checkpoint_dir"},
      {"--checkpoint_every=10s", "--checkpoint_every needs --checkpoint_dir"},
  };
  for (const auto& [flag, expected] : cases) {
    std::vector<std::string> args = absl::StrSplit(flag, ' ');
    args.push_back("--data_dir=" + TempPath("no_such_dir"));
    const TrainRun run = RunTrain(args);
    EXPECT_EQ(run.exit_code, 1) << flag << "\n" << run.output;
    EXPECT_NE(run.output.find(expected), std::string::npos) << flag << "\n" << run.output;
    EXPECT_EQ(run.output.find("no such file"), std::string::npos) << flag;
  }
}

TEST(CliFlags, MissingDataIsAClearErrorNotACrash) {
  fs::create_directories(TempPath("empty_data"));
  const TrainRun run = RunTrain({"--data_dir=" + TempPath("empty_data"), "--epochs=1"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("error: "), std::string::npos) << run.output;
}

TEST(CliCheckpointDir, AnExistingCheckpointIsRefusedBeforeTheDataIsRead) {
  // A checkpoint a previous run left: without --resume the run must not start (it would
  // replace it at its first save). The data directory does not exist, so the refusal must come
  // before the data is read.
  const std::string dir = TempPath("cli_existing_ckpt");
  fs::remove_all(dir);
  Checkpoint c;
  c.signature = CheckpointSignature{.model_name = "mlp",
                                    .input_shape = {1, 28, 28},
                                    .num_classes = 10,
                                    .num_params = 1,
                                    .num_workers = 1,
                                    .batch_size = 64,
                                    .seed = 1,
                                    .train_examples = 60000,
                                    .dataset = DatasetId{.name = "fashion_mnist"}};
  c.global_step = 4321;
  c.epoch = 4;
  c.next_step = {4321};
  c.params = {0.5f};
  ASSERT_TRUE(WriteCheckpoint(dir, c).ok());
  const std::string before = ReadFile(CheckpointPath(dir));
  const TrainRun run =
      RunTrain({"--checkpoint_dir=" + dir, "--data_dir=" + TempPath("no_such_dir")});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("error: --checkpoint_dir=" + dir +
                            " already holds a checkpoint at global step 4321 (epoch 4); use "
                            "--resume to continue from it, or --overwrite_checkpoint to start "
                            "over and replace it"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(ReadFile(CheckpointPath(dir)), before);
}

TEST(CliLog, AFullLogDeviceFailsTheRunNamingThePath) {
  if (!fs::exists(fs::path(kFashionMnist) / "train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: apt-get install dataset-fashion-mnist (tools/setup.sh)";
  }
  const TrainRun run = RunTrain(
      {"--log=/dev/full", "--model=logreg", "--workers=2", "--train_examples=1000", "--epochs=1"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find(
                "error: convergence log /dev/full: cannot write a row (No space left on device)"),
            std::string::npos)
      << run.output;
}

class CliSignal : public ::testing::TestWithParam<int> {};

TEST_P(CliSignal, SignalWritesACheckpointExitsWith128PlusSignalAndResumes) {
  const int signo = GetParam();
  if (!fs::exists(fs::path(kFashionMnist) / "train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: apt-get install dataset-fashion-mnist (tools/setup.sh)";
  }
  const std::string dir = TempPath(absl::StrCat("cli_ckpt_", signo));
  fs::remove_all(dir);
  fs::create_directories(dir);  // to watch it for the first checkpoint
  const std::vector<std::string> common = {"--model=logreg", "--workers=2",
                                           "--train_examples=2000", "--eval_every=0",
                                           "--checkpoint_dir=" + dir};
  std::vector<std::string> args = common;
  args.push_back("--epochs=100000");  // hours: only the signal ends it
  args.push_back("--checkpoint_every=20");
  const std::string log = TempPath("signal.log");
  const pid_t pid = Start(args, log);
  ASSERT_GT(pid, 0);
  // Send the signal once training is under way (the first periodic checkpoint exists).
  // The limit only bounds a hang (loading the dataset takes seconds, more under sanitizers).
  ASSERT_TRUE(testing::WaitForDirChange(dir, 60, [&] { return fs::exists(CheckpointPath(dir)); }))
      << ReadFile(log);
  ASSERT_EQ(kill(pid, signo), 0);
  const int code = Wait(pid, 30);
  const std::string output = ReadFile(log);
  EXPECT_EQ(code, 128 + signo) << output;
  const std::string name = signo == SIGINT ? "SIGINT" : "SIGTERM";
  EXPECT_NE(output.find("received " + name), std::string::npos) << output;
  EXPECT_NE(output.find("stopped early by " + name), std::string::npos) << output;
  auto checkpoint = ReadLatestCheckpoint(dir);
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value()) << checkpoint.status();
  EXPECT_NE(output.find(absl::StrCat("checkpoint: global step ", (*checkpoint)->global_step)),
            std::string::npos)
      << output;

  // Loading the dataset takes seconds: the resume half runs for SIGINT only.
  if (signo != SIGINT) return;
  // Resume and train one more epoch to completion.
  args = common;
  args.push_back("--resume");
  args.push_back(absl::StrCat("--epochs=", (*checkpoint)->epoch + 1));
  const TrainRun resumed = RunTrain(args);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(absl::StrCat("resumed from the checkpoint at global step ",
                                             (*checkpoint)->global_step)),
            std::string::npos)
      << resumed.output;

}

INSTANTIATE_TEST_SUITE_P(Signals, CliSignal, ::testing::Values(SIGINT, SIGTERM));

}  // namespace
}  // namespace hogwild
