// When `train` hands a run to `train_gpu` (trainer/cli/gpu_handoff.h): every row of the table
// in its header, from injected facts, so it runs on any machine and in any build.
#include "trainer/cli/gpu_handoff.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace hogwild {
namespace {

constexpr char kGpuBinary[] = "/opt/hogwild/bin/train_gpu";

GpuHandoffFacts Facts(bool built_with_cuda, bool gpu_present, bool exists = true) {
  return GpuHandoffFacts{.has_gpu_runtime = false,
                         .built_with_cuda = built_with_cuda,
                         .gpu_binary = kGpuBinary,
                         .gpu_binary_exists = exists,
                         .gpu_present = gpu_present};
}

bool Contains(const absl::Status& s, const std::string& part) {
  return s.message().find(part) != absl::string_view::npos;
}

TEST(GpuBinaryFor, TrainGpuItselfAlwaysRunsHere) {
  GpuHandoffFacts facts = Facts(true, true);
  facts.has_gpu_runtime = true;
  for (const char* devices : {"", "cpu", "gpu", "gpu:0,1"}) {
    auto to_exec = GpuBinaryFor(devices, facts);
    ASSERT_TRUE(to_exec.ok()) << to_exec.status();
    EXPECT_EQ(*to_exec, "") << devices;
  }
}

TEST(GpuBinaryFor, AskedGpusGoToTrainGpuInABuildWithCuda) {
  for (bool present : {false, true}) {
    for (const char* devices : {"gpu", "gpu:0", " gpu:1,0 "}) {
      auto to_exec = GpuBinaryFor(devices, Facts(true, present));
      ASSERT_TRUE(to_exec.ok()) << to_exec.status();
      EXPECT_EQ(*to_exec, kGpuBinary) << devices;
    }
  }
}

TEST(GpuBinaryFor, TheDefaultGoesToTrainGpuOnlyWhereAGpuIsPresent) {
  auto with_gpu = GpuBinaryFor("", Facts(true, true));
  ASSERT_TRUE(with_gpu.ok()) << with_gpu.status();
  EXPECT_EQ(*with_gpu, kGpuBinary);
  auto without_gpu = GpuBinaryFor("", Facts(true, false));
  ASSERT_TRUE(without_gpu.ok()) << without_gpu.status();
  EXPECT_EQ(*without_gpu, "");
}

TEST(GpuBinaryFor, CpuAndBadValuesRunHere) {
  for (bool cuda : {false, true}) {
    for (const char* devices : {"cpu", "tpu", "GPU", "cpu,gpu"}) {
      auto to_exec = GpuBinaryFor(devices, Facts(cuda, true));
      ASSERT_TRUE(to_exec.ok()) << to_exec.status();
      EXPECT_EQ(*to_exec, "") << devices;
    }
  }
}

TEST(GpuBinaryFor, WithoutCudaTheDefaultIsCpuAndGpusSayHowToBuildWithIt) {
  auto by_default = GpuBinaryFor("", Facts(false, true, false));
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_EQ(*by_default, "");
  for (const char* devices : {"gpu", "gpu:0"}) {
    auto to_exec = GpuBinaryFor(devices, Facts(false, true, false));
    ASSERT_FALSE(to_exec.ok()) << devices;
    const absl::Status& s = to_exec.status();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(Contains(s, std::string("--devices=") + devices)) << s;
    EXPECT_TRUE(Contains(s, "built without CUDA")) << s;
    EXPECT_TRUE(Contains(s, "--config=cuda on a machine with the CUDA toolkit")) << s;
    EXPECT_TRUE(Contains(s, "--devices=cpu")) << s;
    EXPECT_EQ(s.message().find('\n'), absl::string_view::npos) << s;
  }
}

TEST(GpuBinaryFor, AMissingTrainGpuIsNamed) {
  for (const char* devices : {"gpu", ""}) {
    auto to_exec = GpuBinaryFor(devices, Facts(true, true, /*exists=*/false));
    ASSERT_FALSE(to_exec.ok()) << devices;
    EXPECT_EQ(to_exec.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(Contains(to_exec.status(), kGpuBinary)) << to_exec.status();
    EXPECT_TRUE(Contains(to_exec.status(), "--devices")) << to_exec.status();
  }
}

TEST(ExecGpuBinary, AFailedExecNamesThePathAndTheReason) {
  char name[] = "train";
  char* argv[] = {name, nullptr};
  const absl::Status s = ExecGpuBinary("/nonexistent/train_gpu", argv);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s, "/nonexistent/train_gpu")) << s;
  EXPECT_TRUE(Contains(s, "No such file")) << s;
}

}  // namespace
}  // namespace hogwild
