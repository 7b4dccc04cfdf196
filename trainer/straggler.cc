#include "trainer/straggler.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/splitmix64.h"

namespace hogwild {
namespace {

// A uniform double in [0, 1) from the top 53 bits.
double Uniform(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

absl::Status OutOfRange(const std::string& field, const std::string& value,
                        const std::string& range) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "TrainerOptions::stragglers.%s=%s is out of range; it must be %s", field, value, range));
}

}  // namespace

absl::StatusOr<std::vector<std::pair<int, double>>> ParseSlowdown(const std::string& flag,
                                                                  const std::string& text) {
  std::vector<std::pair<int, double>> slowdown;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    int worker = 0;
    double factor = 0.0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[0], &worker) || !absl::SimpleAtod(kv[1], &factor)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s=%s does not parse: '%s' is not WORKER:FACTOR (e.g. --%s=1:3,2:1.5 slows worker "
          "1 three times and worker 2 one and a half times)",
          flag, text, part, flag));
    }
    slowdown.emplace_back(worker, factor);
  }
  return slowdown;
}

absl::Status ParseRandomDelay(const std::string& flag, const std::string& text,
                              StragglerOptions& options) {
  const std::vector<std::string> parts = absl::StrSplit(text, '@');
  absl::Duration mean;
  double probability = 0.0;
  if (parts.size() != 2 || !absl::ParseDuration(parts[0], &mean) ||
      !absl::SimpleAtod(parts[1], &probability)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s does not parse: expected MEAN@PROBABILITY, e.g. --%s=50ms@0.1 (one step in ten "
        "waits an exponential delay of mean 50 ms)",
        flag, text, flag));
  }
  options.delay_mean = mean;
  options.delay_probability = probability;
  return absl::OkStatus();
}

absl::Status ValidateStragglerOptions(const StragglerOptions& o, int num_workers) {
  std::set<int> seen;
  for (const auto& [worker, factor] : o.slowdown) {
    if (worker < 0 || worker >= num_workers) {
      return OutOfRange("slowdown worker", absl::StrCat(worker),
                        absl::StrFormat("a worker id in [0, %d]", num_workers - 1));
    }
    if (!seen.insert(worker).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TrainerOptions::stragglers.slowdown names worker %d twice; give each worker once",
          worker));
    }
    if (!(factor >= 1.0 && factor <= kMaxSlowdownFactor)) {
      return OutOfRange("slowdown factor", absl::StrFormat("%g", factor),
                        absl::StrFormat("in [1, %g]", kMaxSlowdownFactor));
    }
  }
  if (!(o.delay_probability >= 0.0 && o.delay_probability <= 1.0)) {
    return OutOfRange("delay_probability", absl::StrFormat("%g", o.delay_probability), "in [0, 1]");
  }
  if (o.delay_probability > 0.0 &&
      !(o.delay_mean > absl::ZeroDuration() && o.delay_mean <= kMaxDelayMean)) {
    return OutOfRange("delay_mean", absl::FormatDuration(o.delay_mean),
                      absl::StrFormat("in (0, %s]", absl::FormatDuration(kMaxDelayMean)));
  }
  if (o.delay_probability == 0.0 && o.delay_mean != absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::stragglers.delay_mean=%s has no effect with delay_probability 0; give "
        "a probability in (0, 1]",
        absl::FormatDuration(o.delay_mean)));
  }
  return absl::OkStatus();
}

StragglerModel::StragglerModel(StragglerOptions options, uint64_t seed)
    : options_(std::move(options)), seed_(seed) {}

absl::Duration StragglerModel::DelayAfter(int worker, int64_t step, absl::Duration compute) const {
  absl::Duration delay = absl::ZeroDuration();
  for (const auto& [slow, factor] : options_.slowdown) {
    if (slow == worker) delay += (factor - 1.0) * std::max(compute, absl::ZeroDuration());
  }
  if (options_.delay_probability > 0.0) {
    const uint64_t h = SplitMix64(seed_ ^ SplitMix64(static_cast<uint64_t>(worker) ^
                                                     SplitMix64(static_cast<uint64_t>(step))));
    if (Uniform(h) < options_.delay_probability) {
      const double u = Uniform(SplitMix64(h));
      delay += -std::log1p(-u) * options_.delay_mean;
    }
  }
  return delay;
}

void DelayGate::SleepFor(absl::Duration delay) {
  const absl::Time end = absl::Now() + delay;
  while (true) {
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) return;
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) return;
    if (cancelled_.WaitForNotificationWithTimeout(std::min(left, absl::Milliseconds(50)))) return;
  }
}

}  // namespace hogwild
