#include "sim/compute_time.h"

#include <cmath>
#include <numbers>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace hogwild {
namespace {

// Vigna's SplitMix64 finalizer: decorrelates the seeds of neighbouring workers.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

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
  std::vector<bool> named(static_cast<size_t>(num_workers > 0 ? num_workers : 0), false);
  for (const Straggler& s : options.stragglers) {
    if (s.worker < 0 || s.worker >= num_workers) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ComputeTimeOptions::stragglers: worker %d is out of range [0, %d]",
                          s.worker, num_workers - 1));
    }
    if (!(s.factor >= 1 && s.factor <= kMaxStragglerFactor)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ComputeTimeOptions::stragglers: worker %d's factor %g is out of range [1, %g]", s.worker,
          s.factor, kMaxStragglerFactor));
    }
    if (named[s.worker]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ComputeTimeOptions::stragglers: worker %d is named twice", s.worker));
    }
    named[s.worker] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Straggler>> ParseStragglers(const std::string& value) {
  std::vector<Straggler> stragglers;
  if (value.empty()) return stragglers;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    const std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
    Straggler s;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &s.worker) ||
        !absl::SimpleAtod(fields[1], &s.factor)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--stragglers=%s: cannot parse \"%s\"; expected worker:factor pairs separated by "
          "commas, e.g. 3:4,7:2.5",
          value, part));
    }
    stragglers.push_back(s);
  }
  return stragglers;
}

ComputeTimeSampler::ComputeTimeSampler(const ComputeTimeOptions& options, int num_workers,
                                       uint64_t seed)
    : step_time_s_(options.step_time_s),
      jitter_(options.jitter),
      factor_(static_cast<size_t>(num_workers), 1.0) {
  for (const Straggler& s : options.stragglers) factor_[s.worker] = s.factor;
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
