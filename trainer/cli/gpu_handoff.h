// Where the `train` command's GPU runs happen. `train` links only the CPU trainer, so a CPU run
// maps no CUDA library (152 MiB of the default CPU run's peak memory: benchmarks/README.md).
// GPU runs happen in `train_gpu`, the same command linked with //trainer:gpu, which a build with
// CUDA puts beside `train` (and in its runfiles). `train` hands over with execv: the same
// process, arguments and signals, so neither a shell nor a supervisor sees a difference.
//
//   --devices        this process has the GPU runtime (train_gpu)  -> run here
//   gpu, gpu:<i>...  build with CUDA: exec train_gpu; without: kFailedPrecondition, one line
//                    saying the binary was built without CUDA and how to build it with CUDA
//   "" (default)     a GPU present (/proc/driver/nvidia/gpus, /dev/nvidia0) and a build with
//                    CUDA: exec train_gpu (which picks every GPU, or cpu if none is usable);
//                    otherwise run here on cpu
//   cpu, or a bad    run here (ParseDevices reports a bad value)
//   value
//
// Thread-safety: call from main() before any thread starts (ExecGpuBinary replaces the process).
#ifndef HOGWILD_TRAINER_CLI_GPU_HANDOFF_H_
#define HOGWILD_TRAINER_CLI_GPU_HANDOFF_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hogwild {

// What GpuBinaryFor decides from; ThisProcessGpuFacts() reads them.
struct GpuHandoffFacts {
  bool has_gpu_runtime = false;    // this process links //trainer:gpu (it is train_gpu)
  bool built_with_cuda = false;    // train_gpu was built with this binary
  std::string gpu_binary;          // train_gpu's path beside this binary
  bool gpu_binary_exists = false;  // ... and it is an executable file
  bool gpu_present = false;        // an NVIDIA GPU is visible (cheap check, no CUDA call)
};

// The facts of this process: the registered GPU runtime, the build (//tools:cuda.bzl), the
// directory of /proc/self/exe, and /proc/driver/nvidia/gpus/* or /dev/nvidia0. Never fails:
// what cannot be read counts as absent.
GpuHandoffFacts ThisProcessGpuFacts();

// The binary to exec instead of running here for `--devices=<devices>` (the value as typed, ""
// when not given), or "" to run here; see the table in the file comment. Pure.
// Errors: kFailedPrecondition, one line naming the flag: GPUs asked for in a build without CUDA
// (how to build with it: --config=cuda on a machine with the CUDA toolkit, or --devices=cpu);
// train_gpu missing beside a build with CUDA (its path).
absl::StatusOr<std::string> GpuBinaryFor(const std::string& devices, const GpuHandoffFacts& facts);

// Replaces this process with `path`, given `argv` (null-terminated, argv[0] included). Returns
// only when execv fails: kFailedPrecondition naming the path and the OS reason.
absl::Status ExecGpuBinary(const std::string& path, char* const argv[]);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_GPU_HANDOFF_H_
