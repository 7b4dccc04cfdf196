#include "trainer/device.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/gpu_runtime.h"

namespace hogwild {
namespace {

constexpr char kAllowed[] = "allowed: cpu, gpu, gpu:<i>[,<j>...], or empty for the default";

absl::Status NoGpu(const std::string& value, const absl::Status& reason) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "--devices=%s asks for GPUs, but none is usable (%s); use --devices=cpu", value,
      reason.message()));
}

}  // namespace

std::string DeviceSpec::ToString() const {
  return is_gpu() ? absl::StrCat("gpu:", index) : std::string("cpu");
}

std::string DevicesToString(const std::vector<DeviceSpec>& devices) {
  if (devices.empty() || !devices[0].is_gpu()) return "cpu";
  std::vector<int> indices;
  for (const DeviceSpec& d : devices) indices.push_back(d.index);
  return absl::StrCat("gpu:", absl::StrJoin(indices, ","));
}

absl::StatusOr<std::vector<DeviceSpec>> ParseDevices(const std::string& value,
                                                     const GpuCounter& count_gpus) {
  const absl::string_view v = absl::StripAsciiWhitespace(value);
  if (v == "cpu") return std::vector<DeviceSpec>{DeviceSpec::Cpu()};
  if (v.empty() || v == "gpu") {
    const absl::StatusOr<int> count = count_gpus();
    if (!count.ok() || *count < 1) {
      if (v.empty()) return std::vector<DeviceSpec>{DeviceSpec::Cpu()};  // the default falls back
      return NoGpu(value, count.ok() ? absl::FailedPreconditionError("0 CUDA devices")
                                     : count.status());
    }
    std::vector<DeviceSpec> all;
    for (int i = 0; i < *count; ++i) all.push_back(DeviceSpec::Gpu(i));
    return all;
  }
  absl::string_view list = v;
  if (!absl::ConsumePrefix(&list, "gpu:")) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--devices=%s: unknown device; %s", value, kAllowed));
  }
  std::vector<int> indices;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    int index = 0;
    if (item.empty() || !absl::SimpleAtoi(item, &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--devices=%s: '%s' is not a GPU index (a non-negative integer); %s", value, item,
          kAllowed));
    }
    if (std::find(indices.begin(), indices.end(), index) != indices.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--devices=%s: GPU %d is listed twice; to run several workers on one GPU use "
          "--workers_per_device",
          value, index));
    }
    indices.push_back(index);
  }
  const absl::StatusOr<int> count = count_gpus();
  if (!count.ok() || *count < 1) {
    return NoGpu(value, count.ok() ? absl::FailedPreconditionError("0 CUDA devices")
                                   : count.status());
  }
  std::vector<DeviceSpec> devices;
  for (int index : indices) {
    if (index >= *count) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--devices=%s: GPU %d does not exist; this process sees %d GPU(s), numbered 0 to %d",
          value, index, *count, *count - 1));
    }
    devices.push_back(DeviceSpec::Gpu(index));
  }
  return devices;
}

absl::StatusOr<std::vector<DeviceSpec>> ResolveDevices(const std::string& value) {
  return ParseDevices(value, []() -> absl::StatusOr<int> {
    HOGWILD_ASSIGN_OR_RETURN(const GpuRuntime* gpu, GpuRuntimeOrError());
    return gpu->DeviceCount();
  });
}

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const DeviceSpec& device) {
  if (!device.is_gpu()) return std::unique_ptr<Backend>(std::make_unique<CpuBackend>());
  HOGWILD_ASSIGN_OR_RETURN(const GpuRuntime* gpu, GpuRuntimeOrError());
  return gpu->CreateBackend(device.index);
}

absl::StatusOr<std::unique_ptr<BatchFeed>> CreateBatchFeed(const DeviceSpec& device,
                                                           Backend* backend,
                                                           InputPipeline* pipeline, int worker,
                                                           int64_t max_batch, int64_t features) {
  if (!device.is_gpu()) return std::unique_ptr<BatchFeed>(new HostBatchFeed(pipeline, worker));
  HOGWILD_ASSIGN_OR_RETURN(const GpuRuntime* gpu, GpuRuntimeOrError());
  return gpu->CreateBatchFeed(backend, pipeline, worker, max_batch, features);
}

}  // namespace hogwild
