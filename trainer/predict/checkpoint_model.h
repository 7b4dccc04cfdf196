// The model a checkpoint was trained with, rebuilt from its signature alone: the checkpoint
// stores the model's name, input shape, classes, each layer's name (Layer::name(), e.g.
// "dense 784->256") and the parameter count, which together fix the architecture, so
// prediction needs no --model or --hidden.
#ifndef HOGWILD_TRAINER_PREDICT_CHECKPOINT_MODEL_H_
#define HOGWILD_TRAINER_PREDICT_CHECKPOINT_MODEL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/model.h"

namespace hogwild {

// The ModelSpec the signature describes: name, input shape and classes as stored; for mlp the
// hidden sizes are the output sizes of every dense layer but the last (read from the layer
// names). Errors: kInvalidArgument naming `origin` when an mlp's layer names do not spell its
// sizes; kFailedPrecondition naming `origin` and //sparse:train for a sparse model's checkpoint
// (sparse_logreg, sparse_svm, mf). Pure.
absl::StatusOr<ModelSpec> SpecFromSignature(const CheckpointSignature& signature,
                                            absl::string_view origin);

// Builds the model of SpecFromSignature and checks that it is exactly the checkpoint's: the
// same layer names in order and the same parameter count P. Errors, one line naming `origin`:
// kInvalidArgument for a model this build does not know (Model::Create's message) and
// kFailedPrecondition "... the checkpoint's model is <its layers> (P1 parameters); this build
// makes <its layers> (P2 parameters) from it" when they differ. Pure.
absl::StatusOr<std::unique_ptr<Model>> ModelFromSignature(const CheckpointSignature& signature,
                                                          absl::string_view origin);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_PREDICT_CHECKPOINT_MODEL_H_
