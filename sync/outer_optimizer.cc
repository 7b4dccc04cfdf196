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

absl::Status CheckDelayedNesterov(int64_t delayed_nesterov, const OuterOptimizer& outer,
                                  const char* name, const char* momentum_option) {
  if (delayed_nesterov < 1 || delayed_nesterov > kMaxDelayedNesterov) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s=%d is out of range; it must be in [1, %d]", name, delayed_nesterov,
                        kMaxDelayedNesterov));
  }
  if (delayed_nesterov > 1 && !outer.has_momentum()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=%d needs an outer momentum (it delays the outer momentum's updates); give %s, e.g. "
        "0.9 with Nesterov",
        name, delayed_nesterov, momentum_option));
  }
  return absl::OkStatus();
}

void ApplyPushedOuterStep(const OuterOptimizer& outer, int64_t delayed_nesterov, int64_t push,
                          absl::Span<const float> anchor, absl::Span<const float> replica,
                          absl::Span<float> momentum, absl::Span<float> sum,
                          absl::Span<float> params) {
  HOGWILD_CHECK(anchor.size() == params.size() && replica.size() == params.size(),
                "ApplyPushedOuterStep: anchor, replica and params differ in size");
  HOGWILD_CHECK(delayed_nesterov >= 1 && push >= 1, "ApplyPushedOuterStep: N and t must be >= 1");
  const float lr = outer.lr;
  const float n = static_cast<float>(delayed_nesterov);
  if (outer.is_averaging()) {
    // theta + (replica - anchor), summed so that where theta is still the anchor it becomes the
    // replica exactly (theta - anchor is 0): one worker is sequential SGD bitwise.
    for (size_t i = 0; i < params.size(); ++i) params[i] = (params[i] - anchor[i]) + replica[i];
    return;
  }
  if (!outer.has_momentum()) {
    for (size_t i = 0; i < params.size(); ++i) params[i] -= lr * ((anchor[i] - replica[i]) / n);
    return;
  }
  HOGWILD_CHECK(momentum.size() == params.size(),
                "ApplyPushedOuterStep: the momentum buffer and params differ in size");
  const float mu = outer.momentum;
  if (delayed_nesterov == 1) {  // every push updates the momentum: ApplyOuterStep's rule on g
    for (size_t i = 0; i < params.size(); ++i) {
      const float g = anchor[i] - replica[i];
      const float buf = mu * momentum[i] + g;
      momentum[i] = buf;
      params[i] -= lr * (outer.nesterov ? g + mu * buf : buf);
    }
    return;
  }
  HOGWILD_CHECK(sum.size() == params.size(),
                "ApplyPushedOuterStep: the pseudo-gradient sum and params differ in size");
  if (push % delayed_nesterov != 0) {
    for (size_t i = 0; i < params.size(); ++i) {
      const float g = anchor[i] - replica[i];
      sum[i] += g;
      params[i] -= lr * (g / n);
    }
    return;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const float g = anchor[i] - replica[i];
    const float old = momentum[i];
    const float buf = mu * old + (sum[i] + g) / n;
    momentum[i] = buf;
    sum[i] = 0.0f;
    params[i] -= lr * (g / n + mu * (outer.nesterov ? buf : old));
  }
}

double SquaredStepNorm(absl::Span<const float> after, absl::Span<const float> before) {
  HOGWILD_CHECK(after.size() == before.size(), "SquaredStepNorm: after and before differ in size");
  double squares = 0.0;
  for (size_t i = 0; i < after.size(); ++i) {
    const double d = static_cast<double>(after[i]) - static_cast<double>(before[i]);
    squares += d * d;
  }
  return squares;
}

}  // namespace hogwild
