#include "kernels/cpu/batch_norm.h"

#include <cmath>
#include <cstdint>

namespace hogwild::cpu {
namespace {

struct Moments {
  double mean = 0.0;
  double squares = 0.0;  // sum of (x - mean)^2
};

// The channel's mean and centred sum of squares, two passes (no cancellation as in E[x^2] -
// E[x]^2, which loses the variance of activations with a large mean).
Moments ChannelMoments(const BatchNormShape& s, const float* x, int64_t c) {
  Moments m;
  const int64_t count = s.per_channel();
  if (count == 0) return m;
  double sum = 0.0;
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* row = x + (n * s.channels + c) * s.spatial;
    for (int64_t i = 0; i < s.spatial; ++i) sum += row[i];
  }
  m.mean = sum / static_cast<double>(count);
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* row = x + (n * s.channels + c) * s.spatial;
    for (int64_t i = 0; i < s.spatial; ++i) {
      const double d = row[i] - m.mean;
      m.squares += d * d;
    }
  }
  return m;
}

// y = scale * x + shift over channel c.
void AffineChannel(const BatchNormShape& s, const float* x, int64_t c, float scale, float shift,
                   float* y) {
  for (int64_t n = 0; n < s.batch; ++n) {
    const int64_t at = (n * s.channels + c) * s.spatial;
    for (int64_t i = 0; i < s.spatial; ++i) y[at + i] = scale * x[at + i] + shift;
  }
}

}  // namespace

void BatchNormForwardTraining(const BatchNormShape& s, const float* x, const float* gamma,
                              const float* beta, float* y) {
  if (s.per_channel() == 0) return;
  for (int64_t c = 0; c < s.channels; ++c) {
    const Moments m = ChannelMoments(s, x, c);
    const double inv_std =
        1.0 / std::sqrt(m.squares / static_cast<double>(s.per_channel()) + s.eps);
    const double scale = gamma[c] * inv_std;
    AffineChannel(s, x, c, static_cast<float>(scale), static_cast<float>(beta[c] - scale * m.mean),
                  y);
  }
}

void BatchNormForwardInference(const BatchNormShape& s, const float* x, const float* gamma,
                               const float* beta, const float* mean, const float* var, float* y) {
  for (int64_t c = 0; c < s.channels; ++c) {
    const double scale = gamma[c] / std::sqrt(static_cast<double>(var[c]) + s.eps);
    AffineChannel(s, x, c, static_cast<float>(scale), static_cast<float>(beta[c] - scale * mean[c]),
                  y);
  }
}

void BatchNormBackward(const BatchNormShape& s, const float* x, const float* dy, const float* gamma,
                       float* dx, float* dgamma, float* dbeta) {
  const int64_t count = s.per_channel();
  for (int64_t c = 0; c < s.channels; ++c) {
    if (count == 0) {
      dgamma[c] = 0.0f;
      dbeta[c] = 0.0f;
      continue;
    }
    const Moments m = ChannelMoments(s, x, c);
    const double inv_std = 1.0 / std::sqrt(m.squares / static_cast<double>(count) + s.eps);
    // dbeta = sum dy, dgamma = sum dy * xhat, xhat = (x - mean) * inv_std.
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int64_t n = 0; n < s.batch; ++n) {
      const int64_t at = (n * s.channels + c) * s.spatial;
      for (int64_t i = 0; i < s.spatial; ++i) {
        sum_dy += dy[at + i];
        sum_dy_xhat += dy[at + i] * ((x[at + i] - m.mean) * inv_std);
      }
    }
    dgamma[c] = static_cast<float>(sum_dy_xhat);
    dbeta[c] = static_cast<float>(sum_dy);
    if (dx == nullptr) continue;
    // dx = gamma * inv_std * (dy - mean(dy) - xhat * mean(dy * xhat)): the batch's mean and
    // variance depend on every x, hence the two correction terms.
    const double mean_dy = sum_dy / static_cast<double>(count);
    const double mean_dy_xhat = sum_dy_xhat / static_cast<double>(count);
    const double k = gamma[c] * inv_std;
    for (int64_t n = 0; n < s.batch; ++n) {
      const int64_t at = (n * s.channels + c) * s.spatial;
      for (int64_t i = 0; i < s.spatial; ++i) {
        const double xhat = (x[at + i] - m.mean) * inv_std;
        dx[at + i] = static_cast<float>(k * (dy[at + i] - mean_dy - xhat * mean_dy_xhat));
      }
    }
  }
}

void BatchNormStatistics(const BatchNormShape& s, const float* x, float weight, float* mean,
                         float* var) {
  const int64_t count = s.per_channel();
  for (int64_t c = 0; c < s.channels; ++c) {
    const Moments m = ChannelMoments(s, x, c);
    const double unbiased = count > 1 ? m.squares / static_cast<double>(count - 1) : m.squares;
    mean[c] = static_cast<float>(weight * m.mean);
    var[c] = static_cast<float>(weight * unbiased);
  }
}

}  // namespace hogwild::cpu
