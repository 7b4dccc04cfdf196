// The outer optimizer of local SGD: what the averaging of the workers' replicas does with their
// mean. DiLoCo (Douillard et al., "DiLoCo: Distributed Low-Communication Training of Language
// Models", arXiv 2311.08105, Algorithm 1): every H inner steps the pseudo-gradient
//
//   delta = theta - mean_w(theta_w)        (the shared parameters minus the replicas' mean)
//
// is applied to theta by an outer SGD with (Nesterov) momentum, PyTorch's torch.optim.SGD rule
// (dampening 0; the first step's buffer is delta itself, as 0 * mu + delta):
//
//   buf   = mu * buf + delta
//   step  = nesterov ? delta + mu * buf : buf
//   theta = theta - outer_lr * step
//
// The paper's values are outer_lr 0.7, mu 0.9, Nesterov, with AdamW as the inner optimizer and
// H = 500. Plain model averaging (local SGD, Stich 2019) is the default: outer_lr 1 and mu 0,
// which set theta to the mean exactly (no rounding through delta), so local_sgd's runs do not
// change when no outer option is given.
#ifndef HOGWILD_SYNC_OUTER_OPTIMIZER_H_
#define HOGWILD_SYNC_OUTER_OPTIMIZER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace hogwild {

struct OuterOptimizer {
  float lr = 1.0f;        // outer_lr, in (0, kMaxOuterLr]
  float momentum = 0.0f;  // mu, in [0, 1)
  bool nesterov = false;  // needs momentum > 0

  // Whether the outer step is plain averaging (lr 1, momentum 0): theta becomes the mean. Pure.
  bool is_averaging() const { return lr == 1.0f && momentum == 0.0f; }
  // Whether the outer step keeps a momentum buffer ([P] floats, part of the checkpoint). Pure.
  bool has_momentum() const { return momentum > 0.0f; }

  bool operator==(const OuterOptimizer&) const = default;
};

// DiLoCo's outer optimizer as the paper tunes it (Douillard et al. 2023, section 3): outer lr 0.7,
// Nesterov momentum 0.9.
inline constexpr OuterOptimizer kDiloco{.lr = 0.7f, .momentum = 0.9f, .nesterov = true};

// The largest outer learning rate accepted: past 2 the step overshoots the mean by more than the
// distance to it even without momentum, which diverges.
inline constexpr float kMaxOuterLr = 2.0f;

// OK when every field is in range; else kInvalidArgument naming the field as `prefix` + its name
// ("TrainerOptions::outer.lr=3 is out of range; it must be in (0, 2]"). Pure.
absl::Status CheckOuterOptimizer(const OuterOptimizer& outer, const char* prefix);

// One outer step over a slice of the parameters (the equations above), element by element:
//
//   mean:     [n] float32, mean_w(theta_w) on this slice
//   momentum: [n] float32, this slice of the outer momentum buffer (read and written); empty
//             when !outer.has_momentum()
//   params:   [n] float32, theta on this slice, updated in place
//
// With is_averaging(), params = mean (a copy). The same float32 operations in the same order on
// threads and in the simulator, so their runs agree bitwise. Not thread-safe on overlapping
// slices; disjoint slices may run concurrently.
void ApplyOuterStep(const OuterOptimizer& outer, absl::Span<const float> mean,
                    absl::Span<float> momentum, absl::Span<float> params);

// The largest delayed-Nesterov period accepted (pushes between two momentum updates).
inline constexpr int64_t kMaxDelayedNesterov = 1 << 20;

// OK when `delayed_nesterov` (N, pushes between two updates of the outer momentum) is in
// [1, kMaxDelayedNesterov] and, when N > 1, the outer optimizer has momentum (without it there
// is nothing to delay); else kInvalidArgument naming `name` ("ModeOptions::delayed_nesterov")
// and, for the missing momentum, the caller's spelling of the outer momentum, `momentum_option`
// ("ModeOptions::outer.momentum", "--outer_momentum"). Pure.
absl::Status CheckDelayedNesterov(int64_t delayed_nesterov, const OuterOptimizer& outer,
                                  const char* name, const char* momentum_option);

// One push of asynchronous local SGD (sync/async_local_sgd.h): one worker's pseudo-gradient
// g = anchor - replica (the parameters it pulled minus its replica after its local steps) applied
// to theta at once by the outer optimizer, with the delayed Nesterov update of Liu et al.,
// "Asynchronous Local-SGD Training for Language Modeling", arXiv 2401.09135, section 5.1
// (momentum activation c = 0, the paper's default). For the t-th push (t = 1, 2, ...) and
// period N:
//
//   sum  = sum + g
//   if t % N == 0:  m     = mu * m_old + sum / N;  sum = 0
//                   theta = theta - outer_lr * (g / N + mu * (nesterov ? m : m_old))
//   else:           theta = theta - outer_lr * g / N
//
// so that over every N pushes theta moves by exactly one outer step (ApplyOuterStep's rule) on
// the mean of their N pseudo-gradients, and the momentum advances once per N pushes instead of
// once per push. N = 1 is the naive outer optimizer, each push one outer step on its own g:
// with lr 1 and no momentum theta simply gains the worker's progress, computed as
// theta = (theta - anchor) + replica so that where no other push moved theta since the pull it
// becomes the replica exactly (one worker is then sequential SGD, bitwise).
//
//   anchor, replica: [n] float32, this slice of the worker's pulled parameters and replica
//   momentum:        [n] float32, the outer momentum buffer m (read and written); empty when
//                    !outer.has_momentum()
//   sum:             [n] float32, the pseudo-gradients summed since the last momentum update
//                    (read and written); may be empty when N == 1
//   params:          [n] float32, theta, updated in place
//
// `push` is t >= 1, `delayed_nesterov` is N >= 1 (CheckDelayedNesterov). Not thread-safe on
// overlapping slices.
void ApplyPushedOuterStep(const OuterOptimizer& outer, int64_t delayed_nesterov, int64_t push,
                          absl::Span<const float> anchor, absl::Span<const float> replica,
                          absl::Span<float> momentum, absl::Span<float> sum,
                          absl::Span<float> params);

// The squared L2 norm of an outer step's change of (a slice of) the shared parameters,
// accumulated in float64 in index order:
//
//   after, before: [n] float32, the slice after and before the outer step
//
// returns sum_i (after_i - before_i)^2. The log's outer_step_norm (UpdatePolicy::
// communication) is the square root of its sum over every slice of the P parameters. Pure.
double SquaredStepNorm(absl::Span<const float> after, absl::Span<const float> before);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_OUTER_OPTIMIZER_H_
