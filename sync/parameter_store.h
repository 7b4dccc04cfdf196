// The shared parameter array of a training run and its Hogwild! contract.
//
// Niu, Recht, Ré, Wright, "HOGWILD!: A Lock-Free Approach to Parallelizing Stochastic Gradient
// Descent", NIPS 2011: workers read and update the shared parameters with no lock.
//
// The contract (tested in tests/parameter_store_test.cc):
// - Lost updates are allowed: when two workers update one element concurrently, one worker's
//   read-modify-write may overwrite the other's, so that update is lost.
// - Torn values are impossible: every element is an aligned 32-bit float, read and written only
//   by kernels/cpu/sgd_update.h's shared functions (SharedRead, SharedSgdUpdateAndRead), as a
//   whole: with std::atomic_ref<float> relaxed loads and stores, or, on x86-64, with aligned
//   16-byte SSE loads and stores written as inline assembly, which the processor performs as
//   single-copy-atomic accesses of each naturally aligned 4-byte element (Intel SDM vol. 3A
//   9.1.1; AMD APM vol. 2 7.3.2: 16-byte aligned SSE accesses are even atomic as a whole on
//   processors with AVX). Each value read is one that some writer stored (or the initial value).
//   The program has no data race in the C++ sense (the assembly is outside the C++ abstract
//   machine: the compiler can neither split, repeat nor invent those accesses), so it has no
//   undefined behaviour. ThreadSanitizer builds use the atomic_ref loops everywhere, so the tool
//   sees every access and stays quiet.
// - An update loads each element once and stores it at most once (no compare-exchange: that is
//   what makes lost updates possible and the update lock-free and wait-free). An element whose
//   new value equals the old one bitwise is not written, so a worker that does not change an
//   element never overwrites another worker's concurrent update of it.
// - No ordering between workers: a worker may see another's updates in any order, late, or
//   partially (some elements of an update but not others). A worker sees its own writes.
// - Staleness of an update = number of updates that other workers applied between this
//   worker's Read() and its update (from the version counter). Zhang et al., "Staleness-aware
//   Async-SGD for Distributed Deep Learning", IJCAI 2016.
//
// Memory: P floats of host memory, 64-byte aligned. (GPU workers keep the shared array in
// device or pinned memory instead, with the device form of this contract: sync/device_hogwild.h.
// There this store still holds the initial values and counts the updates.)
#ifndef HOGWILD_SYNC_PARAMETER_STORE_H_
#define HOGWILD_SYNC_PARAMETER_STORE_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/functors.h"
#include "kernels/optimizer.h"

namespace hogwild {

class ParameterStore {
 public:
  // Allocates `num_params` (P >= 0) floats, all 0, version 0. Errors: kResourceExhausted with
  // the bytes asked when the memory cannot be allocated; kInvalidArgument for P < 0.
  static absl::StatusOr<std::unique_ptr<ParameterStore>> Create(int64_t num_params);
  // Like Create(), for sizes a program chooses (tests, benchmarks): aborts when allocation fails.
  explicit ParameterStore(int64_t num_params);
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  int64_t size() const { return size_; }

  // Direct access for initialization, checkpoint restore and the synchronous mode, whose
  // barrier orders every write before every read. Not for concurrent use with SgdUpdateAndRead().
  absl::Span<float> unsafe_values() { return absl::MakeSpan(values_.get(), size_); }
  absl::Span<const float> unsafe_values() const { return absl::MakeConstSpan(values_.get(), size_); }

  // Copies all P values into `out` ([P] float32) with relaxed atomic (or vector) loads and
  // returns the version observed before the copy began (for staleness).
  // Thread-safety: safe concurrently with SgdUpdateAndRead() and other Read()s; the copy may mix
  // values from before and after a concurrent update (never a torn element).
  uint64_t Read(absl::Span<float> out) const;

  // One SGD step (kernels/functors.h SgdMomentumFn: momentum, weight decay, PyTorch's
  // convention) on the shared values, fused with a Read() of the result, in one pass:
  //   values[i] <- sgd(values[i], grad[i], velocity[i]);   out[i] <- the value left in values[i]
  // for all i, bitwise as the functor applied element by element (kernels/cpu/sgd_update.h,
  // SharedSgdUpdateAndRead, four elements per SSE instruction). Hogwild's next snapshot comes
  // out of its update this way, halving the memory traffic per step; with one worker `out`
  // equals a Read() after the update bitwise. Does not count the update: CompleteUpdate() does.
  //   grad:     [P] float32, private to the caller
  //   velocity: [P] float32, private to the caller (this worker's momentum buffer), read and
  //             written when sgd.momentum != 0; may be empty otherwise
  //   out:      [P] float32, private to the caller
  // Thread-safety: safe concurrently with Read() and SgdUpdateAndRead(); see the contract above.
  // The copy may mix values from before and after a concurrent update, like Read().
  // `offset`: the update covers values [offset, offset + grad.size()) instead of all P (grad,
  // velocity and out are then that long): the pieces of weight_decay_biases = false.
  void SgdUpdateAndRead(const SgdMomentumFn& sgd, absl::Span<const float> grad,
                        absl::Span<float> velocity, absl::Span<float> out, int64_t offset = 0);

  // The same for any optimizer (kernels/optimizer.h OptimizerFn, element by element, not
  // vectorized; kernels/cpu/optimizer_update.h SharedOptimizerUpdateAndRead):
  //   values[i] <- fn(values[i], grad[i], s0[i], s1[i]);   out[i] <- the value left in values[i]
  //   s0, s1: [P] float32 state slots (num_slots of them, else may be empty); private to the
  //           caller when shared_state is false, else shared with the other workers and accessed
  //           like the values (relaxed loads and stores, updates may be lost, never torn).
  // Thread-safety as SgdUpdateAndRead(). Does not count the update.
  void OptimizerUpdateAndRead(const OptimizerFn& fn, int num_slots, absl::Span<const float> grad,
                              absl::Span<float> s0, absl::Span<float> s1, bool shared_state,
                              absl::Span<float> out, int64_t offset = 0);

  // Number of updates applied so far (incremented by CompleteUpdate()).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Records one applied update and returns the version before it. Release ordering pairs with
  // the acquire in version()/Read(), so a reader that sees the new version also sees this
  // worker's stores of the update.
  uint64_t CompleteUpdate() { return version_.fetch_add(1, std::memory_order_acq_rel); }

  // Sets the version (checkpoint restore: the learning-rate schedule and the step count continue
  // from the checkpoint's global step). Not for concurrent use with updates or CompleteUpdate().
  void RestoreVersion(uint64_t version) { version_.store(version, std::memory_order_release); }

 private:
  struct NoAllocation {};
  ParameterStore(int64_t num_params, NoAllocation) : size_(num_params) {}
  // Allocates and zeroes the array; false when out of memory.
  bool Allocate();

  struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
  };

  int64_t size_;
  std::unique_ptr<float[], FreeDeleter> values_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_PARAMETER_STORE_H_
