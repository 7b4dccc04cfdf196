// Test-set evaluation: mean softmax cross-entropy loss and top-1 accuracy of given parameters.
// Runs the forward pass in chunks of `batch` examples on its own Tower.
// Thread-safety: one thread at a time per Evaluator (it owns its tower's buffers).
#ifndef HOGWILD_TRAINER_METRICS_EVALUATOR_H_
#define HOGWILD_TRAINER_METRICS_EVALUATOR_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "trainer/data/dataset.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {

struct EvalResult {
  double loss = 0.0;      // mean over examples
  double accuracy = 0.0;  // fraction in [0, 1]
  int64_t examples = 0;
};

class Evaluator {
 public:
  // model, dataset and backend must outlive the evaluator. The backend must be a host-memory
  // backend (the CPU backend) or the dataset rows are copied to it per chunk.
  static absl::StatusOr<std::unique_ptr<Evaluator>> Create(const Model* model,
                                                           const Dataset* dataset,
                                                           Backend* backend, int64_t batch = 1000);

  // params: [P] float32 host memory. `cancelled` (may be null) is read between chunks: once it
  // is true, Evaluate returns kCancelled within one chunk's forward pass, so a cancelled run
  // does not wait for a whole test-set pass (trainer/metrics/eval_runner.h).
  absl::StatusOr<EvalResult> Evaluate(absl::Span<const float> params,
                                      const std::atomic<bool>* cancelled = nullptr);

 private:
  Evaluator() = default;

  const Model* model_ = nullptr;
  const Dataset* dataset_ = nullptr;
  Backend* backend_ = nullptr;
  int64_t batch_ = 0;
  std::unique_ptr<Tower> tower_;
  BackendBuffer<float> params_;    // [P]
  BackendBuffer<float> features_;  // [batch, D]
  std::vector<float> logits_;      // [batch, K] host copy
  std::vector<float> dlogits_;     // [K] unused gradient output of the loss row function
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_EVALUATOR_H_
