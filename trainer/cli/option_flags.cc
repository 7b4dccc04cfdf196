#include "trainer/cli/option_flags.h"

#include <string>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace hogwild {

absl::Status WithFlagNames(const absl::Status& status) {
  if (status.ok()) return status;
  // Longer names first where one is a prefix of another (checkpoint_every_*).
  static const std::pair<const char*, const char*> kFlags[] = {
      {"TrainerOptions::checkpoint_every_steps", "--checkpoint_every"},
      {"TrainerOptions::checkpoint_every_seconds", "--checkpoint_every"},
      {"TrainerOptions::checkpoint_every_*", "--checkpoint_every"},
      {"TrainerOptions::checkpoint_dir", "--checkpoint_dir"},
      {"TrainerOptions::resume", "--resume"},
      {"TrainerOptions::overwrite_checkpoint", "--overwrite_checkpoint"},
      {"TrainerOptions::num_workers", "--workers"},
      {"TrainerOptions::workers_per_device", "--workers_per_device"},
      {"TrainerOptions::devices", "--devices"},
      {"TrainerOptions::batch_size", "--batch_size"},
      {"TrainerOptions::epochs", "--epochs"},
      {"TrainerOptions::drop_last", "--drop_last"},
      {"TrainerOptions::sgd.shared_optimizer_state=true", "--optimizer_state=shared"},
      {"TrainerOptions::sgd.shared_optimizer_state", "--optimizer_state=shared"},
      {"TrainerOptions::lr.scaling", "--lr_scaling"},
      {"TrainerOptions::sgd.optimizer", "--optimizer"},
      {"TrainerOptions::sgd.momentum", "--momentum"},
      {"TrainerOptions::sgd.beta1", "--adam_beta1"},
      {"TrainerOptions::sgd.beta2", "--adam_beta2"},
      {"TrainerOptions::sgd.alpha", "--rmsprop_alpha"},
      {"TrainerOptions::sgd.eps", "--eps"},
      {"TrainerOptions::sgd.clip_global_norm", "--clip_global_norm"},
      {"TrainerOptions::sgd.moving_stats_momentum", "--bn_momentum"},
      {"TrainerOptions::sgd.weight_decay", "--weight_decay"},
      {"TrainerOptions::weight_decay_biases=false", "--noweight_decay_biases"},
      {"TrainerOptions::ema_decay", "--ema_decay"},
      {"TrainerOptions::ema_num_updates=false", "--noema_num_updates"},
      {"TrainerOptions::sgd.staleness_aware_lr", "--staleness_aware_lr"},
      {"TrainerOptions::sgd.delay_adaptive_lr", "--delay_adaptive_lr"},
      {"TrainerOptions::sgd.max_delay", "--max_delay"},
      {"TrainerOptions::staleness_bound", "--staleness_bound"},
      {"TrainerOptions::backup_workers", "--backup_workers"},
      {"TrainerOptions::average_every", "--average_every"},
      {"TrainerOptions::outer.lr", "--outer_lr"},
      {"TrainerOptions::outer.momentum", "--outer_momentum"},
      {"TrainerOptions::outer.nesterov", "--outer_nesterov"},
      {"TrainerOptions::outer", "--outer_lr, --outer_momentum or --outer_nesterov"},
      {"TrainerOptions::streaming.fragments", "--fragments"},
      {"TrainerOptions::streaming.overlap_steps", "--overlap_steps"},
      {"TrainerOptions::streaming.mix_alpha", "--mix_alpha"},
      {"TrainerOptions::streaming", "--fragments, --overlap_steps or --mix_alpha"},
      {"TrainerOptions::delayed_nesterov", "--delayed_nesterov"},
      {"TrainerOptions::dynamic_local_updates", "--dynamic_local_updates"},
      {"TrainerOptions::eval_every_steps", "--eval_every"},
      {"TrainerOptions::eval_every_epochs", "--eval_every"},
      {"TrainerOptions::log_every_steps", "--log_every"},
      {"TrainerOptions::log_path", "--log"},
      {"TrainerOptions::stragglers.slowdown", "--stragglers"},
      {"TrainerOptions::stragglers.delay_probability", "--straggler_delay probability"},
      {"TrainerOptions::stragglers.delay_mean", "--straggler_delay mean"},
      {"TrainerOptions::overwrite_log", "--overwrite_log"},
      {"TrainerOptions::seed", "--seed"},
      {"TrainerOptions::model.hidden", "--hidden"},
      {"TrainerOptions::model.name", "--model"},
      {"LrSchedule::base_lr", "--lr"},
      {"LrSchedule::decay_rate", "--lr_decay_rate"},
      {"LrSchedule::decay_steps", "--lr_decay_steps"},
      {"LrSchedule::warmup_steps", "--lr_warmup_steps"},
      {"LrSchedule::reference_batch", "--lr_reference_batch"},
      {"LrSchedule::scaling=none", "--lr_scaling=none"},
      // Last: a prefix of TrainerOptions::model.* above.
      {"TrainerOptions::mode", "--mode"},
  };
  std::string message(status.message());
  for (const auto& [field, flag] : kFlags) {
    message = absl::StrReplaceAll(message, {{field, flag}});
  }
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!flag->IsOfType<double>() || !absl::flags_internal::WasPresentOnCommandLine(name)) continue;
    const std::string typed = flag->CurrentValue();
    double value = 0.0;
    if (!absl::SimpleAtod(typed, &value)) continue;
    const std::string as_float = absl::StrFormat("--%s=%g", name, static_cast<float>(value));
    const std::string as_typed = absl::StrFormat("--%s=%s", name, typed);
    if (as_float == as_typed) continue;
    // Only whole values: "--lr=1" must not match inside "--lr=10".
    std::string out;
    for (size_t at = 0;;) {
      const size_t hit = message.find(as_float, at);
      if (hit == std::string::npos) {
        out.append(message, at, std::string::npos);
        break;
      }
      const size_t end = hit + as_float.size();
      const bool whole = end == message.size() || !(absl::ascii_isalnum(message[end]) ||
                                                    message[end] == '.' || message[end] == '-');
      out.append(message, at, hit - at).append(whole ? as_typed : as_float);
      at = end;
    }
    message = std::move(out);
  }
  return absl::Status(status.code(), message);
}

}  // namespace hogwild
