#include "trainer/model/model.h"

#include <random>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "trainer/layers/batch_norm.h"
#include "trainer/layers/conv2d.h"
#include "trainer/layers/dense.h"
#include "trainer/layers/flatten.h"
#include "trainer/layers/max_pool2d.h"
#include "trainer/layers/relu.h"

namespace hogwild {
namespace {

// cnn: conv5x5-32 (pad 2), ReLU, maxpool 2x2, conv5x5-64 (pad 2), ReLU, maxpool 2x2, flatten,
// dense 256, ReLU, dense K (each ReLU + maxpool computed as maxpool + ReLU, below); the padding
// keeps each conv's output the size of its input, so a 28x28 image leaves the second pooling as
// 64x7x7 = 3136 features. With batch_norm (cnn_bn), a BatchNorm after each conv and after the dense
// 256, before the ReLU (Ioffe & Szegedy's placement). The convs keep their biases, which the batch
// norm makes redundant (their gradient is 0), so cnn_bn's conv layers are cnn's.
absl::Status AddLeNet(const ModelSpec& spec, bool batch_norm,
                      std::vector<std::unique_ptr<Layer>>& layers) {
  const auto add_batch_norm = [&](const Shape& shape) -> absl::Status {
    if (!batch_norm) return absl::OkStatus();
    HOGWILD_ASSIGN_OR_RETURN(auto bn, BatchNorm::Create(shape));
    layers.push_back(std::move(bn));
    return absl::OkStatus();
  };
  Shape shape = spec.input_shape;  // [C, H, W]; a [H, W] image has one channel
  if (shape.size() == 2) shape.insert(shape.begin(), 1);
  if (shape.size() != 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--model=%s needs image examples [channels, height, width], got %s; use --model=mlp "
        "for flat feature vectors",
        spec.name, ShapeToString(spec.input_shape)));
  }
  for (int64_t channels : {32, 64}) {
    HOGWILD_ASSIGN_OR_RETURN(auto conv, Conv2d::Create({.in_channels = shape[0],
                                                        .in_height = shape[1],
                                                        .in_width = shape[2],
                                                        .out_channels = channels,
                                                        .kernel = 5,
                                                        .stride = 1,
                                                        .pad = 2}));
    shape = conv->output_shape();
    layers.push_back(std::move(conv));
    HOGWILD_RETURN_IF_ERROR(add_batch_norm(shape));
    HOGWILD_ASSIGN_OR_RETURN(auto pool, MaxPool2d::Create({.channels = shape[0],
                                                           .in_height = shape[1],
                                                           .in_width = shape[2],
                                                           .window = 2,
                                                           .stride = 2,
                                                           .pad = 0}));
    shape = pool->output_shape();
    layers.push_back(std::move(pool));
    // ReLU, then max-pool, computed as max-pool, then ReLU: the same outputs and gradients bit
    // for bit (max commutes with the monotone ReLU, and both orders send a window's gradient to
    // its first maximum when that is positive, nowhere otherwise; tests/max_pool2d_test.cc), on a
    // quarter of the elements.
    layers.push_back(std::make_unique<Relu>(shape));
  }
  layers.push_back(std::make_unique<Flatten>(shape));
  const int64_t features = NumElements(shape);
  layers.push_back(std::make_unique<Dense>(features, 256));
  HOGWILD_RETURN_IF_ERROR(add_batch_norm(Shape{256}));
  layers.push_back(std::make_unique<Relu>(Shape{256}));
  layers.push_back(std::make_unique<Dense>(256, spec.num_classes));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> Model::Create(const ModelSpec& spec) {
  const int64_t features = NumElements(spec.input_shape);
  if (features <= 0 || spec.num_classes <= 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model needs a positive input size and >= 2 classes, got input %s and %d classes",
        ShapeToString(spec.input_shape), spec.num_classes));
  }
  std::vector<std::unique_ptr<Layer>> layers;
  if (spec.name == "logreg") {
    layers.push_back(std::make_unique<Dense>(features, spec.num_classes));
  } else if (spec.name == "mlp") {
    if (spec.hidden.empty()) {
      return absl::InvalidArgumentError("--model=mlp needs at least one hidden size (--hidden)");
    }
    int64_t in = features;
    for (int64_t h : spec.hidden) {
      if (h <= 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("hidden sizes must be positive, got %d", h));
      }
      layers.push_back(std::make_unique<Dense>(in, h));
      layers.push_back(std::make_unique<Relu>(Shape{h}));
      in = h;
    }
    layers.push_back(std::make_unique<Dense>(in, spec.num_classes));
  } else if (spec.name == "cnn" || spec.name == "cnn_bn") {
    HOGWILD_RETURN_IF_ERROR(AddLeNet(spec, spec.name == "cnn_bn", layers));
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown model '%s'; known models: logreg, mlp, cnn, cnn_bn", spec.name));
  }
  // The tower hands each layer the previous one's output buffer as its input.
  int64_t width = features;
  for (const auto& layer : layers) {
    if (NumElements(layer->input_shape()) != width) {
      return absl::InternalError(
          absl::StrFormat("model %s: layer '%s' expects %s inputs but gets %d", spec.name,
                          layer->name(), ShapeToString(layer->input_shape()), width));
    }
    width = NumElements(layer->output_shape());
  }
  return std::unique_ptr<Model>(new Model(spec, std::move(layers)));
}

Model::Model(ModelSpec spec, std::vector<std::unique_ptr<Layer>> layers)
    : spec_(std::move(spec)), layers_(std::move(layers)) {
  for (const auto& layer : layers_) {
    offsets_.push_back(num_params_);
    num_params_ += layer->num_params();
  }
}

std::vector<std::pair<int64_t, int64_t>> Model::BiasRanges() const {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const int64_t biases = layers_[i]->num_bias_params();
    if (biases == 0) continue;
    const int64_t end = offsets_[i] + layers_[i]->num_params() - layers_[i]->num_stat_params();
    ranges.emplace_back(end - biases, end);
  }
  return ranges;
}

std::vector<std::pair<int64_t, int64_t>> Model::StatRanges() const {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const int64_t stats = layers_[i]->num_stat_params();
    if (stats == 0) continue;
    const int64_t end = offsets_[i] + layers_[i]->num_params();
    ranges.emplace_back(end - stats, end);
  }
  return ranges;
}

void Model::InitParams(uint64_t seed, absl::Span<float> params) const {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->InitParams(rng, params.subspan(offsets_[i], layers_[i]->num_params()));
  }
}

std::string Model::Describe() const {
  std::string out = absl::StrFormat("%s, input %s\n", spec_.name, ShapeToString(spec_.input_shape));
  for (const auto& layer : layers_) {
    absl::StrAppendFormat(&out, "  %-24s -> %-12s %d params\n", layer->name(),
                          ShapeToString(layer->output_shape()), layer->num_params());
  }
  absl::StrAppendFormat(&out, "  total %d parameters", num_params_);
  return out;
}

}  // namespace hogwild
