// The simulated compute time of one worker step: a mean, a multiplicative jitter and named
// stragglers, drawn from a seeded generator whose output depends only on (seed, worker, the
// worker's step index), never on the order in which the simulation asks for it.
//
//   time(w, k) = step_time_s * factor(w) * exp(jitter * z(w, k) - jitter^2 / 2)
//
// z(w, k) is a standard normal: the log-normal factor has mean 1 and a coefficient of variation
// of sqrt(exp(jitter^2) - 1) (about `jitter` for small jitter), and a time is never negative.
// factor(w) is the worker's straggler slowdown (1 unless named). jitter = 0 gives exactly
// step_time_s * factor(w), with no draw.
//
// Reproducibility: each worker has its own std::mt19937_64 (whose output the C++ standard fixes)
// seeded with SplitMix64(seed + worker); z comes from Box-Muller written here (not
// std::normal_distribution, whose algorithm varies between standard libraries; not
// absl::BitGen, which is not reproducible across versions). The only platform dependence left
// is libm's log, cos and exp, which are deterministic for one build on one machine.
#ifndef HOGWILD_SIM_COMPUTE_TIME_H_
#define HOGWILD_SIM_COMPUTE_TIME_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/straggler.h"

namespace hogwild {

// Ranges of the compute-time options, inclusive.
inline constexpr double kMaxSimStepTimeS = 1e6;
inline constexpr double kMaxSimJitter = 4.0;

struct ComputeTimeOptions {
  double step_time_s = 0.01;  // mean compute time of one step, in (0, kMaxSimStepTimeS]
  double jitter = 0.0;        // log-normal sigma, in [0, kMaxSimJitter]
  // (worker, slowdown factor): as the real runs' StragglerOptions::slowdown (trainer/
  // straggler.h), each worker at most once, factor in [1, kMaxSlowdownFactor].
  std::vector<std::pair<int, double>> stragglers;
};

// Checks the ranges for `num_workers` workers. Errors: kInvalidArgument naming the field
// (`ComputeTimeOptions::jitter`, ...), the value and the allowed range, or the straggler that is
// out of range or named twice.
absl::Status ValidateComputeTimeOptions(const ComputeTimeOptions& options, int num_workers);

// The --stragglers flag is parsed by ParseSlowdown (trainer/straggler.h).

// Draws step times. Thread-safety: none (one simulation thread).
class ComputeTimeSampler {
 public:
  // `options` must be valid for `num_workers` (ValidateComputeTimeOptions).
  ComputeTimeSampler(const ComputeTimeOptions& options, int num_workers, uint64_t seed);

  // The compute time in simulated seconds of worker w's next step (> 0). Calls for different
  // workers may interleave in any order without changing any worker's sequence.
  double Next(int worker);

 private:
  double step_time_s_;
  double jitter_;
  std::vector<double> factor_;            // [W]
  std::vector<std::mt19937_64> engines_;  // [W], empty when jitter = 0
};

}  // namespace hogwild

#endif  // HOGWILD_SIM_COMPUTE_TIME_H_
