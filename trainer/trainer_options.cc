#include "trainer/trainer_options.h"

#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/capabilities.h"
#include "core/status_macros.h"
#include "kernels/optimizer_name.h"
#include "trainer/optimizer_options.h"

namespace hogwild {
namespace {

absl::Status OutOfRange(const char* field, const std::string& value, const char* range) {
  return absl::InvalidArgumentError(
      absl::StrFormat("TrainerOptions::%s=%s is out of range; it must be %s", field, value, range));
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
        return absl::InvalidArgumentError(
            absl::StrFormat("TrainerOptions::devices: %s is listed twice; use "
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
    return OutOfRange("checkpoint_every_seconds", absl::StrFormat("%g", o.checkpoint_every_seconds),
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

absl::Status Ignored(const std::string& field_and_value, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s has no effect %s", field_and_value, why));
}

// ValidateOptionsInEffect's part for the optimizer, the EMA and batch norm.
absl::Status ValidateOptimizerInEffect(const TrainerOptions& o) {
  const bool gpu = o.devices[0].is_gpu();
  if (gpu && o.sgd.shared_optimizer_state) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::sgd.shared_optimizer_state=true (optimizer %s) is not available on GPU "
        "devices yet (per-worker state is); use cpu devices",
        OptimizerName(o.sgd.optimizer)));
  }
  if (!(o.ema_decay >= 0.0f && o.ema_decay < 1.0f)) {
    return OutOfRange("ema_decay", absl::StrFormat("%g", o.ema_decay), "in [0, 1) (0: no EMA)");
  }
  if (o.ema_decay == 0.0f && !o.ema_num_updates) {
    return Ignored("TrainerOptions::ema_num_updates=false", "without an EMA (ema_decay=0)");
  }
  if (o.ema_decay != 0.0f) {
    if (o.mode != Mode::kAsync && o.mode != Mode::kSync) {
      return Ignored(absl::StrFormat("TrainerOptions::ema_decay=%g", o.ema_decay),
                     absl::StrFormat("in %s mode (not implemented there yet); use async or sync",
                                     ModeName(o.mode)));
    }
    if (gpu) {
      return absl::InvalidArgumentError(
          "TrainerOptions::ema_decay is not available on GPU devices yet; use cpu devices");
    }
  }
  if (!o.weight_decay_biases && o.sgd.weight_decay == 0.0f) {
    return Ignored("TrainerOptions::weight_decay_biases=false",
                   "without weight decay (TrainerOptions::sgd.weight_decay=0)");
  }
  if (!o.sgd.no_decay.empty()) {
    return absl::InvalidArgumentError(
        "TrainerOptions::sgd.no_decay is filled by Train() from TrainerOptions::"
        "weight_decay_biases; leave it empty");
  }
  if (!o.sgd.moving_stats.empty()) {
    return absl::InvalidArgumentError(
        "TrainerOptions::sgd.moving_stats is filled by Train() from the model's batch-norm "
        "layers; leave it empty");
  }
  if (!(o.sgd.moving_stats_momentum > 0.0f && o.sgd.moving_stats_momentum <= 1.0f)) {
    return OutOfRange("sgd.moving_stats_momentum",
                      absl::StrFormat("%g", o.sgd.moving_stats_momentum), "in (0, 1]");
  }
  if (!HasBatchNorm(o.model) && o.sgd.moving_stats_momentum != SgdOptions{}.moving_stats_momentum) {
    return Ignored(absl::StrFormat("TrainerOptions::sgd.moving_stats_momentum=%g",
                                   o.sgd.moving_stats_momentum),
                   absl::StrFormat("with model %s (only cnn_bn has batch norm)", o.model.name));
  }
  if (gpu && o.sgd.clip_global_norm != 0.0f) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::sgd.clip_global_norm=%g is not available on GPU devices yet; use cpu "
        "devices",
        o.sgd.clip_global_norm));
  }
  if (o.sgd.staleness_aware_lr && o.mode != Mode::kAsync) {
    return Ignored("TrainerOptions::sgd.staleness_aware_lr=true",
                   absl::StrFormat("in %s mode (its update policy does not read it); it is for "
                                   "async mode only",
                                   ModeName(o.mode)));
  }
  if (o.sgd.staleness_aware_lr && o.mode == Mode::kAsync && WorkerCount(o) == 1) {
    return Ignored("TrainerOptions::sgd.staleness_aware_lr=true",
                   "with one worker (its updates have staleness 0); it needs 2 or more workers");
  }
  // The delay rules of async updates (AsyncStepStats): async only, 2 or more workers.
  const struct {
    const char* field;
    bool set;
  } delay_rules[] = {
      {"TrainerOptions::sgd.delay_adaptive_lr=true", o.sgd.delay_adaptive_lr},
      {"TrainerOptions::sgd.max_delay", o.sgd.max_delay != 0},
  };
  for (const auto& [field, set] : delay_rules) {
    if (!set) continue;
    if (o.mode != Mode::kAsync) {
      return Ignored(field, absl::StrFormat("in %s mode (its update policy does not read it); it "
                                            "is for async mode only",
                                            ModeName(o.mode)));
    }
    if (WorkerCount(o) == 1) {
      return Ignored(field,
                     "with one worker (its updates have staleness 0); it needs 2 or more workers");
    }
  }
  if (o.sgd.delay_adaptive_lr && o.sgd.staleness_aware_lr) {
    return absl::InvalidArgumentError(
        "TrainerOptions::sgd.delay_adaptive_lr and TrainerOptions::sgd.staleness_aware_lr are two "
        "rules for the same learning rate; choose one");
  }
  if (gpu && o.sgd.max_delay != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::sgd.max_delay=%d is not available on GPU devices yet; use cpu devices",
        o.sgd.max_delay));
  }
  return absl::OkStatus();
}

// ValidateOptionsInEffect's part for the evaluation period, the workers, the mode's options,
// checkpoints and devices.
absl::Status ValidateRunInEffect(const TrainerOptions& o) {
  const bool gpu = o.devices[0].is_gpu();
  if (o.eval_every_epochs > o.epochs) {
    return Ignored(absl::StrFormat("an evaluation period of %g epochs "
                                   "(TrainerOptions::eval_every_epochs)",
                                   o.eval_every_epochs),
                   absl::StrFormat("with TrainerOptions::epochs=%d (the only evaluation is the "
                                   "final one); give a period of at most %d epochs, or 0",
                                   o.epochs, o.epochs));
  }
  if (!gpu && o.workers_per_device != 1) {
    return Ignored(absl::StrFormat("TrainerOptions::workers_per_device=%d", o.workers_per_device),
                   "on cpu devices (it counts workers per GPU); set "
                   "TrainerOptions::num_workers for CPU workers");
  }
  if (gpu && o.num_workers != 1) {
    return Ignored(absl::StrFormat("TrainerOptions::num_workers=%d", o.num_workers),
                   "on GPU devices (they run GPUs x TrainerOptions::workers_per_device "
                   "workers); set TrainerOptions::workers_per_device instead");
  }
  if (o.staleness_bound != TrainerOptions{}.staleness_bound && o.mode != Mode::kSsp) {
    return Ignored(
        absl::StrFormat("TrainerOptions::staleness_bound=%d", o.staleness_bound),
        absl::StrFormat("in %s mode; it bounds the clock gap of ssp mode only", ModeName(o.mode)));
  }
  if (o.backup_workers != TrainerOptions{}.backup_workers && o.mode != Mode::kBackup) {
    return Ignored(absl::StrFormat("TrainerOptions::backup_workers=%d", o.backup_workers),
                   absl::StrFormat("in %s mode; it drops late gradients in backup mode only",
                                   ModeName(o.mode)));
  }
  if (o.average_every != TrainerOptions{}.average_every && !HasLocalRounds(o.mode)) {
    return Ignored(absl::StrFormat("TrainerOptions::average_every=%d", o.average_every),
                   absl::StrFormat("in %s mode; it is the round length of local_sgd and "
                                   "async_local_sgd modes only",
                                   ModeName(o.mode)));
  }
  if (!(o.outer == OuterOptimizer{}) && !HasLocalRounds(o.mode)) {
    return Ignored("TrainerOptions::outer",
                   absl::StrFormat("in %s mode; it is the outer optimizer of local_sgd and "
                                   "async_local_sgd modes only",
                                   ModeName(o.mode)));
  }
  if (o.delayed_nesterov != TrainerOptions{}.delayed_nesterov && o.mode != Mode::kAsyncLocalSgd) {
    return Ignored(
        absl::StrFormat("TrainerOptions::delayed_nesterov=%d", o.delayed_nesterov),
        absl::StrFormat("in %s mode; it is for async_local_sgd mode only", ModeName(o.mode)));
  }
  if (o.dynamic_local_updates && o.mode != Mode::kAsyncLocalSgd) {
    return Ignored(
        "TrainerOptions::dynamic_local_updates",
        absl::StrFormat("in %s mode; it is for async_local_sgd mode only", ModeName(o.mode)));
  }
  if (!o.streaming.is_default() && o.mode != Mode::kLocalSgd) {
    return Ignored("TrainerOptions::streaming",
                   absl::StrFormat("in %s mode; it is Streaming DiLoCo's fragments of local_sgd "
                                   "mode only",
                                   ModeName(o.mode)));
  }
  if (!o.checkpoint_dir.empty() && o.drop_last) {
    return absl::InvalidArgumentError(
        "TrainerOptions::drop_last is not available with TrainerOptions::checkpoint_dir yet (a "
        "checkpoint does not record it, so a resume could not check its data order); train "
        "without one of the two");
  }
  if (!o.checkpoint_dir.empty()) {
    HOGWILD_RETURN_IF_ERROR(
        CheckCheckpointsSupported(WorkloadKind::kDense, o.mode, "TrainerOptions::checkpoint_dir"));
  }
  if (o.force_host_master && !(gpu && o.mode == Mode::kAsync)) {
    return Ignored("TrainerOptions::force_host_master=true",
                   absl::StrFormat("in %s mode on %s (it places async GPU parameters only)",
                                   ModeName(o.mode), gpu ? "GPUs" : "cpu"));
  }
  return absl::OkStatus();
}

// ValidateOptionsInEffect's part for the evaluation period's unit, the model and the
// learning-rate schedule.
absl::Status ValidateScheduleInEffect(const TrainerOptions& o) {
  if (o.eval_every_steps > 0 && o.eval_every_epochs > 0) {
    return Ignored(absl::StrFormat("TrainerOptions::eval_every_steps=%d", o.eval_every_steps),
                   absl::StrFormat("while TrainerOptions::eval_every_epochs=%g is set (it takes "
                                   "precedence); set one of the two to 0",
                                   o.eval_every_epochs));
  }
  // Only for the known models without hidden layers: an unknown name is refused by Model::Create
  // with the list of known models, which is the more useful message.
  const bool no_hidden_layers =
      o.model.name == "logreg" || o.model.name == "cnn" || o.model.name == "cnn_bn";
  if (no_hidden_layers && !o.model.hidden.empty() && o.model.hidden != ModelSpec{}.hidden) {
    return Ignored(
        absl::StrFormat("TrainerOptions::model.hidden=%s", absl::StrJoin(o.model.hidden, ",")),
        absl::StrFormat("for model '%s' (only mlp has hidden layers)", o.model.name));
  }
  const LrSchedule defaults;
  if (o.lr.kind == LrSchedule::Kind::kConstant) {
    if (o.lr.decay_rate != defaults.decay_rate) {
      return Ignored(absl::StrFormat("LrSchedule::decay_rate=%g", o.lr.decay_rate),
                     "with the constant schedule; choose the exponential or step schedule");
    }
    if (o.lr.decay_steps != defaults.decay_steps) {
      return Ignored(absl::StrFormat("LrSchedule::decay_steps=%d", o.lr.decay_steps),
                     "with the constant schedule; choose the exponential or step schedule");
    }
  } else if (o.lr.decay_rate == 1.0f) {
    return Ignored("LrSchedule::decay_rate=1",
                   "(the schedule never decays); give a decay rate in (0, 1) or use the "
                   "constant schedule");
  }
  return absl::OkStatus();
}

// Options that only one mode, device kind or other setting reads: refused when set otherwise.
absl::Status ValidateOptionsInEffect(const TrainerOptions& o) {
  HOGWILD_RETURN_IF_ERROR(ValidateOptimizerInEffect(o));
  HOGWILD_RETURN_IF_ERROR(ValidateRunInEffect(o));
  return ValidateScheduleInEffect(o);
}

}  // namespace

int WorkerCount(const TrainerOptions& options) {
  if (options.devices.empty() || !options.devices[0].is_gpu()) return options.num_workers;
  return static_cast<int>(options.devices.size()) * options.workers_per_device;
}

namespace {

// Copies the fields `mode` reads from `from` to `to`: ModeOptions and TrainerOptions name them
// alike.
template <typename From, typename To>
void CopyModeFields(const From& from, Mode mode, To& to) {
  if (mode == Mode::kSsp) to.staleness_bound = from.staleness_bound;
  if (mode == Mode::kBackup) to.backup_workers = from.backup_workers;
  if (HasLocalRounds(mode)) {
    to.average_every = from.average_every;
    to.outer = from.outer;
  }
  if (mode == Mode::kLocalSgd) to.streaming = from.streaming;
  if (mode == Mode::kAsyncLocalSgd) {
    to.delayed_nesterov = from.delayed_nesterov;
    to.dynamic_local_updates = from.dynamic_local_updates;
  }
}

}  // namespace

ModeOptions ModeOptionsOf(const TrainerOptions& options) {
  ModeOptions mode_options;
  CopyModeFields(options, options.mode, mode_options);
  return mode_options;
}

void SetModeOptions(const ModeOptions& mode_options, TrainerOptions& options) {
  CopyModeFields(mode_options, options.mode, options);
}

int64_t GlobalBatch(const TrainerOptions& options) {
  return SplitsGlobalBatch(options.mode) ? options.batch_size
                                         : options.batch_size * WorkerCount(options);
}

std::vector<UnreadSetting> UnreadSettings(const TrainerOptions& options, bool as_flags) {
  const char* prefix = as_flags ? "--" : "";
  const OptimizerKind kind = options.sgd.optimizer;
  const bool adam = kind == OptimizerKind::kAdam || kind == OptimizerKind::kAdamW;
  const bool rmsprop = kind == OptimizerKind::kRmsprop;
  const std::string with = absl::StrFormat("with optimizer %s", OptimizerName(kind));
  const bool hogwild_updates = HasWorkerOptimizerState(options.mode);
  const bool stateless = kind == OptimizerKind::kSgd && options.sgd.momentum == 0.0f;
  std::string state_where;
  if (!hogwild_updates) {
    state_where = absl::StrFormat(
        "in %s mode (one optimizer state per replica); it is for async, ssp, locked and "
        "round_robin modes",
        ModeName(options.mode));
  } else if (WorkerCount(options) == 1) {
    state_where = "with 1 worker (its state is the only one); it needs 2 or more workers";
  } else if (stateless) {
    state_where = "with optimizer sgd without momentum (it has no state)";
  }
  struct Use {
    const char* name;
    bool read;
    std::string where;
  };
  std::vector<UnreadSetting> unread;
  for (const Use& u : std::initializer_list<Use>{
           {"adam_beta1", adam, with + "; it is read by adam, adamw"},
           {"adam_beta2", adam, with + "; it is read by adam, adamw"},
           {"rmsprop_alpha", rmsprop, with + "; it is read by rmsprop"},
           {"eps", adam || rmsprop || kind == OptimizerKind::kAdagrad,
            with + "; it is read by adam, adamw, rmsprop and adagrad"},
           {"momentum", !adam && kind != OptimizerKind::kAdagrad,
            with + "; it is read by sgd, momentum, nesterov and rmsprop"},
           {"optimizer_state", state_where.empty(), state_where},
           {"lr_reference_batch", options.lr.scaling != LrSchedule::Scaling::kNone,
            as_flags ? std::string("with --lr_scaling=none; it is the batch "
                                   "--lr_scaling=linear or sqrt scales from")
                     : std::string("with lr_scaling='none'; it is the batch lr_scaling='linear' "
                                   "or 'sqrt' scales from")},
           {"ema_num_updates", options.ema_decay != 0.0f,
            absl::StrFormat("without %sema_decay (no EMA)", prefix)},
           {"weight_decay_biases", options.sgd.weight_decay != 0.0f,
            absl::StrFormat("without %sweight_decay (nothing decays)", prefix)},
           {"bn_momentum", HasBatchNorm(options.model),
            absl::StrFormat("with model %s (only cnn_bn has batch norm)", options.model.name)},
           {"log_every", !options.log_path.empty() || options.log_row_sink != nullptr,
            as_flags ? std::string("without --log")
                     : std::string("without log or on_log_row (no rows are written)")}}) {
    if (!u.read) unread.push_back({u.name, u.where});
  }
  return unread;
}

absl::Status ValidateOptions(const TrainerOptions& o) {
  HOGWILD_RETURN_IF_ERROR(ValidateDevices(o));
  HOGWILD_RETURN_IF_ERROR(CheckSupported(
      WorkloadKind::kDense, o.mode, o.devices[0].is_gpu() ? Substrate::kGpu : Substrate::kThreads,
      "TrainerOptions::mode"));
  HOGWILD_RETURN_IF_ERROR(CheckRange("num_workers", o.num_workers, 1, kMaxWorkers));
  HOGWILD_RETURN_IF_ERROR(CheckRange("batch_size", o.batch_size, int64_t{1}, kMaxBatchSize));
  HOGWILD_RETURN_IF_ERROR(CheckRange("epochs", o.epochs, int64_t{1}, kMaxEpochs));
  HOGWILD_RETURN_IF_ERROR(ValidateLrSchedule(o.lr));
  HOGWILD_RETURN_IF_ERROR(ValidateOptimizerOptions(o.sgd, o.mode));
  if (const float scaled = ScaleForBatch(o.lr, GlobalBatch(o)).base_lr;
      !(scaled > 0.0f) || !std::isfinite(scaled)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LrSchedule::base_lr=%g scaled for a global batch of %d with LrSchedule::reference_batch="
        "%d is %g, outside float32's positive range; use another reference batch or no scaling",
        o.lr.base_lr, GlobalBatch(o), o.lr.reference_batch, scaled));
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
  HOGWILD_RETURN_IF_ERROR(
      CheckRange("staleness_bound", o.staleness_bound, int64_t{0}, kMaxStalenessBound));
  HOGWILD_RETURN_IF_ERROR(
      CheckRange("average_every", o.average_every, int64_t{1}, kMaxAverageEvery));
  HOGWILD_RETURN_IF_ERROR(CheckOuterOptimizer(o.outer, "TrainerOptions::outer."));
  HOGWILD_RETURN_IF_ERROR(CheckStreamingOptions(o.streaming, o.average_every,
                                                /*num_params=*/0, "TrainerOptions::streaming."));
  HOGWILD_RETURN_IF_ERROR(
      CheckRange("delayed_nesterov", o.delayed_nesterov, int64_t{1}, kMaxDelayedNesterov));
  // Its combination with the outer optimizer where it is read (elsewhere it is refused above).
  if (o.mode == Mode::kAsyncLocalSgd) {
    HOGWILD_RETURN_IF_ERROR(CheckDelayedNesterov(o.delayed_nesterov, o.outer,
                                                 "TrainerOptions::delayed_nesterov",
                                                 "TrainerOptions::outer.momentum"));
  }
  HOGWILD_RETURN_IF_ERROR(
      CheckRange("sgd.max_delay", o.sgd.max_delay, int64_t{0}, kMaxStalenessBound));
  if (o.mode == Mode::kLocalSgd && o.batch_size < WorkerCount(o)) {
    return OutOfRange("batch_size", absl::StrFormat("%d", o.batch_size),
                      absl::StrFormat("in [%d, %d] in local_sgd mode (at least one example per "
                                      "worker: the global batch is split into the workers' "
                                      "local batches)",
                                      WorkerCount(o), kMaxBatchSize)
                          .c_str());
  }
  // Batch norm normalizes by the tower's own batch statistics: one example has zero variance,
  // normalizes to 0 whatever it is, and gives the scale no gradient, so the model cannot learn.
  if (HasBatchNorm(o.model)) {
    const bool split = SplitsGlobalBatch(o.mode);
    const int64_t per_tower = split ? o.batch_size / WorkerCount(o) : o.batch_size;
    if (per_tower < 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TrainerOptions::model.name=%s with TrainerOptions::batch_size=%d%s leaves %d example "
          "per tower; batch norm needs at least 2 (one example has zero variance, and the model "
          "cannot learn): give TrainerOptions::batch_size of at least %d",
          o.model.name, o.batch_size,
          split ? absl::StrFormat(" split over TrainerOptions::num_workers=%d in %s mode",
                                  WorkerCount(o), ModeName(o.mode))
                : "",
          per_tower, split ? 2 * WorkerCount(o) : 2));
    }
  }
  if (o.backup_workers < 0 || o.backup_workers >= WorkerCount(o)) {
    return OutOfRange("backup_workers", absl::StrFormat("%d", o.backup_workers),
                      absl::StrFormat("in [0, %d] (fewer than the %d workers)", WorkerCount(o) - 1,
                                      WorkerCount(o))
                          .c_str());
  }
  HOGWILD_RETURN_IF_ERROR(ValidateCheckpointOptions(o));
  if (o.log_every_steps < 1) {
    return OutOfRange("log_every_steps", absl::StrFormat("%d", o.log_every_steps), ">= 1");
  }
  if (absl::EndsWithIgnoreCase(o.log_path, ".json")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::log_path=%s: a JSON log is written as JSON Lines and its name must end "
        "in .jsonl (any other name is CSV)",
        o.log_path));
  }
  if (o.overwrite_log && o.log_path.empty()) {
    return absl::InvalidArgumentError(
        "TrainerOptions::overwrite_log needs TrainerOptions::log_path (the log it would replace)");
  }
  if (o.progress && o.progress_period <= absl::ZeroDuration()) {
    return OutOfRange("progress_period", absl::FormatDuration(o.progress_period), "> 0");
  }
  HOGWILD_RETURN_IF_ERROR(ValidateStragglerOptions(o.stragglers, WorkerCount(o)));
  return ValidateOptionsInEffect(o);
}

namespace {

// The run's global steps, an upper bound, where it can be known before the run: at most
// ceil(N / B) per epoch in sync mode and every worker's ceil(shard / B) in async mode (the shards
// are ceil(N / W) at most), on one process. nullopt in the other modes, which count their steps
// differently.
struct RunSteps {
  int64_t per_epoch = 0;
  int64_t total = 0;
};
std::optional<RunSteps> RunStepsBound(const TrainerOptions& o, int64_t train_examples) {
  if (o.cluster != nullptr || o.batch_size < 1 ||
      (o.mode != Mode::kAsync && o.mode != Mode::kSync)) {
    return std::nullopt;
  }
  // As BatchPlan::StepsPerEpoch: a short last batch is a step unless drop_last leaves it out.
  const auto batches = [&](int64_t n) {
    return o.drop_last ? n / o.batch_size : (n + o.batch_size - 1) / o.batch_size;
  };
  const int64_t workers = WorkerCount(o);
  RunSteps steps;
  steps.per_epoch = o.mode == Mode::kSync
                        ? batches(train_examples)
                        : workers * batches((train_examples + workers - 1) / workers);
  steps.total = steps.per_epoch * o.epochs;
  return steps;
}

// A warm-up longer than the whole run would never reach the base rate, and an evaluation period
// in steps longer than the run would never evaluate before the final evaluation (the period in
// epochs is checked against the epochs by ValidateOptions).
absl::Status CheckPeriodsFitTheRun(const TrainerOptions& o, int64_t train_examples) {
  const std::optional<RunSteps> run = RunStepsBound(o, train_examples);
  if (!run) return absl::OkStatus();
  const std::string length =
      absl::StrFormat("at most %d global steps: %d epoch%s of %d", run->total, o.epochs,
                      o.epochs == 1 ? "" : "s", run->per_epoch);
  if (o.lr.warmup_steps > run->total) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LrSchedule::warmup_steps=%d is longer than the whole run (%s), so the learning rate "
        "would never reach its base value; give at most %d",
        o.lr.warmup_steps, length, run->total));
  }
  if (o.eval_every_steps > run->total) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::eval_every_steps=%d is longer than the whole run (%s), so the only "
        "evaluation would be the final one; give at most %d, or 0",
        o.eval_every_steps, length, run->total));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateOptionsForDataset(const TrainerOptions& o, int64_t train_examples) {
  HOGWILD_RETURN_IF_ERROR(ValidateOptions(o));
  if (train_examples < 1) {
    return absl::InvalidArgumentError("the training set is empty");
  }
  const int workers = WorkerCount(o);
  HOGWILD_RETURN_IF_ERROR(CheckPeriodsFitTheRun(o, train_examples));
  if (SplitsGlobalBatch(o.mode)) {
    if (o.batch_size > train_examples) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TrainerOptions::batch_size=%d is larger than the training set (%d examples); in %s "
          "mode it is the global batch, so it must be in [1, %d]",
          o.batch_size, train_examples, ModeName(o.mode), train_examples));
    }
    return absl::OkStatus();
  }
  if (o.drop_last && o.batch_size > train_examples / workers) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::batch_size=%d is larger than the smallest worker's share of the "
        "training set (%d examples = %d examples / %d workers, rounded down); with "
        "TrainerOptions::drop_last that worker would take no step, so it must be in [1, %d]",
        o.batch_size, train_examples / workers, train_examples, workers, train_examples / workers));
  }
  const int64_t largest_shard = (train_examples + workers - 1) / workers;
  if (o.batch_size > largest_shard) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::batch_size=%d is larger than a worker's share of the training set (%d "
        "examples = %d examples / %d workers); in %s mode it is the batch per worker, so it "
        "must be in [1, %d]",
        o.batch_size, largest_shard, train_examples, workers, ModeName(o.mode), largest_shard));
  }
  return absl::OkStatus();
}

}  // namespace hogwild
