// The CUDA GPU runtime as a program linked with //trainer:gpu sees it: registered before
// main(), the default devices follow the CUDA device count, and a GPU job without a usable GPU
// fails with the CUDA runtime's reason. Runs without a GPU (where the cases that need one
// skip); device_test checks a program without the runtime.
#include "trainer/gpu_runtime.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kernels/cuda/devices.h"
#include "tests/test_data.h"
#include "trainer/device.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

bool Contains(const absl::Status& s, const std::string& part) {
  return s.message().find(part) != absl::string_view::npos;
}

TEST(GpuRuntime, LinkingTrainerGpuRegistersItBeforeMain) {
  ASSERT_NE(RegisteredGpuRuntime(), nullptr);
  const absl::StatusOr<const GpuRuntime*> runtime = GpuRuntimeOrError();
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const absl::StatusOr<int> count = (*runtime)->DeviceCount();
  const absl::StatusOr<int> direct = CudaDeviceCount();
  EXPECT_EQ(count.ok(), direct.ok());
  if (count.ok()) {
    EXPECT_EQ(*count, *direct);
  }
}

TEST(ResolveDevices, DefaultOnThisMachineFollowsTheCudaDeviceCount) {
  auto d = ResolveDevices("");
  ASSERT_TRUE(d.ok()) << d.status();
  const absl::StatusOr<int> count = CudaDeviceCount();
  if (count.ok()) {
    ASSERT_EQ(static_cast<int>(d->size()), *count);
    EXPECT_TRUE((*d)[0].is_gpu());
  } else {
    // The build machine: no driver, so the default falls back to the CPU.
    EXPECT_EQ(*d, std::vector<DeviceSpec>{DeviceSpec::Cpu()});
  }
}

// Without a GPU, a GPU training job fails at once with the reason, in both modes (no worker
// starts, nothing hangs).
TEST(TrainerDevices, GpuJobWithoutGpuFailsWithTheReason) {
  const absl::StatusOr<int> count = CudaDeviceCount();
  if (count.ok()) GTEST_SKIP() << "this machine has a GPU; the GPU tests cover it";
  const Dataset train = testing::SyntheticDataset(40, 6, 3, 1);
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    TrainerOptions o;
    o.mode = mode;
    o.devices = {DeviceSpec::Gpu(0)};
    o.epochs = 1;
    o.batch_size = 8;
    o.model = ModelSpec{.name = "mlp", .hidden = {8}};
    auto result = Train(o, train, Dataset());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    EXPECT_TRUE(Contains(result.status(), "cudaGetDeviceCount")) << result.status();
  }
}

}  // namespace
}  // namespace hogwild
