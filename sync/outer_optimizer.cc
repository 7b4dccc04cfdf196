#include "sync/outer_optimizer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/logging.h"

namespace hogwild {

absl::Status CheckOuterOptimizer(const OuterOptimizer& outer, const char* prefix) {
  if (!(outer.lr > 0.0f && outer.lr <= kMaxOuterLr)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%slr=%g is out of range; it must be in (0, %g]", prefix, outer.lr, kMaxOuterLr));
  }
  if (!(outer.momentum >= 0.0f && outer.momentum < 1.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%smomentum=%g is out of range; it must be in [0, 1)", prefix, outer.momentum));
  }
  if (outer.nesterov && !outer.has_momentum()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%snesterov needs %smomentum > 0 (Nesterov's look-ahead is along the momentum)", prefix,
        prefix));
  }
  return absl::OkStatus();
}

void ApplyOuterStep(const OuterOptimizer& outer, absl::Span<const float> mean,
                    absl::Span<float> momentum, absl::Span<float> params) {
  HOGWILD_CHECK(mean.size() == params.size(), "ApplyOuterStep: mean and params differ in size");
  if (outer.is_averaging()) {
    std::copy(mean.begin(), mean.end(), params.begin());
    return;
  }
  const float lr = outer.lr;
  if (!outer.has_momentum()) {
    for (size_t i = 0; i < params.size(); ++i) params[i] -= lr * (params[i] - mean[i]);
    return;
  }
  HOGWILD_CHECK(momentum.size() == params.size(),
                "ApplyOuterStep: the momentum buffer and params differ in size");
  const float mu = outer.momentum;
  for (size_t i = 0; i < params.size(); ++i) {
    const float delta = params[i] - mean[i];
    const float buf = mu * momentum[i] + delta;
    momentum[i] = buf;
    params[i] -= lr * (outer.nesterov ? delta + mu * buf : buf);
  }
}

}  // namespace hogwild
