// Dispatch over every built-in op by LayerType, generated from the op list (op_table.cpp,
// op_table_cuda.cpp): what the network API, the builder, the backends and the plan reader call
// when they hold a layer type rather than an op.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "backends/kernel.h"
#include "core/layer_params.h"
#include "core/tensor_shape.h"
#include "kiln/status.h"

namespace kiln {

// The outputs of a built-in layer from its inputs (the op's shape rule), or an error saying what
// is wrong (the caller adds the layer name). Inputs are in the order the network API documents.
// Fails for parameters of another op, and for kCONSTANT and kPLUGIN (they have no shape rule).
Status inferLayerOutputs(LayerType type, const LayerParams& params,
                         const std::vector<TensorShape>& inputs, std::vector<TensorShape>& outputs);

namespace ops {

// The op's type rule (Op::computeTypes): `types` holds the types the inputs have and becomes the
// types the op computes in; false with `why` when it takes none of them.
bool computeTypes(LayerType type, const LayerParams& params, std::vector<DataType>& types,
                  std::string& why);

// The input a layer adds to its result as a residual (a Convolution's or Linear's hasResidual
// input), or -1: the input whose memory a residualInPlace tactic may write its output over.
int32_t residualInput(LayerType type, const LayerParams& params, size_t nbInputs);

// The CPU tactics of an op, reference last; empty for kCONSTANT, kPLUGIN and invalid values.
std::span<const Tactic> cpuTactics(LayerType type);
// The CUDA tactics (op_table_cuda.cpp, in builds with the CUDA backend only).
std::span<const Tactic> cudaTactics(LayerType type);

// The tactic called `name` in `tactics`, or nullptr.
const Tactic* findTactic(std::span<const Tactic> tactics, std::string_view name);

}  // namespace ops
}  // namespace kiln
