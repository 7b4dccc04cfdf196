// Calibrating the simulator's time model (sim/compute_time.h) to a real run: the step times of
// each worker, measured on threads, fitted to
//
//   time(w, k) = step_time_s * factor(w) * exp(jitter * z - jitter^2 / 2),  z standard normal,
//
// by moments: mean_w = the mean of worker w's times (the model's mean is step_time_s * factor(w));
// step_time_s = the smallest mean_w and factor(w) = mean_w / step_time_s (the fastest worker is
// 1, every other a straggler by its ratio, as the model's factors are >= 1); jitter^2 = the
// within-worker variance of ln t pooled over the workers (sum of squared deviations from each
// worker's mean of ln t over sum of (n_w - 1)), which is the model's jitter^2 for any factors.
// The estimates converge to the model's values as the samples grow (tests/calibration_test.cc
// states the tolerance at 20,000 steps per worker).
//
// The measured times come from a convergence log of the real run written with --log_every=1:
// each worker's consecutive train rows are one step apart, so the differences of their
// wall_time_s are its step times (the time of the step, its share of the log's writing and any
// wait for a core; the first row, which also holds the start-up, is dropped). docs/simulation.md
// ("Calibration") has the commands.
#ifndef HOGWILD_SIM_CALIBRATION_H_
#define HOGWILD_SIM_CALIBRATION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/compute_time.h"

namespace hogwild {

// The fit above of `step_times_s` ([W] workers, each its step times in seconds, in order).
// Errors: kInvalidArgument when a worker has fewer than 2 times, a time is not finite and > 0, the
// fitted step time exceeds kMaxSimStepTimeS, a factor kMaxSlowdownFactor, or the jitter
// kMaxSimJitter (each naming the worker or the value). Pure.
absl::StatusOr<ComputeTimeOptions> FitComputeTimes(
    const std::vector<std::vector<double>>& step_times_s);

// Each worker's step times from the text of a CSV convergence log (docs/convergence_log.md)
// written with --log_every=1: for worker w in [0, W), the differences between its consecutive
// train rows' wall_time_s, W = the largest worker + 1. `name` names the log in errors.
// Errors: kInvalidArgument naming the log for a missing column (wall_time_s, kind, step,
// worker), a row with fewer fields than the header or a field that is not a number, no train
// row, a worker in [0, W) without train rows, or a log not written every step (fewer train rows
// than 3/4 of the global steps they span; a sync log written every N <= 4W/3 steps passes). Pure.
absl::StatusOr<std::vector<std::vector<double>>> StepTimesFromLog(absl::string_view csv,
                                                                  absl::string_view name);

}  // namespace hogwild

#endif  // HOGWILD_SIM_CALIBRATION_H_
