// The optimizers' element-wise update rules, shared by the CPU loops
// (kernels/cpu/optimizer_update.h) and the CUDA kernel (kernels/cuda/optimizer_update.cu):
// everything here is HOGWILD_HD, so the CPU tests run exactly the arithmetic that the GPU runs.
//
// Definitions and defaults are PyTorch's (torch.optim, single-tensor path, as of 2.x), one element
// at a time; p parameter, g gradient, lr learning rate, wd weight decay, t = the update's step
// count (1 for the first update of this state), s0 and s1 the element's state slots (zero at
// start):
//
//   sgd       torch.optim.SGD(momentum=m, dampening=0, nesterov=False), m may be 0:
//               d = g + wd*p;  if m != 0: s0 = m*s0 + d, d = s0;  p = p - lr*d
//   momentum  the same with m > 0 required (TF slim's "momentum": tf.train.MomentumOptimizer)
//   nesterov  torch.optim.SGD(nesterov=True), m > 0 (Sutskever et al., ICML 2013):
//               d = g + wd*p;  s0 = m*s0 + d;  d = d + m*s0;  p = p - lr*d
//   adam      torch.optim.Adam, betas (b1, b2) = (0.9, 0.999), eps = 1e-8 (Kingma & Ba, ICLR 2015,
//             Algorithm 1, with L2 weight decay added to the gradient as PyTorch does):
//               d = g + wd*p;  s0 = b1*s0 + (1-b1)*d;  s1 = b2*s1 + (1-b2)*d*d
//               p = p - (lr / (1 - b1^t)) * s0 / (sqrt(s1) / sqrt(1 - b2^t) + eps)
//   adamw     torch.optim.AdamW (Loshchilov & Hutter, ICLR 2019): decoupled decay first,
//               p = p * (1 - lr*wd), then adam's update with d = g.
//             (PyTorch's default wd for AdamW is 0.01; here wd is the run's --weight_decay,
//             default 0 for every optimizer, so pass 0.01 to get PyTorch's AdamW.)
//   rmsprop   torch.optim.RMSprop, alpha = 0.99, eps = 1e-8, centered=False (Hinton, Coursera
//             lecture 6e):
//               d = g + wd*p;  s0 = alpha*s0 + (1-alpha)*d*d;  a = sqrt(s0) + eps
//               if m != 0: s1 = m*s1 + d/a, p = p - lr*s1;  else p = p - lr*d/a
//   adagrad   torch.optim.Adagrad, eps = 1e-10, lr_decay = 0, initial_accumulator_value = 0
//             (Duchi et al., JMLR 2011):
//               d = g + wd*p;  s0 = s0 + d*d;  p = p - lr*d/(sqrt(s0) + eps)
//
// Only Adam and AdamW read t (bias correction); its powers are taken on the host in double
// precision (MakeOptimizerFn) so that a kernel launch carries two floats, not the step.
#ifndef HOGWILD_KERNELS_OPTIMIZER_H_
#define HOGWILD_KERNELS_OPTIMIZER_H_

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace hogwild {

enum class OptimizerKind : int32_t {
  kSgd = 0,
  kMomentum = 1,
  kNesterov = 2,
  kAdam = 3,
  kAdamW = 4,
  kRmsprop = 5,
  kAdagrad = 6,
};

// The hyper-parameters of every optimizer other than the learning rate (which follows a
// schedule). Zero eps means the optimizer's PyTorch default (DefaultEps).
struct OptimizerParams {
  OptimizerKind kind = OptimizerKind::kSgd;
  float momentum = 0.0f;      // sgd, momentum, nesterov, rmsprop; in [0, 1)
  float weight_decay = 0.0f;  // >= 0; L2 added to the gradient, decoupled for adamw
  float beta1 = 0.9f;         // adam, adamw; in [0, 1)
  float beta2 = 0.999f;       // adam, adamw; in [0, 1)
  float alpha = 0.99f;        // rmsprop's smoothing constant; in [0, 1)
  float eps = 0.0f;           // adam, adamw, rmsprop, adagrad; >= 0, 0 = DefaultEps(kind)
};

// PyTorch's default eps: 1e-10 for Adagrad, 1e-8 for Adam, AdamW and RMSprop, 0 for the SGD
// family (which has none). Pure.
HOGWILD_HD float DefaultEps(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAdagrad:
      return 1e-10f;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
    case OptimizerKind::kRmsprop:
      return 1e-8f;
    default:
      return 0.0f;
  }
}

// Number of [P] state slots the optimizer keeps per owner (s0, s1 above): 0 for sgd without
// momentum, 1 for sgd with momentum, momentum, nesterov, adagrad and rmsprop without momentum,
// 2 for adam, adamw and rmsprop with momentum. Pure.
inline int NumStateSlots(const OptimizerParams& p) {
  switch (p.kind) {
    case OptimizerKind::kSgd:
      return p.momentum != 0.0f ? 1 : 0;
    case OptimizerKind::kMomentum:
    case OptimizerKind::kNesterov:
    case OptimizerKind::kAdagrad:
      return 1;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return 2;
    case OptimizerKind::kRmsprop:
      return p.momentum != 0.0f ? 2 : 1;
  }
  return 0;
}

// Whether the optimizer reads the step count t (Adam and AdamW's bias correction). Pure.
inline bool UsesStepCount(OptimizerKind kind) {
  return kind == OptimizerKind::kAdam || kind == OptimizerKind::kAdamW;
}

// One update of one element by the rules above, for one learning rate and step. Build it with
// MakeOptimizerFn. Slots the optimizer does not keep (NumStateSlots) are neither read nor written.
struct OptimizerFn {
  OptimizerKind kind;
  float lr;
  float momentum;
  float weight_decay;
  float beta1;
  float beta2;
  float alpha;
  float eps;
  float step_size;              // adam, adamw: lr / (1 - beta1^t)
  float bias_correction2_sqrt;  // adam, adamw: sqrt(1 - beta2^t)

  // Returns the new parameter value; updates s0 and s1 in place.
  HOGWILD_HD float operator()(float p, float g, float& s0, float& s1) const {
    switch (kind) {
      case OptimizerKind::kSgd:
      case OptimizerKind::kMomentum: {
        float d = g + weight_decay * p;
        if (momentum != 0.0f) {
          s0 = momentum * s0 + d;
          d = s0;
        }
        return p - lr * d;
      }
      case OptimizerKind::kNesterov: {
        float d = g + weight_decay * p;
        s0 = momentum * s0 + d;
        d = d + momentum * s0;
        return p - lr * d;
      }
      case OptimizerKind::kAdam:
      case OptimizerKind::kAdamW: {
        float d = g;
        if (kind == OptimizerKind::kAdamW) {
          p = p * (1.0f - lr * weight_decay);
        } else {
          d = g + weight_decay * p;
        }
        s0 = beta1 * s0 + (1.0f - beta1) * d;
        s1 = beta2 * s1 + (1.0f - beta2) * d * d;
        const float denom = sqrtf(s1) / bias_correction2_sqrt + eps;
        return p - step_size * (s0 / denom);
      }
      case OptimizerKind::kRmsprop: {
        const float d = g + weight_decay * p;
        s0 = alpha * s0 + (1.0f - alpha) * d * d;
        const float avg = sqrtf(s0) + eps;
        if (momentum != 0.0f) {
          s1 = momentum * s1 + d / avg;
          return p - lr * s1;
        }
        return p - lr * (d / avg);
      }
      case OptimizerKind::kAdagrad: {
        const float d = g + weight_decay * p;
        s0 = s0 + d * d;
        return p - lr * (d / (sqrtf(s0) + eps));
      }
    }
    return p;
  }
};

// The functor for learning rate `lr` and step `step` (>= 1; read by adam and adamw only). The
// bias corrections are computed in double and rounded once. Pure.
inline OptimizerFn MakeOptimizerFn(const OptimizerParams& p, float lr, uint64_t step) {
  OptimizerFn fn{};
  fn.kind = p.kind;
  fn.lr = lr;
  fn.momentum = p.momentum;
  fn.weight_decay = p.weight_decay;
  fn.beta1 = p.beta1;
  fn.beta2 = p.beta2;
  fn.alpha = p.alpha;
  fn.eps = p.eps != 0.0f ? p.eps : DefaultEps(p.kind);
  fn.step_size = lr;
  fn.bias_correction2_sqrt = 1.0f;
  if (UsesStepCount(p.kind)) {
    const double t = static_cast<double>(step < 1 ? 1 : step);
    fn.step_size = static_cast<float>(lr / (1.0 - std::pow(static_cast<double>(p.beta1), t)));
    fn.bias_correction2_sqrt =
        static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(p.beta2), t)));
  }
  return fn;
}

}  // namespace hogwild

#endif  // HOGWILD_KERNELS_OPTIMIZER_H_
