// A crash at any moment leaves a loadable checkpoint (issue 5): a helper process writes
// checkpoints in a loop and is killed with SIGKILL at random moments, dozens of times; after
// every kill the directory must hold a complete, self-consistent checkpoint that is at least as
// new as the one seen before the kill (the previous good one is never lost).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "trainer/checkpoint.h"

extern char** environ;

namespace hogwild {
namespace {

std::string HelperPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrFormat("%s/%s/tests/checkpoint_crash_helper", srcdir ? srcdir : ".",
                         workspace ? workspace : "hogwild");
}

TEST(CrashCheckpoint, SigkillDuringSavesAlwaysLeavesTheLatestCompleteCheckpoint) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/crash_checkpoints";
  std::filesystem::remove_all(dir);
  // 64 Ki floats = 256 KiB of parameters and 256 KiB of momentum: a save (write, fsync, rename,
  // fsync of the directory) takes ~10-60 ms here, so kills spread over 0-150 ms land inside every
  // phase of a save, and between saves.
  const std::string num_params = "65536";
  const std::string helper = HelperPath();
  ASSERT_TRUE(std::filesystem::exists(helper)) << helper;

  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_us(0, 150000);
  int64_t last_step = -1;
  int kills_with_progress = 0;
  constexpr int kIterations = 40;
  for (int i = 0; i < kIterations; ++i) {
    pid_t pid = 0;
    char* argv[] = {const_cast<char*>(helper.c_str()), const_cast<char*>(dir.c_str()),
                    const_cast<char*>(num_params.c_str()), nullptr};
    ASSERT_EQ(posix_spawn(&pid, helper.c_str(), nullptr, nullptr, argv, environ), 0);
    // Until the first checkpoint exists there is nothing to lose: wait for it on the first run.
    if (i == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!std::filesystem::exists(CheckpointPath(dir)) &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    // The helper must have died of the kill, not of an error of its own.
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "iteration " << i << ": helper exited with status " << wstatus;

    auto latest = ReadLatestCheckpoint(dir);
    ASSERT_TRUE(latest.ok()) << "iteration " << i << ": " << latest.status();
    ASSERT_TRUE(latest->has_value()) << "iteration " << i << ": the checkpoint vanished";
    const Checkpoint& c = **latest;
    // Self-consistent: every value written for the same step (no mix of two saves).
    for (float p : c.params) ASSERT_EQ(p, static_cast<float>(c.global_step)) << i;
    ASSERT_EQ(c.velocities.size(), 1u);
    for (float v : c.velocities[0]) ASSERT_EQ(v, -static_cast<float>(c.global_step)) << i;
    ASSERT_GE(c.global_step, last_step) << "iteration " << i << ": an older checkpoint came back";
    if (c.global_step > last_step) ++kills_with_progress;
    last_step = c.global_step;
  }
  // The kills landed while saves were being made (not all before the first save completed).
  EXPECT_GT(kills_with_progress, kIterations / 4);
  std::printf("%d kills, final checkpoint step %ld\n", kIterations, static_cast<long>(last_step));
}

}  // namespace
}  // namespace hogwild
