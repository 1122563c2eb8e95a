// Convolution fusion: a CNN writes each convolution's epilogue as separate layers, each one more
// pass over the whole output:
//   head      Convolution(x, W[, b])   any convolution with a floating-point output
//   bias      + b            b a constant of one value per output channel ([K,1,1], [1,K,1,1]) or
//                            a single value, either operand order (only when the convolution has
//                            no bias of its own; a BatchNorm folded by affine_folding gives it one)
//   residual  + r            r any tensor of exactly the output's shape and type (a ResNet block's
//                            shortcut, a MobileNetV2 block's input)
//   act       Activation     any activation with a float form (ReLU, Clip as ReLU6, HardSwish,
//                            Sigmoid, LeakyReLU, ...)
// in that order, each step optional (at least one after the head), and the pass makes the last
// layer one Convolution with that epilogue (kiln/ops/convolution.h): act(conv(x, W) + b + r).
// SiLU (x * sigmoid(x)) is two layers with no Activation type, so it stays outside.
//
// It fuses on every target: the CPU tactics apply the epilogue in one pass over each image's output
// while it is in cache, and the CUDA tactics run it in the product's kernel (cuBLASLt's epilogue
// for the 1x1 convolutions) or in one kernel after cuDNN's, instead of one kernel per layer.
//
// The chain is matched forward from the head and takes every next step it can; it stops before a
// step whose input is read by another layer too or is a network output (that tensor must then
// exist), saying so in the verbose log.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "builder/passes/chain_fusion.h"
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

bool isActivationStep(const GraphEditor& edit, int32_t n) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kACTIVATION || node.inputs.size() != 1) return false;
  const auto* a = std::get_if<ActivationParams>(&node.params);
  return a && a->type != ActivationType::kNOT;
}

bool couldFollow(const GraphEditor& edit, int32_t n) {
  return isElementwise(edit, n, ElementwiseOp::kADD) || isActivationStep(edit, n);
}

// Whether constant c, added to a convolution output of dims `out` [N, K, H, W], is one value per
// output channel: [K, 1, 1], [1, K, 1, 1], or a single value (of any rank up to 4).
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

// The chain's added bias as the convolution takes it, [K]: a new constant over the same bytes (K
// values) or the one value repeated K times.
int32_t channelBias(GraphEditor& edit, int32_t bias, int64_t k) {
  const GraphTensor& b = edit.tensor(bias);
  std::shared_ptr<const std::vector<uint8_t>> bytes = b.constant;
  if (volume(b.shape.dims) != k) {
    const size_t size = dataTypeSize(b.shape.type);
    auto repeated = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(k) * size);
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(repeated->data() + static_cast<size_t>(j) * size, b.constant->data(), size);
    bytes = std::move(repeated);
  }
  return edit.addConstant(b.name + "_bias", TensorShape{makeDims({k}), b.shape.type},
                          std::move(bytes));
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

// Extends the chain from its head while the next layer is its next step; `stop` says why it
// stopped before a layer that could have been one (empty when none could).
void extend(const GraphEditor& edit, Chain& c, std::string& stop) {
  enum Stage { kBias, kResidual, kActivation, kDone };
  int stage = c.headInputs.size() == 3 ? kResidual : kBias;
  int32_t last = c.head;
  while (stage != kDone) {
    const int32_t t = edit.node(last).outputs[0];
    const GraphTensor& out = edit.tensor(t);
    const auto& readers = edit.consumers(t);
    if (readers.empty()) return;
    if (out.isOutput || readers.size() != 1) {
      for (int32_t r : readers)
        if (couldFollow(edit, r)) {
          stop = "'" + out.name + "' is " +
                 (out.isOutput ? "a network output" : "read by more than one layer");
          break;
        }
      return;
    }
    const int32_t next = readers[0];
    if (isElementwise(edit, next, ElementwiseOp::kADD) && stage != kActivation) {
      const auto& in = edit.node(next).inputs;
      const int32_t other = in[0] == t ? in[1] : in[0];
      const GraphTensor& o = edit.tensor(other);
      const TensorShape& sum = edit.tensor(edit.node(next).outputs[0]).shape;
      if (sum.dims != out.shape.dims || sum.type != out.shape.type ||
          o.shape.type != out.shape.type || other == t)
        return;
      if (stage == kBias && o.shape.dims != out.shape.dims && isChannelBias(o, out.shape.dims)) {
        c.bias = other;
        stage = kResidual;
      } else if (o.shape.dims == out.shape.dims) {
        c.residual = other;
        c.params.hasResidual = true;
        stage = kActivation;
      } else {
        return;
      }
    } else if (isActivationStep(edit, next)) {
      const auto& a = std::get<ActivationParams>(edit.node(next).params);
      c.params.hasActivation = true;
      c.params.activation = a.type;
      c.params.activationAlpha = a.alpha;
      c.params.activationBeta = a.beta;
      stage = kDone;
    } else {
      return;
    }
    c.tail.push_back(next);
    last = next;
  }
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
    if (c.bias >= 0) inputs.push_back(channelBias(edit, c.bias, c.params.outChannels));
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
