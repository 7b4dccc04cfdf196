// The per-example shape of a tensor, shared by the layers, the datasets and the checkpoints.
//
// Shapes are outermost dimension first: {features} for dense activations, {C, H, W} (NCHW) for
// convolutional ones. A batch of B examples of shape S is [B, ...S], row-major.
#ifndef HOGWILD_CORE_SHAPE_H_
#define HOGWILD_CORE_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hogwild {

// Per-example shape of an activation, outermost dimension first.
using Shape = std::vector<int64_t>;

// Product of the dimensions (1 for an empty shape). Pure.
int64_t NumElements(const Shape& shape);

// "1x28x28". Pure.
std::string ShapeToString(const Shape& shape);

}  // namespace hogwild

#endif  // HOGWILD_CORE_SHAPE_H_
