// Element-wise and per-row math shared by the CPU backend (plain loops) and the CUDA backend
// (one thread per element or row). Everything here is HOGWILD_HD: the CPU tests run exactly the
// arithmetic that the GPU kernels run.
#ifndef HOGWILD_KERNELS_FUNCTORS_H_
#define HOGWILD_KERNELS_FUNCTORS_H_

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace hogwild {

// y = max(x, 0).
struct ReluFn {
  HOGWILD_HD float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};

// dx = dy where the forward output y was positive, else 0 (the subgradient 0 at y == 0, as in
// PyTorch's threshold_backward).
struct ReluGradFn {
  HOGWILD_HD float operator()(float y, float dy) const { return y > 0.0f ? dy : 0.0f; }
};

// One SGD step with momentum and L2 weight decay on one element, PyTorch's torch.optim.SGD
// convention (dampening 0, no Nesterov):
//   d = g + weight_decay * p;   v = momentum * v + d (only when momentum != 0);   p = p - lr * v
// With momentum == 0 the velocity is neither read nor written (it may be a dummy).
struct SgdMomentumFn {
  float lr;
  float momentum;
  float weight_decay;

  // Returns the new parameter value; updates `velocity` in place when momentum != 0.
  HOGWILD_HD float operator()(float param, float grad, float& velocity) const {
    float d = grad + weight_decay * param;
    if (momentum != 0.0f) {
      velocity = momentum * velocity + d;
      d = velocity;
    }
    return param - lr * d;
  }
};

// Softmax cross-entropy of one row of logits, numerically stable (max subtracted before exp).
//   logits:  [K] float32
//   label:   class index in [0, K)
//   scale:   factor applied to the gradient (1 / global batch size for a mean loss)
//   dlogits: [K] float32 out, scale * (softmax(logits) - onehot(label)); may alias nothing
// Returns the unscaled loss -log softmax(logits)[label] = logsumexp(logits) - logits[label].
HOGWILD_HD float SoftmaxCrossEntropyRow(const float* logits, int num_classes, int32_t label,
                                        float scale, float* dlogits) {
  float max_logit = logits[0];
  for (int k = 1; k < num_classes; ++k) max_logit = logits[k] > max_logit ? logits[k] : max_logit;
  float sum = 0.0f;
  for (int k = 0; k < num_classes; ++k) sum += expf(logits[k] - max_logit);
  const float log_sum = logf(sum);
  for (int k = 0; k < num_classes; ++k) {
    const float p = expf(logits[k] - max_logit - log_sum);
    dlogits[k] = scale * (p - (k == label ? 1.0f : 0.0f));
  }
  return log_sum + max_logit - logits[label];
}

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_FUNCTORS_H_
