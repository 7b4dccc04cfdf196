// An exponential moving average of the parameters (TensorFlow's tf.train.ExponentialMovingAverage,
// which the multi-GPU Estimator example evaluates with): after each applied update,
//   shadow <- shadow - (1 - d) * (shadow - params),   d = decay, or with the num_updates warm-up
//   d = min(decay, (1 + num_updates) / (10 + num_updates))
// (num_updates: the global step after the update), so early averages follow the parameters
// closely. The shadow starts as the initial parameters.
//
// Thread-safety: Update() may run concurrently from several workers (async: each worker after its
// own update), lock-free like the Hogwild parameters: each shadow element is loaded and stored
// once per update with relaxed std::atomic_ref accesses, so concurrent updates of an element may
// be lost, never torn. Read() may run concurrently with Update() and may mix elements from before
// and after one.
#ifndef HOGWILD_TRAINER_WEIGHT_EMA_H_
#define HOGWILD_TRAINER_WEIGHT_EMA_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/mode.h"

namespace hogwild {

// Whether worker `worker`'s steps update the EMA, after its FinishStep, with the parameters as it
// then reads them and the global step: every worker's in async mode (after its own update), worker
// 0's alone in the other modes (sync: once per step, after the closing barrier). The real workers
// (trainer/worker.cc) and the simulated ones (sim/) follow this one rule. Pure.
inline bool WorkerUpdatesEma(Mode mode, int worker) { return mode == Mode::kAsync || worker == 0; }

class WeightEma {
 public:
  // The shadow of `initial` ([P] float32). decay in (0, 1).
  WeightEma(absl::Span<const float> initial, float decay, bool num_updates_warmup);

  // The decay applied by the update that brought the global step to `num_updates`. Pure.
  static float DecayAt(float decay, bool num_updates_warmup, uint64_t num_updates);

  // shadow <- shadow - (1 - d) * (shadow - params) for every element; params: [P] float32.
  void Update(absl::Span<const float> params, uint64_t num_updates);

  // Copies the shadow into `out` ([P] float32).
  void Read(absl::Span<float> out) const;

  int64_t size() const { return static_cast<int64_t>(shadow_.size()); }

 private:
  const float decay_;
  const bool num_updates_warmup_;
  mutable std::vector<float> shadow_;  // [P]; mutable: atomic_ref needs a non-const referent
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_WEIGHT_EMA_H_
