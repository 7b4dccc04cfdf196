#include "trainer/predict/checkpoint_model.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"

namespace hogwild {
namespace {

// The output size of a layer named "dense IN->OUT" (trainer/layers/dense.cc), or nullopt.
std::optional<int64_t> DenseOutputs(absl::string_view layer) {
  if (!absl::ConsumePrefix(&layer, "dense ")) return std::nullopt;
  const std::vector<absl::string_view> sizes = absl::StrSplit(layer, "->");
  int64_t out = 0;
  if (sizes.size() != 2 || !absl::SimpleAtoi(sizes[1], &out)) return std::nullopt;
  return out;
}

std::string Describe(const std::vector<std::string>& layers, int64_t num_params) {
  return absl::StrFormat("[%s] (%d parameters)", absl::StrJoin(layers, ", "), num_params);
}

}  // namespace

absl::StatusOr<ModelSpec> SpecFromSignature(const CheckpointSignature& signature,
                                            absl::string_view origin) {
  if (absl::StartsWith(signature.model_name, "sparse_") || signature.model_name == "mf") {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s holds a %s model of //sparse:train, whose checkpoints it alone resumes; predict reads "
        "the checkpoints of //trainer:train (mlp, logreg, cnn, cnn_bn)",
        origin, signature.model_name));
  }
  ModelSpec spec;
  spec.name = signature.model_name;
  spec.input_shape = signature.input_shape;
  spec.num_classes = signature.num_classes;
  spec.hidden.clear();
  if (spec.name != "mlp") return spec;
  for (const std::string& layer : signature.layers) {
    if (!absl::StartsWith(layer, "dense")) continue;
    const std::optional<int64_t> out = DenseOutputs(layer);
    if (!out.has_value()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the mlp's layer '%s' does not name its sizes (dense IN->OUT)", origin, layer));
    }
    spec.hidden.push_back(*out);
  }
  // The last dense layer is the classifier, not a hidden layer.
  if (!spec.hidden.empty()) spec.hidden.pop_back();
  return spec;
}

absl::StatusOr<std::unique_ptr<Model>> ModelFromSignature(const CheckpointSignature& signature,
                                                          absl::string_view origin) {
  HOGWILD_ASSIGN_OR_RETURN(const ModelSpec spec, SpecFromSignature(signature, origin));
  absl::StatusOr<std::unique_ptr<Model>> model = Model::Create(spec);
  if (!model.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot build the checkpoint's model %s: %s", origin,
                        signature.model_name, model.status().message()));
  }
  std::vector<std::string> layers;
  for (const auto& layer : (*model)->layers()) layers.push_back(layer->name());
  if (layers != signature.layers || (*model)->num_params() != signature.num_params) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: the checkpoint's model %s is %s; this build makes %s from it", origin,
                        signature.model_name, Describe(signature.layers, signature.num_params),
                        Describe(layers, (*model)->num_params())));
  }
  return model;
}

}  // namespace hogwild
