// --devices parsing and the device checks of the trainer options. Runs without a GPU (the GPU
// count is injected) and without the GPU runtime: this test links only the CPU trainer, as a
// CPU-only build does, so the real device choice is that of a program built without CUDA.
// gpu_runtime_test checks the same with the CUDA runtime linked.
#include "trainer/device.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/test_data.h"
#include "trainer/gpu_runtime.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

GpuCounter Gpus(int n) {
  return [n]() -> absl::StatusOr<int> { return n; };
}

GpuCounter NoGpu() {
  return []() -> absl::StatusOr<int> {
    return absl::FailedPreconditionError("cudaGetDeviceCount: no driver (test)");
  };
}

std::vector<DeviceSpec> GpuList(std::vector<int> indices) {
  std::vector<DeviceSpec> v;
  for (int i : indices) v.push_back(DeviceSpec::Gpu(i));
  return v;
}

bool Contains(const absl::Status& s, const std::string& part) {
  return s.message().find(part) != absl::string_view::npos;
}

TEST(ParseDevices, CpuIsOneCpuDeviceWhateverTheGpus) {
  for (const GpuCounter& counter : {Gpus(2), NoGpu()}) {
    auto d = ParseDevices("cpu", counter);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, std::vector<DeviceSpec>{DeviceSpec::Cpu()});
  }
  auto padded = ParseDevices("  cpu ", NoGpu());
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(*padded, std::vector<DeviceSpec>{DeviceSpec::Cpu()});
}

TEST(ParseDevices, DefaultIsEveryGpuOrCpuWithoutOne) {
  auto with_gpus = ParseDevices("", Gpus(3));
  ASSERT_TRUE(with_gpus.ok());
  EXPECT_EQ(*with_gpus, GpuList({0, 1, 2}));
  auto without = ParseDevices("", NoGpu());
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(*without, std::vector<DeviceSpec>{DeviceSpec::Cpu()});
  auto zero = ParseDevices("", Gpus(0));
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(*zero, std::vector<DeviceSpec>{DeviceSpec::Cpu()});
}

TEST(ParseDevices, GpuListsKeepTheirOrder) {
  auto all = ParseDevices("gpu", Gpus(2));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, GpuList({0, 1}));
  auto listed = ParseDevices("gpu:2,0", Gpus(4));
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(*listed, GpuList({2, 0}));
  auto spaced = ParseDevices("gpu:0, 1", Gpus(2));
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_EQ(*spaced, GpuList({0, 1}));
}

TEST(ParseDevices, AskingForGpusWithoutOneSaysWhyAndWhatToDo) {
  for (const char* value : {"gpu", "gpu:0"}) {
    auto d = ParseDevices(value, NoGpu());
    ASSERT_FALSE(d.ok()) << value;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(Contains(d.status(), "no driver (test)")) << d.status();
    EXPECT_TRUE(Contains(d.status(), "--devices=cpu")) << d.status();
  }
}

TEST(ParseDevices, MissingGpuNamesTheIndexAndTheCount) {
  auto d = ParseDevices("gpu:0,2", Gpus(2));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(d.status(), "GPU 2 does not exist")) << d.status();
  EXPECT_TRUE(Contains(d.status(), "sees 2 GPU(s)")) << d.status();
}

TEST(ParseDevices, MalformedValuesAreInvalidArgumentsNamingTheValue) {
  struct Case {
    const char* value;
    const char* expected;
  };
  for (const Case& c : {Case{"tpu", "unknown device"}, Case{"gpu:", "'' is not a GPU index"},
                        Case{"gpu:a", "'a' is not a GPU index"},
                        Case{"gpu:-1", "'-1' is not a GPU index"},
                        Case{"gpu:0,,1", "'' is not a GPU index"},
                        Case{"gpu:1,1", "listed twice"}, Case{"cpu,gpu", "unknown device"},
                        Case{"GPU", "unknown device"}}) {
    auto d = ParseDevices(c.value, Gpus(4));
    ASSERT_FALSE(d.ok()) << c.value;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << c.value;
    EXPECT_TRUE(Contains(d.status(), c.expected)) << c.value << ": " << d.status();
    EXPECT_TRUE(Contains(d.status(), std::string("--devices=") + c.value)) << d.status();
  }
  // A duplicate points at the flag that does what the user probably meant.
  EXPECT_TRUE(Contains(ParseDevices("gpu:1,1", Gpus(4)).status(), "--workers_per_device"));
}

TEST(ResolveDevices, WithoutTheGpuRuntimeTheDefaultIsCpuAndGpusSayBuiltWithoutCuda) {
  ASSERT_EQ(RegisteredGpuRuntime(), nullptr) << "this test must not link //trainer:gpu";
  const absl::StatusOr<const GpuRuntime*> runtime = GpuRuntimeOrError();
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(runtime.status(), "built without CUDA")) << runtime.status();
  EXPECT_TRUE(Contains(runtime.status(), "--config=cuda")) << runtime.status();

  auto d = ResolveDevices("");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, std::vector<DeviceSpec>{DeviceSpec::Cpu()});
  for (const char* value : {"gpu", "gpu:0"}) {
    auto gpus = ResolveDevices(value);
    ASSERT_FALSE(gpus.ok()) << value;
    EXPECT_EQ(gpus.status().code(), absl::StatusCode::kFailedPrecondition) << gpus.status();
    EXPECT_TRUE(Contains(gpus.status(), "built without CUDA")) << gpus.status();
    EXPECT_TRUE(Contains(gpus.status(), "--devices=cpu")) << gpus.status();
  }
  // A GPU worker's backend cannot be made either, with the same reason.
  auto backend = CreateBackend(DeviceSpec::Gpu(0));
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(backend.status(), "built without CUDA")) << backend.status();
}

TEST(DevicesToString, SpellsTheFlagValue) {
  EXPECT_EQ(DevicesToString({DeviceSpec::Cpu()}), "cpu");
  EXPECT_EQ(DevicesToString(GpuList({0, 3})), "gpu:0,3");
  EXPECT_EQ(DeviceSpec::Gpu(1).ToString(), "gpu:1");
}

TEST(TrainerDevices, WorkerCountIsGpusTimesWorkersPerDevice) {
  TrainerOptions o;
  o.num_workers = 5;
  EXPECT_EQ(WorkerCount(o), 5);
  o.devices = GpuList({0, 1});
  o.workers_per_device = 3;
  EXPECT_EQ(WorkerCount(o), 6);
}

TEST(TrainerDevices, BadDeviceOptionsAreRejectedNamingTheOption) {
  TrainerOptions o;
  o.devices = GpuList({0});
  o.workers_per_device = 0;
  absl::Status s = ValidateOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "TrainerOptions::workers_per_device=0")) << s;
  o.workers_per_device = 1;
  o.devices = GpuList({1, 1});
  s = ValidateOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "gpu:1 is listed twice")) << s;
  o.devices = {DeviceSpec::Cpu(), DeviceSpec::Gpu(0)};
  s = ValidateOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  o.devices = {};
  EXPECT_EQ(ValidateOptions(o).code(), absl::StatusCode::kInvalidArgument);
}

// Without the GPU runtime, a GPU training job fails at once, in both modes, with
// kFailedPrecondition naming the devices and saying how to get a build with CUDA (no worker
// starts, nothing hangs).
TEST(TrainerDevices, GpuJobWithoutTheGpuRuntimeSaysBuiltWithoutCuda) {
  const Dataset train = testing::SyntheticDataset(40, 6, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    TrainerOptions o;
    o.mode = mode;
    o.devices = GpuList({0});
    o.epochs = 1;
    o.batch_size = 8;
    o.model = ModelSpec{.name = "mlp", .hidden = {8}};
    auto result = Train(o, train, Dataset());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    EXPECT_TRUE(Contains(result.status(), "TrainerOptions::devices=gpu:0")) << result.status();
    EXPECT_TRUE(Contains(result.status(), "built without CUDA")) << result.status();
    EXPECT_TRUE(Contains(result.status(), "--config=cuda")) << result.status();
  }
}

}  // namespace
}  // namespace hogwild
