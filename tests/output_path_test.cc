// The output rules every command shares: atomic replacement with a temporary file of its own
// (core/atomic_file.h), no output over an input or another output, no open that hangs, and a
// lost standard output reported (core/output_path.h).
#include "core/output_path.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/atomic_file.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"

namespace hogwild {
namespace {

namespace fs = std::filesystem;
using ::hogwild::testing::ExpectError;

std::string FreshDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(base ? base : "/tmp") / ("output_path_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string Contents(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

int Entries(const std::string& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicFile, ReplacesTheFileWholeAndLeavesNothingElse) {
  const std::string dir = FreshDir("replace");
  const std::string path = dir + "/out.csv";
  ASSERT_TRUE(WriteFileAtomically(path, "first\n").ok());
  const mode_t saved_umask = ::umask(027);
  const absl::Status second = WriteFileAtomically(path, "second\n");
  ::umask(saved_umask);
  ASSERT_TRUE(second.ok()) << second;
  EXPECT_EQ(Contents(path), "second\n");
  EXPECT_EQ(Entries(dir), 1);
  // An ordinary output file's mode (0644 less the umask), not the temporary file's 0600.
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// The user's `<path>.tmp`, and a symlink at the hidden temporary name's prefix, are neither
// truncated, renamed away nor written through.
TEST(AtomicFile, NeverTouchesAnotherFileBesideTheOutput) {
  const std::string dir = FreshDir("beside");
  const std::string path = dir + "/out.csv";
  std::ofstream(path + ".tmp") << "the user's own .tmp";
  std::ofstream(dir + "/target") << "a symlink's target";
  fs::create_symlink(dir + "/target", path + ".tmp.link");
  fs::create_symlink(dir + "/target", dir + "/.out.csv.tmp");
  ASSERT_TRUE(WriteFileAtomically(path, "new\n").ok());
  EXPECT_EQ(Contents(path), "new\n");
  EXPECT_EQ(Contents(path + ".tmp"), "the user's own .tmp");
  EXPECT_EQ(Contents(dir + "/target"), "a symlink's target");
  EXPECT_EQ(Entries(dir), 5);
}

// A symlink at the output's own name is replaced by the new file, not written through.
TEST(AtomicFile, ReplacesASymlinkAtThePathRatherThanItsTarget) {
  const std::string dir = FreshDir("symlink");
  std::ofstream(dir + "/target") << "kept";
  fs::create_symlink(dir + "/target", dir + "/out.csv");
  ASSERT_TRUE(WriteFileAtomically(dir + "/out.csv", "new\n").ok());
  EXPECT_FALSE(fs::is_symlink(dir + "/out.csv"));
  EXPECT_EQ(Contents(dir + "/out.csv"), "new\n");
  EXPECT_EQ(Contents(dir + "/target"), "kept");
}

TEST(AtomicFile, AFailedWriteKeepsThePreviousFileAndRemovesItsTemporaryFile) {
  const std::string dir = FreshDir("failed");
  const std::string path = dir + "/out.csv";
  ASSERT_TRUE(WriteFileAtomically(path, "previous\n").ok());
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 4;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  const absl::Status s = WriteFileAtomically(path, "longer than four bytes\n");
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_EQ(s.message(), path + ": cannot write it (File too large)");
  EXPECT_EQ(Contents(path), "previous\n");
  EXPECT_EQ(Entries(dir), 1);
}

TEST(AtomicFile, AMissingFolderIsNamed) {
  const std::string dir = FreshDir("missing");
  ExpectError(WriteFileAtomically(dir + "/no/out.csv", "x"), absl::StatusCode::kInternal,
              {dir + "/no/out.csv: cannot create a temporary file in " + dir +
               "/no (No such file or directory)"});
}

// A stop signal that ends the process mid-write removes the temporary file: a child rewrites a
// large file in a loop until SIGTERM ends it; the folder then holds the output only.
TEST(AtomicFile, ASignalThatEndsTheProcessRemovesTheTemporaryFile) {
  const std::string dir = FreshDir("signal");
  const std::string path = dir + "/out.bin";
  for (int round = 0; round < 5; ++round) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      InstallTempFileCleanupOnSignals();
      const std::string bytes(32 << 20, 'x');
      while (true) WriteFileAtomically(path, bytes).IgnoreError();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 37 * round));
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
    for (const auto& entry : fs::directory_iterator(dir)) {
      EXPECT_EQ(entry.path().filename(), "out.bin") << "round " << round;
    }
  }
}

TEST(DistinctFiles, AnOutputThatIsAnInputOrAnotherOutputIsRefused) {
  const std::string dir = FreshDir("distinct");
  fs::create_directories(dir + "/ckpt");
  const std::string checkpoint = dir + "/ckpt/checkpoint.hwckpt";
  std::ofstream(checkpoint) << "bytes";
  std::ofstream(dir + "/data.svm") << "1 1:1\n";
  fs::create_symlink(checkpoint, dir + "/link");
  fs::create_hard_link(dir + "/data.svm", dir + "/hard.svm");
  fs::create_symlink(dir + "/later.csv", dir + "/dangling");
  const RunFile checkpoint_input{
      .option = "--checkpoint_dir", .value = dir + "/ckpt", .file = checkpoint};
  struct Case {
    RunFile a, b;
    std::string message;  // empty: accepted
  };
  const Case cases[] = {
      {{"--output", checkpoint, "", true},
       checkpoint_input,
       "--output=" + checkpoint + " is the same file as --checkpoint_dir=" + dir +
           "/ckpt (its file " + checkpoint +
           "), which writing it would destroy; give --output another path"},
      {{"--output", dir + "/ckpt/../ckpt/./checkpoint.hwckpt", "", true},
       checkpoint_input,
       "is the same file as --checkpoint_dir"},
      {{"--output", dir + "/link", "", true}, checkpoint_input, "is the same file as"},
      {{"--dataset", dir + "/data.svm"},
       {"--log", dir + "/hard.svm", "", true},
       "--log=" + dir + "/hard.svm is the same file as --dataset=" + dir +
           "/data.svm, which writing it would destroy; give --log another path"},
      // Outputs that do not exist yet: by path, through a dangling symlink too.
      {{"--log", dir + "/same.csv", "", true},
       {"--staleness_csv", dir + "/./same.csv", "", true},
       "--log=" + dir + "/same.csv is the same file as --staleness_csv=" + dir +
           "/./same.csv; give --log another path"},
      {{"--log", dir + "/dangling", "", true},
       {"--staleness_csv", dir + "/later.csv", "", true},
       "is the same file as"},
      // Accepted: different files, inputs only, a missing input, a device, an empty path.
      {{"--log", dir + "/a.csv", "", true}, {"--staleness_csv", dir + "/b.csv", "", true}, ""},
      {{"--dataset", dir + "/data.svm"}, {"--test", dir + "/hard.svm"}, ""},
      {{"--dataset", "synthetic"}, {"--log", "synthetic", "", true}, ""},
      {{"--log", "/dev/null", "", true}, {"--staleness_csv", "/dev/null", "", true}, ""},
      {{"--log", "", "", true}, {"--staleness_csv", "", "", true}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.a.value + " vs " + c.b.value);
    const RunFile files[] = {c.a, c.b};
    const absl::Status s = CheckDistinctFiles(files);
    if (c.message.empty()) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      ExpectError(s, absl::StatusCode::kInvalidArgument, {c.message});
    }
  }
  EXPECT_EQ(Contents(checkpoint), "bytes");  // reads metadata only
}

TEST(OutputStream, APipeWithoutAReaderIsRefusedAtOnceAndOneWithAReaderIsWritten) {
  const std::string dir = FreshDir("fifo");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ExpectError(OpenOutputStream("--log", fifo).status(), absl::StatusCode::kFailedPrecondition,
              {"--log=" + fifo +
               " is a pipe that no process reads, so nothing could be written to it; start its "
               "reader first, or give a file path"});
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  absl::StatusOr<int> fd = OpenOutputStream("--log", fifo);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(::fcntl(*fd, F_GETFL) & O_NONBLOCK, 0);  // writes wait for a slow reader
  EXPECT_EQ(::write(*fd, "row\n", 4), 4);
  char got[4];
  EXPECT_EQ(::read(reader, got, 4), 4);
  ::close(*fd);
  ::close(reader);
  ExpectError(OpenOutputStream("--log", dir + "/no/log.csv").status(),
              absl::StatusCode::kInvalidArgument,
              {"--log=" + dir + "/no/log.csv: cannot create it (No such file or directory)"});
}

TEST(ReplacedFilePath, ADeviceOrAPipeIsRefused) {
  const std::string dir = FreshDir("replaced");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    ExpectError(CheckReplacedFilePath("--staleness_csv", path), absl::StatusCode::kInvalidArgument,
                {"--staleness_csv=" + path +
                 " is not a regular file (a device, a pipe or a socket), which this run would "
                 "replace; give a file path"});
  }
  EXPECT_TRUE(CheckReplacedFilePath("--staleness_csv", dir + "/s.csv").ok());
}

TEST(CheckedExitCode, ALostStandardOutputIsAnErrorNamingTheReason) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  EXPECT_EXIT(
      {
        if (std::freopen("/dev/full", "w", stdout) == nullptr) std::_Exit(3);
        std::printf("summary\n");
        std::_Exit(CheckedExitCode(0));
      },
      ::testing::ExitedWithCode(1),
      "error: cannot write to standard output \\(No space left on device\\)");
  // A failing run keeps its own status.
  EXPECT_EXIT(
      {
        if (std::freopen("/dev/full", "w", stdout) == nullptr) std::_Exit(3);
        std::printf("summary\n");
        std::_Exit(CheckedExitCode(130));
      },
      ::testing::ExitedWithCode(130), "cannot write to standard output");
  EXPECT_EXIT(std::_Exit(CheckedExitCode(0)), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace hogwild
