#include "trainer/cli/gpu_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "trainer/gpu_runtime.h"

namespace hogwild {
namespace {

// Set by trainer/cli/BUILD where CUDA is enabled, i.e. where train_gpu is built beside train.
#if defined(HOGWILD_TRAIN_GPU_BUILT)
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif

constexpr char kGpuBinaryName[] = "train_gpu";

bool AnyNvidiaGpu() {
  std::error_code ec;
  // The driver lists one folder per GPU here; /dev/nvidia0 covers containers without /proc's.
  std::filesystem::directory_iterator gpus("/proc/driver/nvidia/gpus", ec);
  if (!ec && gpus != std::filesystem::directory_iterator()) return true;
  return std::filesystem::exists("/dev/nvidia0", ec);
}

}  // namespace

GpuHandoffFacts ThisProcessGpuFacts() {
  GpuHandoffFacts facts;
  facts.has_gpu_runtime = RegisteredGpuRuntime() != nullptr;
  facts.built_with_cuda = kBuiltWithCuda;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    facts.gpu_binary = (self.parent_path() / kGpuBinaryName).string();
    facts.gpu_binary_exists = access(facts.gpu_binary.c_str(), X_OK) == 0 &&
                              std::filesystem::is_regular_file(facts.gpu_binary, ec);
  }
  facts.gpu_present = AnyNvidiaGpu();
  return facts;
}

absl::StatusOr<std::string> GpuBinaryFor(const std::string& devices, const GpuHandoffFacts& facts) {
  if (facts.has_gpu_runtime) return std::string();
  const absl::string_view v = absl::StripAsciiWhitespace(devices);
  const bool asked = v == "gpu" || absl::StartsWith(v, "gpu:");
  const bool by_default = v.empty() && facts.gpu_present;
  if (!asked && !by_default) return std::string();
  if (!facts.built_with_cuda) {
    if (!asked) return std::string();  // the default is cpu in a build without CUDA
    return absl::FailedPreconditionError(absl::StrFormat(
        "--devices=%s: this train was built without CUDA (no CUDA toolkit was found at build "
        "time, or --config=cpu), so it trains on cpu only; to train on GPUs build it with "
        "--config=cuda on a machine with the CUDA toolkit (bazel run --config=cuda "
        "//trainer:train -- --devices=%s), or use --devices=cpu",
        devices, v));
  }
  if (!facts.gpu_binary_exists) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: GPU runs are done by %s, which is not there (install it beside this train), or "
        "use --devices=cpu",
        asked ? absl::StrCat("--devices=", devices)
              : std::string("--devices (default: every GPU, and this machine has one)"),
        facts.gpu_binary.empty() ? std::string(kGpuBinaryName) : facts.gpu_binary));
  }
  return facts.gpu_binary;
}

absl::Status ExecGpuBinary(const std::string& path, char* const argv[]) {
  execv(path.c_str(), argv);
  return absl::FailedPreconditionError(
      absl::StrFormat("cannot run %s for the GPU devices: %s", path, std::strerror(errno)));
}

}  // namespace hogwild
