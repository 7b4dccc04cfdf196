// The CPU SGD update: kernels/functors.h's SgdMomentumFn over an array, four elements per SSE
// instruction. The one CPU source of the update: TowerAverage and the CPU backend update plain
// memory with SgdUpdate(); the Hogwild store updates its shared array with
// SharedSgdUpdateAndRead() and copies it with SharedRead().
//
// Results are bitwise those of the functor applied element by element in index order: the same
// operations in the same order, each rounded to float (the vector multiply and add are never
// fused into an FMA: the library is built with -ffp-contract=off, and the x86-64 baseline has no
// FMA instruction anyway), for any momentum and weight decay. tests/tower_average_test.cc and
// tests/hogwild_test.cc compare them bitwise with the functor at a size that is not a multiple
// of four.
//
// Shapes: P elements (any P >= 0, any alignment), all float32 in host memory:
//   grad:     [P], read only
//   velocity: [P], read and written when sgd.momentum != 0 (PyTorch's momentum buffer); ignored
//             and may be empty when sgd.momentum == 0
//   params:   [P], read and written
//   out:      [P], written
// grad, velocity, params and out do not overlap. A size mismatch is a programmer error (abort).
#ifndef HOGWILD_KERNELS_CPU_SGD_UPDATE_H_
#define HOGWILD_KERNELS_CPU_SGD_UPDATE_H_

#include "absl/types/span.h"
#include "kernels/functors.h"

namespace hogwild::cpu {

// params[i] = sgd(params[i], grad[i], velocity[i]) for i in [0, P).
// Thread-safety: none; the arrays belong to the caller for the duration of the call.
void SgdUpdate(const SgdMomentumFn& sgd, absl::Span<const float> grad, absl::Span<float> velocity,
               absl::Span<float> params);

// The Hogwild! form (Niu et al., NIPS 2011): SgdUpdate() on an array `shared` ([P] float32) that
// other threads read and update concurrently with this function and SharedRead(), fused with a
// copy of the result: out[i] receives the value this call left in shared[i].
//
// Memory accesses of `shared` (the contract of sync/parameter_store.h):
// - every element is read and written as a whole: with aligned 16-byte SSE loads and stores that
//   are inline assembly on x86-64 (single-copy atomic for each naturally aligned 4-byte element:
//   Intel SDM vol. 3A 9.1.1, AMD APM vol. 2 7.3.2; the compiler can neither split, repeat nor
//   invent them), and with std::atomic_ref<float> relaxed loads and stores elsewhere (the
//   elements before the first 16-byte boundary and after the last, and everywhere in
//   ThreadSanitizer builds, so that the tool sees every access). No element is ever torn.
// - an element is loaded once and stored at most once, with no compare-exchange: a concurrent
//   update of it between the two may be lost.
// - an element whose new value equals the loaded one bitwise is not written, so a worker whose
//   update leaves an element unchanged never overwrites another worker's update of it.
// - no ordering: relaxed, no fence. The caller publishes with its own release (the store's
//   version counter).
// velocity and out are private to the caller.
void SharedSgdUpdateAndRead(const SgdMomentumFn& sgd, absl::Span<const float> grad,
                            absl::Span<float> velocity, float* shared, absl::Span<float> out);

// out[i] = shared[i] for i in [0, P), each element loaded as a whole (the loads of
// SharedSgdUpdateAndRead()). The copy may mix values from before and after a concurrent update.
void SharedRead(const float* shared, absl::Span<float> out);

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_SGD_UPDATE_H_
