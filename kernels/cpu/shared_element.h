// One element of a Hogwild! shared parameter array: the per-element accesses of the contract in
// sync/parameter_store.h, for code that touches a few elements rather than the whole array
// (SharedSgdUpdateAndRead() uses them for its unaligned ends and in ThreadSanitizer builds; the
// sparse models of sparse/ update only the coordinates of an example's non-zeros with them, the
// paper's Algorithm 1).
//
// - an element is read and written as a whole (std::atomic_ref<float>, relaxed): never torn;
// - an update loads the element once and stores it at most once, with no compare-exchange, so a
//   concurrent update of the same element between the two may be lost;
// - an element whose new value equals the loaded one bitwise is not written;
// - no ordering between threads (relaxed, no fence); publish with your own release.
// `element` is a naturally aligned float that other threads may access only through these
// functions (or the array functions of kernels/cpu/sgd_update.h) while they run.
#ifndef HOGWILD_KERNELS_CPU_SHARED_ELEMENT_H_
#define HOGWILD_KERNELS_CPU_SHARED_ELEMENT_H_

#include <atomic>
#include <bit>
#include <cstdint>

#include "kernels/functors.h"

namespace hogwild::cpu {

static_assert(std::atomic_ref<float>::is_always_lock_free,
              "the Hogwild contract needs lock-free 32-bit atomics");
static_assert(std::atomic_ref<float>::required_alignment <= alignof(float));

// Loads a shared element as a whole. Thread-safe with any concurrent shared access.
inline float SharedLoad(const float* element) {
  // atomic_ref needs a non-const referent; a load does not write it.
  return std::atomic_ref<float>(*const_cast<float*>(element)).load(std::memory_order_relaxed);
}

// *element <- sgd(*element, grad, velocity): one relaxed load, the functor, at most one relaxed
// store (none when the value is unchanged bitwise). Returns the value left by this call.
// `velocity` is private to the caller (read and written only when sgd.momentum != 0).
inline float SharedSgdElement(const SgdMomentumFn& sgd, float grad, float& velocity,
                              float* element) {
  std::atomic_ref<float> shared(*element);
  const float old_value = shared.load(std::memory_order_relaxed);
  const float new_value = sgd(old_value, grad, velocity);
  if (std::bit_cast<uint32_t>(old_value) != std::bit_cast<uint32_t>(new_value)) {
    shared.store(new_value, std::memory_order_relaxed);
  }
  return new_value;
}

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_SHARED_ELEMENT_H_
