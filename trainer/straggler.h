// Stragglers on real threads: workers held back after their steps, so that a study can measure
// how each update policy copes with slow or erratic workers (Chen et al., "Revisiting
// Distributed Synchronous SGD", 2016, model them the same two ways):
//   - a fixed slowdown: worker w's steps take `factor` times as long as they compute, because
//     after a step whose compute took t it waits (factor - 1) * t;
//   - random delays: after any step, with probability p, an extra delay drawn from an
//     exponential distribution with mean `delay_mean`.
// Both are deterministic functions of (seed, worker, step): a run's delays do not depend on how
// the threads interleave, and the convergence log records them (column `delay_s`).
//
//   StragglerModel model(options.stragglers, options.seed);
//   gate.SleepFor(model.DelayAfter(worker, step, compute_time));
#ifndef HOGWILD_TRAINER_STRAGGLER_H_
#define HOGWILD_TRAINER_STRAGGLER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace hogwild {

inline constexpr double kMaxSlowdownFactor = 1000.0;
inline constexpr absl::Duration kMaxDelayMean = absl::Seconds(60);

struct StragglerOptions {
  // (worker, factor): that worker's steps take `factor` times their compute time, factor in
  // [1, kMaxSlowdownFactor]; each worker at most once.
  std::vector<std::pair<int, double>> slowdown;
  // After each step of every worker, with this probability in [0, 1], an extra delay drawn
  // from Exp(mean = delay_mean), delay_mean in (0, kMaxDelayMean] when the probability is > 0.
  double delay_probability = 0.0;
  absl::Duration delay_mean = absl::ZeroDuration();

  bool enabled() const { return !slowdown.empty() || delay_probability > 0.0; }
};

// "1:3,4:1.5" (worker:factor pairs) into StragglerOptions::slowdown, and "50ms@0.1" (mean delay,
// in Abseil's duration syntax, at a probability) into delay_mean and delay_probability. The
// ranges are checked by ValidateStragglerOptions. Errors: kInvalidArgument naming `flag`, the
// text and the expected form.
absl::StatusOr<std::vector<std::pair<int, double>>> ParseSlowdown(const std::string& flag,
                                                                  const std::string& text);
absl::Status ParseRandomDelay(const std::string& flag, const std::string& text,
                              StragglerOptions& options);

// OK, or kInvalidArgument naming the field (TrainerOptions::stragglers.<field>), its value and
// the allowed range, for `num_workers` workers.
absl::Status ValidateStragglerOptions(const StragglerOptions& options, int num_workers);

class StragglerModel {
 public:
  StragglerModel(StragglerOptions options, uint64_t seed);

  // The delay worker `worker` adds after its step `step` (its own step index) whose compute
  // took `compute`: (factor - 1) * compute for a slowed worker, plus, with the configured
  // probability, an exponential delay. The random part is a hash of (seed, worker, step)
  // (SplitMix64; the exponential by inversion, -mean * ln(1 - u)), so it is the same in every
  // run and on every thread. Pure; thread-safe.
  absl::Duration DelayAfter(int worker, int64_t step, absl::Duration compute) const;

  bool enabled() const { return options_.enabled(); }

 private:
  StragglerOptions options_;
  uint64_t seed_;
};

// A cancellable sleep for the workers' delays: SleepFor returns after `delay`, or early once
// Cancel() was called or `*stop` (may be null) became true (checked at least every 50 ms), so a
// delay never holds up an error's cancellation or an orderly stop; the worker's next policy or
// boundary call then reports it. Thread-safe; Cancel() is idempotent.
class DelayGate {
 public:
  explicit DelayGate(const std::atomic<bool>* stop = nullptr) : stop_(stop) {}
  void SleepFor(absl::Duration delay);
  void Cancel() {
    // Several threads may cancel at once, and a Notification may be notified only once.
    std::call_once(cancel_once_, [this] { cancelled_.Notify(); });
  }

 private:
  const std::atomic<bool>* stop_;
  std::once_flag cancel_once_;
  absl::Notification cancelled_;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_STRAGGLER_H_
