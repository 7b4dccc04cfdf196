#include "sim/compute_time.h"

#include <cmath>
#include <numbers>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "core/splitmix64.h"

namespace hogwild {
namespace {

// A uniform double in (0, 1] from the top 53 bits.
double UniformOpenClosed(std::mt19937_64& engine) {
  return (static_cast<double>(engine() >> 11) + 1.0) * 0x1.0p-53;
}

// One standard normal by Box-Muller (the cosine half; the sine half is dropped so that each
// step takes exactly two draws).
double StandardNormal(std::mt19937_64& engine) {
  const double u1 = UniformOpenClosed(engine);
  const double u2 = UniformOpenClosed(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

absl::Status ValidateComputeTimeOptions(const ComputeTimeOptions& options, int num_workers) {
  if (!(options.step_time_s > 0 && options.step_time_s <= kMaxSimStepTimeS)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ComputeTimeOptions::step_time_s=%g is out of range (0, %g] seconds",
                        options.step_time_s, kMaxSimStepTimeS));
  }
  if (!(options.jitter >= 0 && options.jitter <= kMaxSimJitter)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ComputeTimeOptions::jitter=%g is out of range [0, %g]", options.jitter, kMaxSimJitter));
  }
  // The real runs' rules for slowed workers (trainer/straggler.h), under this struct's name.
  const absl::Status stragglers =
      ValidateStragglerOptions(StragglerOptions{.slowdown = options.stragglers}, num_workers);
  if (!stragglers.ok()) {
    return absl::Status(
        stragglers.code(),
        absl::StrReplaceAll(
            stragglers.message(),
            {{"TrainerOptions::stragglers.slowdown", "ComputeTimeOptions::stragglers"},
             {"TrainerOptions::stragglers", "ComputeTimeOptions::stragglers"}}));
  }
  return absl::OkStatus();
}

ComputeTimeSampler::ComputeTimeSampler(const ComputeTimeOptions& options, int num_workers,
                                       uint64_t seed)
    : step_time_s_(options.step_time_s),
      jitter_(options.jitter),
      factor_(static_cast<size_t>(num_workers), 1.0) {
  for (const auto& [worker, factor] : options.stragglers) factor_[worker] = factor;
  if (jitter_ > 0) {
    engines_.reserve(factor_.size());
    for (int w = 0; w < num_workers; ++w) {
      engines_.emplace_back(SplitMix64(seed + static_cast<uint64_t>(w)));
    }
  }
}

double ComputeTimeSampler::Next(int worker) {
  const double base = step_time_s_ * factor_[worker];
  if (jitter_ == 0) return base;
  const double z = StandardNormal(engines_[worker]);
  return base * std::exp(jitter_ * z - 0.5 * jitter_ * jitter_);
}

}  // namespace hogwild
