// Convolution fusion: a CNN writes each convolution's epilogue as separate layers, each one more
// pass over the whole output:
//   head      Convolution(x, W[, b])   any convolution with a floating-point output
//   bias      + b            b a constant of one value per output channel ([K,1,1], [1,K,1,1]) or
//                            a single value, either operand order (only when the convolution has
//                            no bias of its own; a BatchNorm folded by affine_folding gives it one)
//   residual  + r            r any tensor of exactly the output's shape and type (a ResNet block's
//                            shortcut, a MobileNetV2 block's input)
//   act       Activation     any activation with a float form (ReLU, Clip as ReLU6, HardSwish,
//                            Sigmoid, LeakyReLU, SiLU as silu_fusion makes it, ...)
// in that order, each step optional (at least one after the head), and the pass makes the last
// layer one Convolution with that epilogue (kiln/ops/convolution.h): act(conv(x, W) + b + r).
//
// It fuses on every target: the CPU tactics apply the epilogue in one pass over each image's output
// while it is in cache, and the CUDA tactics run it in the product's kernel (cuBLASLt's epilogue
// for the 1x1 convolutions) or in one kernel after cuDNN's, instead of one kernel per layer.
//
// The chain is matched forward from the head and takes every next step it can (the walk is
// linear_fusion's too: epilogue_chain.h); it stops before a step whose input is read by another
// layer too or is a network output (that tensor must then exist), saying so in the verbose log.
#include <string>
#include <vector>

#include "builder/passes/chain_fusion.h"
#include "builder/passes/epilogue_chain.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

// A matched chain: the head, the layers after it, and the convolution they become.
struct Chain {
  int32_t head = -1;
  std::vector<int32_t> tail;  // in order; the last one becomes the convolution
  ConvolutionParams params;
  std::vector<int32_t> headInputs;  // x, W[, bias]
  int32_t bias = -1, residual = -1;
};

// Whether constant c, added to a convolution output// Whether constant c, added to a convolution
// output of dims `out` [N, K, H, W], is one value per output channel: [K, 1, 1], [1, K, 1, 1], or a
// single value (of any rank up to 4).
bool isChannelBias(const GraphTensor& c, const Dims& out) {
  if (!isConstant(c) || out.nbDims != 4) return false;
  const Dims& d = c.shape.dims;
  if (volume(d) == 1 && d.nbDims <= 4) return true;
  if (d.nbDims < 3 || d.nbDims > 4) return false;
  const int32_t k = d.nbDims - 3;  // the channel axis of d
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] != (i == k ? out.d[1] : 1)) return false;
  return true;
}

// Whether node n heads a chain: a convolution of one float output with no epilogue yet.
bool head(const GraphEditor& edit, int32_t n, Chain& c) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kCONVOLUTION || node.outputs.size() != 1) return false;
  const auto* p = std::get_if<ConvolutionParams>(&node.params);
  if (!p || p->hasResidual || p->hasActivation || node.inputs.size() < 2 || node.inputs.size() > 3)
    return false;
  if (!isFloatType(edit.tensor(node.outputs[0]).shape.type)) return false;
  c.head = n;
  c.params = *p;
  c.headInputs = node.inputs;
  return true;
}

// Extends the chain from its head while the next layer is its next step (epilogue_chain.h).
void extend(const GraphEditor& edit, Chain& c, std::string& stop) {
  const EpilogueSteps steps =
      extendEpilogue(edit, c.head, c.headInputs.size() == 3, &isChannelBias, stop);
  c.tail = steps.tail;
  c.bias = steps.bias;
  c.residual = steps.residual;
  setEpilogueFields(steps, c.params);
}

std::string features(const Chain& c) {
  std::string s;
  auto add = [&](const std::string& f) { s += (s.empty() ? "" : ", ") + f; };
  if (c.bias >= 0) add("bias");
  if (c.params.hasResidual) add("residual");
  if (c.params.hasActivation)
    add("activation type " + std::to_string(static_cast<int32_t>(c.params.activation)));
  return s;
}

}  // namespace

Status fuseConvolution(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    if (edit.removed(n)) continue;
    Chain c;
    if (!head(edit, n, c)) continue;
    std::string stop;
    extend(edit, c, stop);
    const std::string what =
        describe(edit.node(n)) +
        (c.tail.empty() ? "" : " and the " + std::to_string(c.tail.size()) + " layers after it");
    if (!stop.empty())
      context.declined((c.tail.empty() ? "left " + what + " alone: "
                                       : "ended the epilogue of " + what + " early: ") +
                       stop);
    if (c.tail.empty()) continue;
    const int32_t last = c.tail.back();
    const TensorShape expect = edit.tensor(edit.node(last).outputs[0]).shape;
    std::vector<int32_t> inputs = c.headInputs;
    if (c.bias >= 0) inputs.push_back(biasVector(edit, c.bias, c.params.outChannels));
    if (c.residual >= 0) inputs.push_back(c.residual);
    // The convolution's shape rule decides what it takes; its output must be the chain's.
    std::vector<TensorShape> shapes, outShapes;
    for (int32_t i : inputs) shapes.push_back(edit.tensor(i).shape);
    const Status st = inferLayerOutputs(LayerType::kCONVOLUTION, c.params, shapes, outShapes);
    if (!st || outShapes.size() != 1 || outShapes[0].dims != expect.dims ||
        outShapes[0].type != expect.type) {
      context.declined("left " + what + " alone: " +
                       (st ? std::string("the fused convolution would not give its output's shape")
                           : "the convolution refuses it: " + st.message()));
      continue;
    }
    std::string names = describe(edit.node(n));
    for (int32_t t : c.tail) names += ", " + describe(edit.node(t));
    context.changed("fused " + names + " into one Convolution of '" +
                    edit.tensor(c.headInputs[0]).name + "' (" + features(c) + ")");
    edit.removeNode(n);
    for (size_t i = 0; i + 1 < c.tail.size(); ++i) edit.removeNode(c.tail[i]);
    edit.replaceLayer(last, LayerType::kCONVOLUTION, c.params, std::move(inputs));
  }
  return edit.compact();
}

}  // namespace kiln::passes
