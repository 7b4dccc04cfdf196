// Streaming DiLoCo's options of local_sgd: Douillard et al., "Streaming DiLoCo with overlapping
// communication: Towards a Distributed Free Lunch", arXiv 2501.18512, 2025 (Algorithm 1).
//
// The P parameters are split into F fragments that are exchanged at staggered local steps rather
// than all at once: fragment p is exchanged when the workers' local step count s (the same for
// every worker, each worker counting its own steps from 1) satisfies
//
//   s >= 1  and  (s - offset_p) mod H == 0,   offset_p = floor(p * H / F)
//
// (H = average_every), so each fragment is still exchanged every H steps and the F exchanges of
// one period fall on F distinct steps (F <= H). An exchange of fragment p at step s averages the
// replicas' fragment p as they are at step s, applies the outer optimizer
// (sync/outer_optimizer.h) to the shared parameters' fragment p with that mean, and merges the
// result theta_p into every worker's replica tau = overlap_steps local steps later (the exchange
// overlaps those tau steps), with the mixing factor alpha = mix_alpha:
//
//   replica_p = alpha * replica_p + (1 - alpha) * theta_p            (at the end of step s + tau)
//
// alpha = 0 replaces the fragment (a copy, bitwise), so F = 1, tau = 0, alpha = 0 (the defaults)
// is local SGD / DiLoCo exactly as without these options.
//
// What differs from the paper: the fragments are contiguous slices of the flat parameter vector,
// [floor(P * p / F), floor(P * (p + 1) / F)), where the paper groups layers strided over the
// depth (fragment p holds layers p, p + F, ...), so here a fragment is part of one or a few
// adjacent layers; the schedule and the equations are the paper's. The inner optimizer is any of
// ours (kernels/optimizer.h; the paper's is AdamW).
#ifndef HOGWILD_SYNC_STREAMING_H_
#define HOGWILD_SYNC_STREAMING_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace hogwild {

struct StreamingOptions {
  int fragments = 1;          // F, in [1, min(kMaxFragments, H, P)]
  int64_t overlap_steps = 0;  // tau, in [0, H): the steps an exchange overlaps
  float mix_alpha = 0.0f;     // alpha, in [0, 1): the weight of the replica's own fragment

  // Whether these are the defaults (plain local SGD / DiLoCo, bitwise). Pure.
  bool is_default() const { return fragments == 1 && overlap_steps == 0 && mix_alpha == 0.0f; }

  bool operator==(const StreamingOptions&) const = default;
};

// The most fragments accepted (the paper uses up to a few dozen).
inline constexpr int kMaxFragments = 1024;

// OK when every field is in range for the averaging period `average_every` (H >= 1) and
// `num_params` parameters (P; 0 when not known yet, which skips the F <= P check); else
// kInvalidArgument naming the field as `prefix` + its name
// ("TrainerOptions::streaming.fragments=9 is out of range; it must be in [1, 8] ..."). Pure.
absl::Status CheckStreamingOptions(const StreamingOptions& streaming, int64_t average_every,
                                   int64_t num_params, const char* prefix);

// The schedule of F fragments over P parameters with period H (see the top of this file). All
// members are pure; F in [1, H].
class FragmentSchedule {
 public:
  FragmentSchedule(int fragments, int64_t average_every, int64_t num_params)
      : fragments_(fragments), period_(average_every), num_params_(num_params) {}

  int fragments() const { return fragments_; }
  // Fragment p's parameters: [begin(p), end(p)), contiguous, in order, covering [0, P).
  int64_t begin(int p) const { return num_params_ * p / fragments_; }
  int64_t end(int p) const { return num_params_ * (p + 1) / fragments_; }
  // offset_p = floor(p * H / F), in [0, H), strictly increasing in p.
  int64_t offset(int p) const { return period_ * p / fragments_; }
  // The fragment exchanged at the end of local step s (>= 1), or -1 when none is.
  int ExchangedAt(int64_t step) const;
  // The last step in [1, step] at which fragment p was exchanged, or 0 when none.
  int64_t LastExchange(int p, int64_t step) const;

 private:
  int fragments_;
  int64_t period_;
  int64_t num_params_;
};

// Merges an exchanged fragment into a replica (the equation above), element by element:
//
//   theta:   [n] float32, the shared parameters' fragment after the outer step
//   replica: [n] float32, the worker's fragment, updated in place
//
// alpha == 0 copies theta (bitwise); else replica = alpha * replica + (1 - alpha) * theta in
// float32, the same operations on threads and in the simulator. Not thread-safe on one replica.
void MixIntoReplica(float alpha, absl::Span<const float> theta, absl::Span<float> replica);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_STREAMING_H_
