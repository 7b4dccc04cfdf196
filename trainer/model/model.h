// A feed-forward classifier: a stack of layers over one flat parameter array, trained with
// softmax cross-entropy. Models are chosen by name:
//   logreg   multinomial logistic regression: dense D->K
//   mlp      dense D->H1, ReLU, ..., dense Hn->K (hidden sizes from ModelSpec::hidden)
//   cnn      LeNet-style for [C, H, W] images: conv5x5-32 pad 2, ReLU, maxpool 2x2,
//            conv5x5-64 pad 2, ReLU, maxpool 2x2, flatten, dense 256, ReLU, dense K
//            (input [1, 28, 28]: 857,738 parameters; table in docs/workloads.md, Models); each
//            ReLU + maxpool runs as maxpool + ReLU, the same function and gradient bit for bit
//   cnn_bn   cnn with batch norm (trainer/layers/batch_norm.h) after each conv and after the
//            dense 256, before its ReLU (input [1, 28, 28]: 859,146 parameters, 704 of them
//            moving statistics)
// The parameter layout is the layers' slices in order (each layer's own layout in its header).
#ifndef HOGWILD_TRAINER_MODEL_MODEL_H_
#define HOGWILD_TRAINER_MODEL_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "trainer/layers/layer.h"

namespace hogwild {

struct ModelSpec {
  std::string name = "mlp";
  std::vector<int64_t> hidden = {256, 256};  // mlp only
  Shape input_shape = {1, 28, 28};           // per example
  int64_t num_classes = 10;
};

// Whether the model `spec` names has batch-norm layers (moving statistics), known from its name
// without building it: cnn_bn. Pure.
inline bool HasBatchNorm(const ModelSpec& spec) { return spec.name == "cnn_bn"; }

class Model {
 public:
  // Builds the model. Errors: kInvalidArgument for an unknown name (listing the known ones),
  // an mlp without hidden layers, a non-positive size, or a cnn (cnn_bn) on non-image input.
  static absl::StatusOr<std::unique_ptr<Model>> Create(const ModelSpec& spec);

  const ModelSpec& spec() const { return spec_; }
  int64_t num_params() const { return num_params_; }
  int64_t input_features() const { return NumElements(spec_.input_shape); }
  int64_t num_classes() const { return spec_.num_classes; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // Offset of layer i's parameters in the flat array.
  int64_t param_offset(size_t layer) const { return offsets_[layer]; }

  // The [begin, end) ranges of the flat array that hold biases (Layer::num_bias_params), in
  // order, e.g. for mlp 784-256-256-10: [200704, 200960), [266496, 266752), [269312, 269322).
  std::vector<std::pair<int64_t, int64_t>> BiasRanges() const;

  // The [begin, end) ranges of the flat array that hold moving statistics, not trained
  // (Layer::num_stat_params: batch norm's moving mean and variance), in order; empty for models
  // without batch norm.
  std::vector<std::pair<int64_t, int64_t>> StatRanges() const;

  // Writes initial parameters ([P] host memory); deterministic in `seed`.
  void InitParams(uint64_t seed, absl::Span<float> params) const;

  // One line per layer with its output shape and parameter count, then the total.
  std::string Describe() const;

 private:
  Model(ModelSpec spec, std::vector<std::unique_ptr<Layer>> layers);

  ModelSpec spec_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<int64_t> offsets_;
  int64_t num_params_ = 0;
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_MODEL_MODEL_H_
