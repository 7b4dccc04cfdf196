#include "sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "trainer/straggler.h"

namespace hogwild {

absl::StatusOr<ComputeTimeOptions> FitComputeTimes(
    const std::vector<std::vector<double>>& step_times_s) {
  if (step_times_s.empty()) {
    return absl::InvalidArgumentError("no worker's step times to calibrate from");
  }
  std::vector<double> means;
  double squares = 0.0;   // sum over workers of the squared deviations of ln t from its mean
  int64_t degrees = 0;    // sum over workers of n_w - 1
  for (size_t w = 0; w < step_times_s.size(); ++w) {
    const std::vector<double>& times = step_times_s[w];
    if (times.size() < 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "worker %d has %d step times; calibration needs at least 2 per worker (log every "
          "step: --log_every=1, and more steps)",
          w, times.size()));
    }
    double sum = 0.0, log_sum = 0.0;
    for (double t : times) {
      if (!(t > 0.0) || !std::isfinite(t)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "worker %d has a step time of %g s; every step time must be finite and > 0", w, t));
      }
      sum += t;
      log_sum += std::log(t);
    }
    const double n = static_cast<double>(times.size());
    means.push_back(sum / n);
    const double log_mean = log_sum / n;
    for (double t : times) squares += (std::log(t) - log_mean) * (std::log(t) - log_mean);
    degrees += static_cast<int64_t>(times.size()) - 1;
  }
  ComputeTimeOptions fit;
  fit.step_time_s = *std::min_element(means.begin(), means.end());
  fit.jitter = std::sqrt(squares / static_cast<double>(degrees));
  if (fit.step_time_s > kMaxSimStepTimeS) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the fitted step time %g s is above the simulator's %g s", fit.step_time_s,
        kMaxSimStepTimeS));
  }
  if (fit.jitter > kMaxSimJitter) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the fitted jitter %g is above the simulator's %g: the step times spread over more than "
        "the model's log-normal holds",
        fit.jitter, kMaxSimJitter));
  }
  for (size_t w = 0; w < means.size(); ++w) {
    const double factor = means[w] / fit.step_time_s;
    if (factor > kMaxSlowdownFactor) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "worker %d is %g times slower than the fastest, above the simulator's %g", w, factor,
          kMaxSlowdownFactor));
    }
    if (factor > 1.0) fit.stragglers.emplace_back(static_cast<int>(w), factor);
  }
  return fit;
}

absl::StatusOr<std::vector<std::vector<double>>> StepTimesFromLog(absl::string_view csv,
                                                                  absl::string_view name) {
  std::vector<absl::string_view> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  if (lines.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: empty; a CSV convergence log of a "
                                                      "real run with --log_every=1 is needed",
                                                      name));
  }
  const std::vector<absl::string_view> header = absl::StrSplit(lines[0], ',');
  auto column = [&](absl::string_view want) -> int {
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c] == want) return static_cast<int>(c);
    }
    return -1;
  };
  const int time_col = column("wall_time_s"), kind_col = column("kind"),
            worker_col = column("worker"), step_col = column("step");
  if (time_col < 0 || kind_col < 0 || worker_col < 0 || step_col < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not a CSV convergence log (no wall_time_s, kind, step or worker column in its "
        "first line)",
        name));
  }
  std::vector<std::vector<double>> times;
  std::vector<double> last;  // [W]: the worker's last train row's time, NaN before its first
  std::vector<int64_t> last_step;  // [W]: its global step
  std::vector<int64_t> step_gaps;  // global steps between a worker's consecutive rows
  std::vector<int64_t> steps;      // every train row's global step
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<absl::string_view> fields = absl::StrSplit(lines[i], ',');
    if (fields.size() < header.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: %d fields, the header has %d", name, i + 1, fields.size(), header.size()));
    }
    if (fields[kind_col] != "train") continue;
    double t = 0.0;
    int worker = 0;
    int64_t step = 0;
    if (!absl::SimpleAtod(fields[time_col], &t) || !absl::SimpleAtoi(fields[worker_col], &worker) ||
        !absl::SimpleAtoi(fields[step_col], &step) || worker < 0 || worker > 1 << 20) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: wall_time_s '%s', step '%s' or worker '%s' is not a number", name, i + 1,
          fields[time_col], fields[step_col], fields[worker_col]));
    }
    if (worker >= static_cast<int>(times.size())) {
      times.resize(static_cast<size_t>(worker) + 1);
      last.resize(static_cast<size_t>(worker) + 1, std::nan(""));
      last_step.resize(static_cast<size_t>(worker) + 1, 0);
    }
    // The first row of a worker also holds the start-up: no step time from it.
    if (!std::isnan(last[worker])) {
      times[worker].push_back(t - last[worker]);
      step_gaps.push_back(step - last_step[worker]);
    }
    last[worker] = t;
    last_step[worker] = step;
    steps.push_back(step);
  }
  if (times.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: no train rows", name));
  }
  for (size_t w = 0; w < last.size(); ++w) {
    if (std::isnan(last[w])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: worker %d has no train rows (workers 0 to %d do)", name, w,
                          last.size() - 1));
    }
  }
  // Logged every step, a run has a train row per worker step: at least one per global step (one
  // in the async-like policies, whose every step is an update; W in sync, whose W workers' steps
  // make one). A log written every N steps has 1/N of that, and its rows' differences would be N
  // steps' times. (A sync log written every N <= 4W/3 steps still has that many rows and is not
  // caught: its workers' rows share their steps as lockstep async workers' can, so the step
  // column cannot tell the two apart.)
  if (!step_gaps.empty()) {
    const auto [low, high] = std::minmax_element(steps.begin(), steps.end());
    const int64_t span = *high - *low + 1;
    if (static_cast<double>(steps.size()) < 0.75 * static_cast<double>(span)) {
      std::nth_element(step_gaps.begin(), step_gaps.begin() + step_gaps.size() / 2,
                       step_gaps.end());
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d train rows over %d global steps, a worker's rows %d steps apart (median): the "
          "log was not written every step; rerun the real run with --log_every=1",
          name, steps.size(), span, step_gaps[step_gaps.size() / 2]));
    }
  }
  return times;
}

}  // namespace hogwild
