#include "python/keyword_names.h"

#include <cctype>
#include <utility>

#include "absl/strings/str_replace.h"

namespace hogwild::python {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Replaces `--<keyword>` by `<keyword>` where the keyword ends at a non-word character, so
// `--workers` does not eat the start of `--workers_per_device`.
std::string DropFlagDashes(std::string text, absl::string_view keyword) {
  const std::string flag = "--" + std::string(keyword);
  for (size_t at = text.find(flag); at != std::string::npos; at = text.find(flag, at)) {
    const size_t end = at + flag.size();
    if (end < text.size() && IsWordChar(text[end])) {
      at = end;
      continue;
    }
    text.erase(at, 2);
  }
  return text;
}

}  // namespace

std::string WithKeywordNames(absl::string_view message) {
  // Longer names first where one is a prefix of another (checkpoint_every_*).
  static const std::pair<const char*, const char*> kFields[] = {
      {"TrainerOptions::checkpoint_every_steps", "checkpoint_every"},
      {"TrainerOptions::checkpoint_every_seconds", "checkpoint_every"},
      {"TrainerOptions::checkpoint_every_*", "checkpoint_every"},
      {"TrainerOptions::checkpoint_dir", "checkpoint_dir"},
      {"TrainerOptions::resume", "resume"},
      {"TrainerOptions::overwrite_checkpoint", "overwrite_checkpoint"},
      {"TrainerOptions::num_workers", "workers"},
      {"TrainerOptions::workers_per_device", "workers_per_device"},
      {"TrainerOptions::devices", "devices"},
      {"TrainerOptions::batch_size", "batch_size"},
      {"TrainerOptions::epochs", "epochs"},
      {"TrainerOptions::drop_last", "drop_last"},
      {"TrainerOptions::sgd.shared_optimizer_state=true", "optimizer_state='shared'"},
      {"TrainerOptions::sgd.optimizer", "optimizer"},
      {"TrainerOptions::sgd.momentum", "momentum"},
      {"TrainerOptions::sgd.beta1", "adam_beta1"},
      {"TrainerOptions::sgd.beta2", "adam_beta2"},
      {"TrainerOptions::sgd.alpha", "rmsprop_alpha"},
      {"TrainerOptions::sgd.eps", "eps"},
      {"TrainerOptions::sgd.clip_global_norm", "clip_global_norm"},
      {"TrainerOptions::sgd.moving_stats_momentum", "bn_momentum"},
      {"TrainerOptions::sgd.weight_decay", "weight_decay"},
      {"TrainerOptions::weight_decay_biases=false", "weight_decay_biases=False"},
      {"TrainerOptions::ema_decay", "ema_decay"},
      {"TrainerOptions::ema_num_updates=false", "ema_num_updates=False"},
      {"TrainerOptions::sgd.staleness_aware_lr", "staleness_aware_lr"},
      {"TrainerOptions::sgd.delay_adaptive_lr=true", "delay_adaptive_lr=True"},
      {"TrainerOptions::sgd.delay_adaptive_lr", "delay_adaptive_lr"},
      {"TrainerOptions::sgd.max_delay", "max_delay"},
      {"TrainerOptions::staleness_bound", "staleness_bound"},
      {"TrainerOptions::backup_workers", "backup_workers"},
      {"TrainerOptions::average_every", "average_every"},
      {"TrainerOptions::outer.lr", "outer_lr"},
      {"TrainerOptions::outer.momentum", "outer_momentum"},
      {"TrainerOptions::outer.nesterov", "outer_nesterov"},
      {"TrainerOptions::outer", "outer_lr, outer_momentum or outer_nesterov"},
      {"TrainerOptions::streaming.fragments", "fragments"},
      {"TrainerOptions::streaming.overlap_steps", "overlap_steps"},
      {"TrainerOptions::streaming.mix_alpha", "mix_alpha"},
      {"TrainerOptions::streaming", "fragments, overlap_steps or mix_alpha"},
      {"TrainerOptions::delayed_nesterov", "delayed_nesterov"},
      {"TrainerOptions::dynamic_local_updates", "dynamic_local_updates"},
      {"TrainerOptions::eval_every_steps", "eval_every"},
      {"TrainerOptions::eval_every_epochs", "eval_every"},
      {"TrainerOptions::log_every_steps", "log_every"},
      {"TrainerOptions::log_path", "log"},
      {"TrainerOptions::overwrite_log", "overwrite_log"},
      {"TrainerOptions::prefetch", "prefetch"},
      {"TrainerOptions::seed", "seed"},
      {"TrainerOptions::model.hidden", "hidden"},
      {"TrainerOptions::model.name", "model"},
      {"LrSchedule::base_lr", "lr"},
      {"LrSchedule::decay_rate", "lr_decay_rate"},
      {"LrSchedule::decay_steps", "lr_decay_steps"},
      {"LrSchedule::warmup_steps", "lr_warmup_steps"},
      {"LrSchedule::reference_batch", "lr_reference_batch"},
      {"LrSchedule::scaling=none", "lr_scaling='none'"},
      // Last: a prefix of TrainerOptions::model.* above.
      {"TrainerOptions::mode", "mode"},
  };
  // Flags that some loaders name (trainer/data/mnist.h, trainer/device.h, a checkpoint that
  // does not match: trainer/checkpoint/checkpoint.h), longer first.
  static const char* const kFlags[] = {
      "workers_per_device",
      "workers",
      "devices",
      "dataset",
      "data_dir",
      "model",
      "hidden",
      "lr_schedule",
      "lr_decay_rate",
      "lr_decay_steps",
      "lr",
      "weight_decay",
      "momentum",
      "train_examples",
      "log",
      "checkpoint_dir",
      "checkpoint_every",
      "resume",
      "overwrite_checkpoint",
      "overwrite_log",
      "staleness_bound",
      "backup_workers",
      "average_every",
      "outer_lr",
      "outer_momentum",
      "outer_nesterov",
      "fragments",
      "overlap_steps",
      "mix_alpha",
      "delayed_nesterov",
      "dynamic_local_updates",
  };
  std::string text(message);
  for (const auto& [field, keyword] : kFields) {
    text = absl::StrReplaceAll(text, {{field, keyword}});
  }
  for (const char* keyword : kFlags) text = DropFlagDashes(std::move(text), keyword);
  return text;
}

}  // namespace hogwild::python
