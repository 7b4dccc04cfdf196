// The shared parameter array of a training run and its Hogwild! contract.
//
// Niu, Recht, Ré, Wright, "HOGWILD!: A Lock-Free Approach to Parallelizing Stochastic Gradient
// Descent", NIPS 2011: workers read and update the shared parameters with no lock.
//
// The contract (tested in tests/parameter_store_test.cc):
// - Lost updates are allowed: when two workers update one element concurrently, one worker's
//   read-modify-write may overwrite the other's, so that update is lost.
// - Torn values are impossible: every element is an aligned 32-bit float accessed only through
//   std::atomic_ref<float> (relaxed). Each value read is one that some writer stored (or the
//   initial value). The program has no data race in the C++ sense, so it has no undefined
//   behaviour and ThreadSanitizer stays quiet.
// - No ordering between workers: a worker may see another's updates in any order, late, or
//   partially (some elements of an update but not others). A worker sees its own writes.
// - Staleness of an update = number of updates that other workers applied between this
//   worker's Read() and its update (from the version counter). Zhang et al., "Staleness-aware
//   Async-SGD for Distributed Deep Learning", IJCAI 2016.
//
// Memory: P floats of host memory, 64-byte aligned.
#ifndef HOGWILD_SYNC_PARAMETER_STORE_H_
#define HOGWILD_SYNC_PARAMETER_STORE_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/types/span.h"

namespace hogwild {

class ParameterStore {
 public:
  // Allocates `num_params` (P >= 0) floats, all 0, version 0.
  explicit ParameterStore(int64_t num_params);
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  int64_t size() const { return size_; }

  // Direct access for initialization, checkpoint restore and the synchronous mode, whose
  // barrier orders every write before every read. Not for concurrent use with Update().
  absl::Span<float> unsafe_values() { return absl::MakeSpan(values_.get(), size_); }
  absl::Span<const float> unsafe_values() const { return absl::MakeConstSpan(values_.get(), size_); }

  // Copies all P values into `out` ([P] float32) with relaxed atomic loads and returns the
  // version observed before the copy began (for staleness).
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
  static bool BitwiseEqual(float a, float b);

  struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
  };

  int64_t size_;
  std::unique_ptr<float[], FreeDeleter> values_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_PARAMETER_STORE_H_
