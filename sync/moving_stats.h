// The moving-statistics update of batch norm's moving mean and variance (trainer/layers/
// batch_norm.h, which states the whole contract): for the entries of SgdOptions::moving_stats,
// whose gradient slots hold the (averaged) batch statistics s instead of a gradient,
//
//   p <- p + momentum * (s - p)      (PyTorch's running stats, momentum 0.1 = TF's decay 0.9)
//
// in place of the optimizer's rule. It is written as an SgdMomentumFn with lr = -momentum,
// momentum 0 and weight_decay -1 (p - lr * (s + wd * p) = p + momentum * (s - p), the same
// two roundings), so that every path that applies an SgdMomentumFn applies it unchanged: the
// vectorized cpu::SgdUpdate on plain memory (sync, backup, local_sgd) and the store's lock-free
// SgdUpdateAndRead (async, ssp: the same atomic element access as the parameters, no state).
#ifndef HOGWILD_SYNC_MOVING_STATS_H_
#define HOGWILD_SYNC_MOVING_STATS_H_

#include "kernels/functors.h"

namespace hogwild {

// The functor of the moving-statistics update; momentum in (0, 1]. Pure.
inline SgdMomentumFn MovingStatsFn(float momentum) {
  return SgdMomentumFn{.lr = -momentum, .momentum = 0.0f, .weight_decay = -1.0f};
}

}  // namespace hogwild

#endif  // HOGWILD_SYNC_MOVING_STATS_H_
