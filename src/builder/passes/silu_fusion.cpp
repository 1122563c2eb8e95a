// SiLU fusion: ONNX has no SiLU (Swish) operator up to opset 21, so exporters write nn.SiLU (and
// F.silu, EfficientNet's and YOLO's activation) as two layers,
//   y = x * sigmoid(x)
// a Sigmoid reading x and a Mul of x by it (either operand order). The pass makes the Mul one
// Activation kSILU reading x and drops the Sigmoid; convolution and linear fusion, which run
// later, then take it into a product's epilogue like any other activation (issue 9's
// convolution + bias + SiLU).
//
// Unconditional, as gelu_fusion is: one layer reads x once and writes y once where the pair makes
// two passes and an intermediate, and computes the same product in FP32 (without the rounding of
// the intermediate sigmoid to the tensor's type). A Sigmoid also read by another layer, or that is
// a network output, stays, with the reason in the verbose log.
#include <string>

#include "builder/passes/chain_fusion.h"

namespace kiln::passes {
namespace {

// The input of node n when it is an Activation of `type`, else -1.
int32_t activationInput(const GraphEditor& edit, int32_t n, ActivationType type) {
  if (n < 0 || edit.node(n).type != LayerType::kACTIVATION) return -1;
  const auto* a = std::get_if<ActivationParams>(&edit.node(n).params);
  return a && a->type == type ? edit.node(n).inputs[0] : -1;
}

}  // namespace

Status fuseSilu(Graph& graph, PassContext& context) {
  return fuseChains(graph, context, [](const GraphEditor& edit, int32_t n, ChainFusion& f) {
    if (!isElementwise(edit, n, ElementwiseOp::kMUL)) return false;
    const auto& in = edit.node(n).inputs;
    for (size_t side = 0; side < 2; ++side) {
      const int32_t sigmoid = edit.producer(in[1 - side]);
      const int32_t x = activationInput(edit, sigmoid, ActivationType::kSIGMOID);
      if (x < 0 || x != in[side]) continue;
      const GraphTensor& t = edit.tensor(x);
      // Not a broadcast product (the Mul's output has x's shape) and a float x.
      if (t.shape.dims != edit.tensor(edit.node(n).outputs[0]).shape.dims ||
          !isFloatType(t.shape.type))
        return false;
      f.chain = {sigmoid};
      f.what = "the SiLU written out as Sigmoid and " + describe(edit.node(n));
      f.into = "one SiLU of '" + t.name + "'";
      f.type = LayerType::kACTIVATION;
      f.params = ActivationParams{ActivationType::kSILU};
      f.inputs = {x};
      return true;
    }
    return false;
  });
}

}  // namespace kiln::passes
