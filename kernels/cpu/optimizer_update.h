// The CPU update of every optimizer (kernels/optimizer.h OptimizerFn) over an array, in plain
// memory (sync, local_sgd, per-worker state) and on the Hogwild shared array, element by element
// in index order: bitwise the functor applied element by element. (The SGD family also has the
// vectorized kernels/cpu/sgd_update.h, which the policies use for it; this is the general loop.)
//
// Shapes: P elements, all float32 in host memory:
//   grad:   [P], read only
//   s0, s1: [P] state slots, read and written when the optimizer keeps them
//           (NumStateSlots: s0 for 1 slot, s0 and s1 for 2); may be empty otherwise
//   params: [P], read and written
//   out:    [P], written
// The arrays do not overlap. A size mismatch is a programmer error (abort).
#ifndef HOGWILD_KERNELS_CPU_OPTIMIZER_UPDATE_H_
#define HOGWILD_KERNELS_CPU_OPTIMIZER_UPDATE_H_

#include "absl/types/span.h"
#include "kernels/optimizer.h"

namespace hogwild::cpu {

// params[i] = fn(params[i], grad[i], s0[i], s1[i]) for i in [0, P).
// Thread-safety: none; the arrays belong to the caller for the duration of the call.
void OptimizerUpdate(const OptimizerFn& fn, int num_slots, absl::Span<const float> grad,
                     absl::Span<float> s0, absl::Span<float> s1, absl::Span<float> params);

// The Hogwild! form: OptimizerUpdate() on `shared` ([P] float32, read and updated concurrently by
// other threads), fused with a copy of the result into `out`, with the access rules of
// kernels/cpu/sgd_update.h SharedSgdUpdateAndRead (each element loaded once with a relaxed
// std::atomic_ref load, stored at most once, not stored when bitwise unchanged; lost updates
// possible, torn values impossible; no ordering).
// `shared_state`: false when s0/s1 are private to the caller (--optimizer_state=per_worker);
// true when other threads update them concurrently too (--optimizer_state=shared, A3C's shared
// Adam): then each state element is accessed like a parameter element (one relaxed load, one
// relaxed store), so a concurrent update of the state may be lost too, and an element's state
// and its parameter may come from different workers' updates; nothing is torn.
void SharedOptimizerUpdateAndRead(const OptimizerFn& fn, int num_slots,
                                  absl::Span<const float> grad, absl::Span<float> s0,
                                  absl::Span<float> s1, bool shared_state, float* shared,
                                  absl::Span<float> out);

}  // namespace hogwild::cpu

#endif  // HOGWILD_KERNELS_CPU_OPTIMIZER_UPDATE_H_
