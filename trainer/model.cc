#include "trainer/model.h"

#include <random>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "trainer/dense.h"
#include "trainer/relu.h"

namespace hogwild {

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
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown model '%s'; known models: logreg, mlp", spec.name));
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
