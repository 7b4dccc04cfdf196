// How much memory a training run will need, estimated before anything is allocated, so that a
// model too large for the machine is refused with the numbers instead of growing until the
// kernel kills it.
//
//   HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Create(spec));
//   const MemoryEstimate estimate = EstimateTrainingMemory(options, *model, train.size());
//   HOGWILD_RETURN_IF_ERROR(CheckMemoryFits(estimate, AvailableMemoryBytes()));
#ifndef HOGWILD_TRAINER_MEMORY_ESTIMATE_H_
#define HOGWILD_TRAINER_MEMORY_ESTIMATE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "trainer/model/model.h"
#include "trainer/trainer_options.h"

namespace hogwild {

// Bytes of host memory by what holds them (P parameters, W workers, B the batch_size, D input
// features, N training examples; floats are 4 bytes).
struct MemoryEstimate {
  int64_t parameters_bytes = 0;   // the shared parameters [P] and the result's copy [P]
  int64_t snapshots_bytes = 0;    // per-worker parameter copies [W, P]: async's (ssp, locked,
                                  // round_robin) snapshots, backup's, local_sgd's replicas; 0
                                  // in sync mode
  int64_t optimizer_bytes = 0;    // optimizer state [owners, slots, P] (slots: kernels/optimizer.h
                                  // NumStateSlots, 0 for plain SGD; owners: W with per-worker
                                  // state in async, ssp and local_sgd, else 1)
  int64_t gradients_bytes = 0;    // per-worker gradients [W, P], and sync's average [P]
  int64_t activations_bytes = 0;  // per-worker towers: activations [W, B, sum of layer widths],
                                  // two backward buffers [W, 2, B, widest], im2col columns
  int64_t input_bytes = 0;        // per-worker queues: (prefetch + 2) batches, data orders [W, 2N]
  int64_t evaluation_bytes = 0;   // the evaluator's tower (1000 examples) and parameter copies
  int64_t checkpoint_bytes = 0;   // with a checkpoint_dir: the captured state and its file image

  int64_t total_bytes() const;
  // "70.1 GiB (parameters 34.8 GiB, parameter snapshots 17.4 GiB, ...)", the non-zero parts.
  std::string ToString() const;
};

// The host memory Train(options, train, test) will allocate beyond the datasets it is given,
// for `model` (built from options.model and the dataset's shape) and a training set of
// `train_examples` examples (0: the data-order term is left out), with `has_test_set` saying
// whether an evaluator is built.
//
// Contract: an upper bound on the heap bytes a CPU run holds at its peak, within a factor of 2
// when parameters or activations dominate (tests/input_limits_test.cc measures real runs).
// Not included: the datasets themselves, thread stacks, OpenBLAS's own buffers and allocator
// slack (a few MiB per worker). GPU workers: only the host side is estimated; device memory is
// not, and its allocation failures are kResourceExhausted from the CUDA layer. Saturates at
// INT64_MAX instead of overflowing. Pure, thread-safe.
MemoryEstimate EstimateTrainingMemory(const TrainerOptions& options, const Model& model,
                                      int64_t train_examples, bool has_test_set = true);

// Address space a thread reserves beyond what it touches: its stack and the buffer OpenBLAS maps
// for each thread that calls it (BUFFER_SIZE, 32 << 22 bytes on x86-64). Only a limit on the
// address space (RLIMIT_AS, `ulimit -v`) counts it; resident memory holds a few MiB of it.
inline constexpr int64_t kAddressSpacePerThreadBytes = (int64_t{128} + 8) << 20;

// Bytes of memory this process can still allocate without swapping: /proc/meminfo's
// MemAvailable (else sysconf(_SC_AVPHYS_PAGES) pages), lowered to a cgroup v2 limit's headroom
// (memory.max - memory.current) when one applies, and to the address-space limit's headroom
// (RLIMIT_AS, `ulimit -v`: the limit - /proc/self/status's VmSize - `threads` x
// kAddressSpacePerThreadBytes, for the threads the run will start) when one is set: past it an
// allocation fails (OpenBLAS then spins, operator new throws) instead of the refusal with the
// numbers. nullopt when none of them can be read. Thread-safe.
std::optional<int64_t> AvailableMemoryBytes(int threads = 1);

// OK when `estimate` fits in `available_bytes` (nullopt: unknown, nothing is refused); else
// kResourceExhausted naming the estimate, its parts and the memory available. Pure.
absl::Status CheckMemoryFits(const MemoryEstimate& estimate,
                             std::optional<int64_t> available_bytes);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_MEMORY_ESTIMATE_H_
