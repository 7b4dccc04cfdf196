// The shared parameter array of a training run and its Hogwild! contract.
//
// Niu, Recht, Ré, Wright, "HOGWILD!: A Lock-Free Approach to Parallelizing Stochastic Gradient
// Descent", NIPS 2011: workers read and update the shared parameters with no lock.
//
// The contract (tested in tests/parameter_store_test.cc):
// - Lost updates are allowed: when two workers update one element concurrently, one worker's
//   read-modify-write may overwrite the other's, so that update is lost.
// - Torn values are impossible: every element is an aligned 32-bit float accessed only through
//   std::atomic_ref<float> (relaxed), or, in the vectorized Read() and SgdUpdateAndRead() on
//   x86-64, through aligned 16-byte SSE loads and stores written as inline assembly, which the
//   processor performs as single-copy-atomic accesses of each naturally aligned 4-byte element
//   (Intel SDM vol. 3A 9.1.1; AMD APM vol. 2 7.3.2: 16-byte aligned SSE accesses are even
//   atomic as a whole on processors with AVX). Each value read is one that some writer stored
//   (or the initial value). The program has no data race in the C++ sense (the assembly is
//   outside the C++ abstract machine: the compiler can neither split, repeat nor invent those
//   accesses), so it has no undefined behaviour. ThreadSanitizer builds use the atomic_ref
//   loop everywhere, so the tool sees every access and stays quiet.
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
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

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
  // barrier orders every write before every read. Not for concurrent use with Update().
  absl::Span<float> unsafe_values() { return absl::MakeSpan(values_.get(), size_); }
  absl::Span<const float> unsafe_values() const { return absl::MakeConstSpan(values_.get(), size_); }

  // Copies all P values into `out` ([P] float32) with relaxed atomic (or vector) loads and
  // returns the version observed before the copy began (for staleness).
  // Thread-safety: safe concurrently with Update() and other Read()s; the copy may mix values
  // from before and after a concurrent update (never a torn element).
  uint64_t Read(absl::Span<float> out) const;

  // values[i] = fn(i, values[i]) for i in [begin, end), each element read and written with a
  // relaxed atomic load and store (not a compare-exchange: that is what makes lost updates
  // possible and the update lock-free and wait-free). An element whose new value equals the old
  // one bitwise is not written, so a worker that does not touch an element never overwrites
  // another worker's concurrent update of it.
  // Thread-safety: safe concurrently with Read() and Update(); see the contract above.
  template <typename Fn>
  void Update(int64_t begin, int64_t end, Fn&& fn) {
    float* values = values_.get();
    for (int64_t i = begin; i < end; ++i) {
      std::atomic_ref<float> element(values[i]);
      const float old_value = element.load(std::memory_order_relaxed);
      const float new_value = fn(i, old_value);
      if (!BitwiseEqual(old_value, new_value)) element.store(new_value, std::memory_order_relaxed);
    }
  }

  // Update() fused with a Read() of the same elements, in one pass over the array: for i in
  // [begin, end), out[i] ([P] float32, private to the caller) receives the value this call left
  // in element i (the new value, or the loaded one when unchanged). Hogwild's next snapshot
  // comes out of its update this way, halving the memory traffic per step; with one worker the
  // result equals Update() followed by Read() bitwise. Same atomicity and thread-safety as
  // Update(); the copy may mix values from before and after a concurrent update, like Read().
  template <typename Fn>
  void UpdateAndRead(int64_t begin, int64_t end, Fn&& fn, float* out) {
    float* values = values_.get();
    for (int64_t i = begin; i < end; ++i) {
      std::atomic_ref<float> element(values[i]);
      const float old_value = element.load(std::memory_order_relaxed);
      const float new_value = fn(i, old_value);
      if (!BitwiseEqual(old_value, new_value)) element.store(new_value, std::memory_order_relaxed);
      out[i] = new_value;
    }
  }

  // Plain SGD with L2 weight decay (kernels/functors.h SgdMomentumFn with momentum 0) fused with
  // the read, vectorized:
  //   values[i] <- values[i] - lr * (grad[i] + weight_decay * values[i]);   out[i] <- values[i]
  // for all i. Bitwise the same as UpdateAndRead(0, P, SgdMomentumFn{lr, 0, weight_decay}, out)
  // (separately rounded multiply and add, no FMA), including the rule that an element whose
  // value does not change is not written. This is Hogwild's whole update on the CPU: four
  // elements per instruction instead of one, which took the update from a sixth of the MLP step
  // to a few percent.
  //   grad: [P] float32, private to the caller;  out: [P] float32, private to the caller
  // Thread-safety: like UpdateAndRead().
  void SgdUpdateAndRead(absl::Span<const float> grad, float lr, float weight_decay,
                        absl::Span<float> out);

  // Number of updates applied so far (incremented by CompleteUpdate()).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Records one applied update and returns the version before it. Release ordering pairs with
  // the acquire in version()/Read(), so a reader that sees the new version also sees this
  // worker's stores of the update.
  uint64_t CompleteUpdate() { return version_.fetch_add(1, std::memory_order_acq_rel); }

  // Sets the version (checkpoint restore: the learning-rate schedule and the step count continue
  // from the checkpoint's global step). Not for concurrent use with Update()/CompleteUpdate().
  void RestoreVersion(uint64_t version) { version_.store(version, std::memory_order_release); }

 private:
  // Inline (not in the .cc): it runs once per element of every update, and an out-of-line call
  // there cost as much as the update arithmetic itself.
  static bool BitwiseEqual(float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  }

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
