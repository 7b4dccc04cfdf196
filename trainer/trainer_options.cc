#include "trainer/trainer_options.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace hogwild {
namespace {

absl::Status OutOfRange(const char* field, const std::string& value, const char* range) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "TrainerOptions::%s=%s is out of range; it must be %s", field, value, range));
}

template <typename T>
absl::Status CheckRange(const char* field, T value, T lo, T hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return OutOfRange(field, absl::StrFormat("%d", value),
                    absl::StrFormat("in [%d, %d]", lo, hi).c_str());
}

absl::Status ValidateDevices(const TrainerOptions& o) {
  if (o.devices.empty()) {
    return absl::InvalidArgumentError("TrainerOptions::devices is empty; give cpu or GPUs");
  }
  const bool gpu = o.devices[0].is_gpu();
  for (size_t i = 0; i < o.devices.size(); ++i) {
    const DeviceSpec& d = o.devices[i];
    if (d.is_gpu() != gpu || (!gpu && o.devices.size() > 1) || d.index < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TrainerOptions::devices: %s cannot be combined like this; give cpu alone or a list "
          "of distinct GPUs",
          d.ToString()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.devices[j] == d) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "TrainerOptions::devices: %s is listed twice; use "
            "TrainerOptions::workers_per_device for several workers per GPU",
            d.ToString()));
      }
    }
  }
  return CheckRange("workers_per_device", o.workers_per_device, 1, kMaxWorkersPerDevice);
}

absl::Status ValidateCheckpointOptions(const TrainerOptions& o) {
  if (o.checkpoint_every_steps < 0) {
    return OutOfRange("checkpoint_every_steps", absl::StrFormat("%d", o.checkpoint_every_steps),
                      ">= 1 (0: only on stop and at the end)");
  }
  if (!(o.checkpoint_every_seconds >= 0.0) || !std::isfinite(o.checkpoint_every_seconds)) {
    return OutOfRange("checkpoint_every_seconds",
                      absl::StrFormat("%g", o.checkpoint_every_seconds),
                      "a finite number of seconds > 0 (0: not by time)");
  }
  if (o.checkpoint_dir.empty() &&
      (o.resume || o.checkpoint_every_steps > 0 || o.checkpoint_every_seconds > 0)) {
    return absl::InvalidArgumentError(
        "TrainerOptions::resume and TrainerOptions::checkpoint_every_* need "
        "TrainerOptions::checkpoint_dir (where checkpoints live)");
  }
  if (o.overwrite_checkpoint && o.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError(
        "TrainerOptions::overwrite_checkpoint needs TrainerOptions::checkpoint_dir (the "
        "directory whose checkpoint it replaces)");
  }
  if (o.overwrite_checkpoint && o.resume) {
    return absl::InvalidArgumentError(
        "TrainerOptions::resume and TrainerOptions::overwrite_checkpoint contradict each other: "
        "set one (continue from the checkpoint) or the other (start over and replace it)");
  }
  return absl::OkStatus();
}

}  // namespace

int WorkerCount(const TrainerOptions& options) {
  if (options.devices.empty() || !options.devices[0].is_gpu()) return options.num_workers;
  return static_cast<int>(options.devices.size()) * options.workers_per_device;
}

absl::Status ValidateOptions(const TrainerOptions& o) {
  HOGWILD_RETURN_IF_ERROR(ValidateDevices(o));
  HOGWILD_RETURN_IF_ERROR(CheckRange("num_workers", o.num_workers, 1, kMaxWorkers));
  HOGWILD_RETURN_IF_ERROR(CheckRange("batch_size", o.batch_size, int64_t{1}, kMaxBatchSize));
  HOGWILD_RETURN_IF_ERROR(CheckRange("epochs", o.epochs, int64_t{1}, kMaxEpochs));
  HOGWILD_RETURN_IF_ERROR(ValidateLrSchedule(o.lr));
  if (!(o.sgd.momentum >= 0.0f && o.sgd.momentum < 1.0f)) {
    return OutOfRange("sgd.momentum", absl::StrFormat("%g", o.sgd.momentum), "in [0, 1)");
  }
  if (!(o.sgd.weight_decay >= 0.0f) || !std::isfinite(o.sgd.weight_decay)) {
    return OutOfRange("sgd.weight_decay", absl::StrFormat("%g", o.sgd.weight_decay), ">= 0");
  }
  if (o.eval_every_steps < 0) {
    return OutOfRange("eval_every_steps", absl::StrFormat("%d", o.eval_every_steps), ">= 0");
  }
  if (!(o.eval_every_epochs >= 0.0) || !std::isfinite(o.eval_every_epochs)) {
    return OutOfRange("eval_every_epochs", absl::StrFormat("%g", o.eval_every_epochs),
                      "finite and >= 0");
  }
  HOGWILD_RETURN_IF_ERROR(CheckRange("prefetch", o.prefetch, 1, kMaxPrefetch));
  HOGWILD_RETURN_IF_ERROR(ValidateCheckpointOptions(o));
  if (o.log_every_steps < 1) {
    return OutOfRange("log_every_steps", absl::StrFormat("%d", o.log_every_steps), ">= 1");
  }
  if (o.progress && o.progress_period <= absl::ZeroDuration()) {
    return OutOfRange("progress_period", absl::FormatDuration(o.progress_period), "> 0");
  }
  return absl::OkStatus();
}

}  // namespace hogwild
