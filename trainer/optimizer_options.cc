#include "trainer/optimizer_options.h"

#include <cmath>
#include <string>

#include "absl/strings/str_format.h"
#include "kernels/optimizer.h"
#include "kernels/optimizer_name.h"

namespace hogwild {
namespace {

absl::Status OutOfRange(const char* field, float value, const std::string& range) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "TrainerOptions::sgd.%s=%g is out of range; it must be %s", field, value, range));
}

absl::Status Ignored(const char* field, float value, OptimizerKind kind, const char* readers) {
  return absl::InvalidArgumentError(
      absl::StrFormat("TrainerOptions::sgd.%s=%g has no effect with optimizer %s; it is read by %s",
                      field, value, OptimizerName(kind), readers));
}

bool InUnitInterval(float x) { return x >= 0.0f && x < 1.0f; }

}  // namespace

absl::Status ValidateOptimizerOptions(const SgdOptions& o, Mode mode) {
  const OptimizerKind kind = o.optimizer;
  if (std::string(OptimizerName(kind)) == "unknown") {
    return absl::InvalidArgumentError(
        absl::StrFormat("TrainerOptions::sgd.optimizer=%d is out of range; it must be one of %s",
                        static_cast<int>(kind), OptimizerNames()));
  }
  if (!InUnitInterval(o.momentum)) return OutOfRange("momentum", o.momentum, "in [0, 1)");
  if (!InUnitInterval(o.beta1)) return OutOfRange("beta1", o.beta1, "in [0, 1)");
  if (!InUnitInterval(o.beta2)) return OutOfRange("beta2", o.beta2, "in [0, 1)");
  if (!InUnitInterval(o.alpha)) return OutOfRange("alpha", o.alpha, "in [0, 1)");
  if (!(o.clip_global_norm >= 0.0f) || !std::isfinite(o.clip_global_norm)) {
    return OutOfRange("clip_global_norm", o.clip_global_norm, "finite and >= 0 (0: no clipping)");
  }
  if (!(o.eps >= 0.0f) || !std::isfinite(o.eps)) {
    return OutOfRange("eps", o.eps, "finite and >= 0 (0: the optimizer's PyTorch default)");
  }
  const bool sgd_family = kind == OptimizerKind::kSgd || kind == OptimizerKind::kMomentum ||
                          kind == OptimizerKind::kNesterov;
  const bool adam = UsesStepCount(kind);
  if ((kind == OptimizerKind::kMomentum || kind == OptimizerKind::kNesterov) &&
      o.momentum == 0.0f) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::sgd.momentum=0 is out of range with optimizer %s; it must be in (0, 1), "
        "e.g. 0.9 (or use optimizer sgd)",
        OptimizerName(kind)));
  }
  const SgdOptions defaults;
  if (o.momentum != 0.0f && (adam || kind == OptimizerKind::kAdagrad)) {
    return Ignored("momentum", o.momentum, kind, "sgd, momentum, nesterov and rmsprop");
  }
  if (!adam && o.beta1 != defaults.beta1) return Ignored("beta1", o.beta1, kind, "adam, adamw");
  if (!adam && o.beta2 != defaults.beta2) return Ignored("beta2", o.beta2, kind, "adam, adamw");
  if (kind != OptimizerKind::kRmsprop && o.alpha != defaults.alpha) {
    return Ignored("alpha", o.alpha, kind, "rmsprop");
  }
  if (sgd_family && o.eps != 0.0f) {
    return Ignored("eps", o.eps, kind, "adam, adamw, rmsprop and adagrad");
  }
  if (o.shared_optimizer_state) {
    if (!HasWorkerOptimizerState(mode)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TrainerOptions::sgd.shared_optimizer_state=true has no effect in %s mode; it is for "
          "the Hogwild updates of async, ssp, locked and round_robin modes (the other modes keep "
          "one state per replica)",
          ModeName(mode)));
    }
    if (NumStateSlots(o.optimizer_params()) == 0) {
      return absl::InvalidArgumentError(
          "TrainerOptions::sgd.shared_optimizer_state=true has no effect with optimizer sgd "
          "without momentum (it has no state)");
    }
  }
  return absl::OkStatus();
}

SgdOptions ModelSgdOptions(SgdOptions sgd, bool weight_decay_biases,
                           std::vector<std::pair<int64_t, int64_t>> bias_ranges,
                           std::vector<std::pair<int64_t, int64_t>> stat_ranges) {
  if (!weight_decay_biases) sgd.no_decay = std::move(bias_ranges);
  sgd.moving_stats = std::move(stat_ranges);  // batch norm (trainer/layers/batch_norm.h)
  return sgd;
}

}  // namespace hogwild
