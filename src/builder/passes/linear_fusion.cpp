// Linear fusion: exporters write a fully connected layer as a matrix product followed by separate
// layers for its bias, its residual and its activation, each a pass over the whole output:
//   head      MatMul(X, W)   W a 2-D constant, transposeB allowed (not transposeA); or
//             Gemm(X, W[, C]) with alpha 1, no transA, W a constant, C (if any) a constant bias
//             ([N], [1, N] or one value) with beta 1
//   bias      + b            b a constant of one value per output column ([N], [1, ..., 1, N]) or a
//                            single value, either operand order (not after a Gemm with C)
//   residual  + r            r any tensor of exactly the output's shape and type
//   act       Activation     any activation with a float form (ReLU, Clip as ReLU6, GELU erf and
//                            tanh, Sigmoid, LeakyReLU, ...)
// in that order, each step optional (at least one after the head), and the pass makes the last
// layer one Linear (kiln/ops/linear.h), act(X W + b + r), reading X, W, the bias and the residual.
// The order is the Linear's own: a residual added after the activation (a pre-norm transformer's
// x + fc2(gelu(fc1(x))) adds it after fc2, which has none) ends the chain before it. SiLU has no
// Activation type (x * sigmoid(x) is two layers), so it stays outside.
//
// It fuses on every target: the Linear's CPU sgemm tactic performs the unfused layers' operations
// in their order with one pass over the output instead of three, and its CUDA tactics include the
// product followed by kiln's activation kernel (the decomposition, in one layer), so timing
// chooses between fused and unfused epilogues per layer.
//
// The chain is matched forward from the head and takes every next step it can; it stops before a
// step whose input is read by another layer too or is a network output (that tensor must then
// exist), saying so in the verbose log, as it says why a product that a bias or activation
// follows is not a head (W not constant, transposed X, alpha or beta not 1, a C of other shape).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "builder/passes/chain_fusion.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

// A matched chain: the head, the layers after it, and the Linear they become.
struct Chain {
  int32_t head = -1;
  std::vector<int32_t> tail;  // in order; the last one becomes the Linear
  LinearParams params;
  int32_t x = -1, w = -1, bias = -1, residual = -1;
};

bool isActivationStep(const GraphEditor& edit, int32_t n) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kACTIVATION || node.inputs.size() != 1) return false;
  const auto* a = std::get_if<ActivationParams>(&node.params);
  return a && a->type != ActivationType::kNOT;
}

// Whether the layer could be the next step of a chain, an add only while the chain has no
// residual (for the log: a stop that loses nothing is not worth a line).
bool couldFollow(const GraphEditor& edit, int32_t n, bool addAllowed = true) {
  return (addAllowed && isElementwise(edit, n, ElementwiseOp::kADD)) || isActivationStep(edit, n);
}

// Whether constant tensor c, added to an output of dims `out`, is a bias: every dim 1 but perhaps
// the last, which is N or 1, and no higher rank than the output (so it broadcasts along the last
// axis only).
bool isBias(const GraphTensor& c, const Dims& out) {
  const Dims& d = c.shape.dims;
  if (!isConstant(c) || d.nbDims > out.nbDims || out.nbDims == 0) return false;
  const int64_t n = out.d[out.nbDims - 1];
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const bool last = i == d.nbDims - 1;
    if (d.d[i] != 1 && !(last && d.d[i] == n)) return false;
  }
  return c.constant->size() == static_cast<size_t>(volume(d)) * dataTypeSize(c.shape.type);
}

class Matcher {
 public:
  explicit Matcher(const GraphEditor& edit) : edit_(edit) {}

  // Whether node n is a product that heads a chain, filling X, W, transposeW and a Gemm's bias;
  // false with `why` set for a product that cannot (empty for other layers).
  bool head(int32_t n, Chain& c, std::string& why) const {
    const GraphNode& node = edit_.node(n);
    if (node.outputs.size() != 1) return false;
    if (node.type == LayerType::kMATRIX_MULTIPLY) {
      const auto* p = std::get_if<MatrixMultiplyParams>(&node.params);
      if (!p || node.inputs.size() != 2) return false;
      if (p->transposeA) return because(why, "its X operand is transposed");
      c.params.transposeW = p->transposeB;
    } else if (node.type == LayerType::kGEMM) {
      const auto* p = std::get_if<GemmParams>(&node.params);
      if (!p || node.inputs.size() < 2) return false;
      if (p->transposeA) return because(why, "its A operand is transposed (transA)");
      if (p->alpha != 1.f) return because(why, "its alpha is not 1");
      c.params.transposeW = p->transposeB;
      if (node.inputs.size() == 3) {
        if (p->beta != 1.f) return because(why, "its beta is not 1");
        const GraphTensor& bias = edit_.tensor(node.inputs[2]);
        if (!isBias(bias, edit_.tensor(node.outputs[0]).shape.dims))
          return because(why, "its C " + dimsString(bias.shape.dims) +
                                  " is not a constant bias of one value per column");
        c.bias = node.inputs[2];
        c.params.hasBias = true;
      }
    } else {
      return false;
    }
    const GraphTensor& w = edit_.tensor(node.inputs[1]);
    if (!isConstant(w)) return because(why, "its W '" + w.name + "' is not a constant");
    if (w.shape.dims.nbDims != 2)
      return because(why, "its W " + dimsString(w.shape.dims) + " is not a matrix");
    if (!isFloatType(edit_.tensor(node.outputs[0]).shape.type))
      return because(why, "it is not a floating-point product");
    c.head = n;
    c.x = node.inputs[0];
    c.w = node.inputs[1];
    return true;
  }

  // Extends the chain from its head while the next layer is its next step; `stop` says why it
  // stopped before a layer that could have been one (empty when none could).
  void extend(Chain& c, std::string& stop) const {
    enum Stage { kBias, kResidual, kActivation, kDone };
    int stage = c.params.hasBias ? kResidual : kBias;
    int32_t last = c.head;
    while (stage != kDone) {
      const int32_t t = edit_.node(last).outputs[0];
      const GraphTensor& out = edit_.tensor(t);
      const auto& readers = edit_.consumers(t);
      if (readers.empty()) return;
      if (out.isOutput || readers.size() != 1) {
        for (int32_t r : readers)
          if (couldFollow(edit_, r, stage != kActivation)) {
            stop = "'" + out.name + "' is " +
                   (out.isOutput ? "a network output" : "read by more than one layer");
            break;
          }
        return;
      }
      const int32_t next = readers[0];
      if (isElementwise(edit_, next, ElementwiseOp::kADD)) {
        const auto& in = edit_.node(next).inputs;
        const int32_t other = in[0] == t ? in[1] : in[0];
        const GraphTensor& o = edit_.tensor(other);
        const TensorShape& sum = edit_.tensor(edit_.node(next).outputs[0]).shape;
        const bool keepsShape = sum.dims == out.shape.dims && sum.type == out.shape.type &&
                                o.shape.type == out.shape.type;
        if (!keepsShape) return;
        if (stage == kBias && isBias(o, out.shape.dims) && o.shape.dims != out.shape.dims) {
          c.bias = other;
          c.params.hasBias = true;
          stage = kResidual;
        } else if (stage <= kResidual && o.shape.dims == out.shape.dims) {
          c.residual = other;
          c.params.hasResidual = true;
          stage = kActivation;
        } else {
          return;
        }
      } else if (isActivationStep(edit_, next)) {
        const auto& a = std::get<ActivationParams>(edit_.node(next).params);
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

 private:
  static bool because(std::string& why, std::string reason) {
    why = std::move(reason);
    return false;
  }

  const GraphEditor& edit_;
};

// The chain's bias as the Linear takes it, [N]: the constant itself when it is [N], else a new
// constant over the same bytes (N values) or the one value repeated N times.
int32_t biasVector(GraphEditor& edit, int32_t bias, int64_t n) {
  const GraphTensor& b = edit.tensor(bias);
  if (b.shape.dims == makeDims({n})) return bias;
  std::shared_ptr<const std::vector<uint8_t>> bytes = b.constant;
  if (volume(b.shape.dims) != n) {
    const size_t size = dataTypeSize(b.shape.type);
    auto repeated = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n) * size);
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(repeated->data() + static_cast<size_t>(j) * size, b.constant->data(), size);
    bytes = std::move(repeated);
  }
  const TensorShape shape{makeDims({n}), b.shape.type};
  return edit.addConstant(b.name + "_bias", shape, std::move(bytes));
}

std::string features(const LinearParams& p) {
  std::string s;
  auto add = [&](const std::string& f) { s += (s.empty() ? "" : ", ") + f; };
  if (p.transposeW) add("W transposed");
  if (p.hasBias) add("bias");
  if (p.hasResidual) add("residual");
  if (p.hasActivation) add("activation type " + std::to_string(static_cast<int32_t>(p.activation)));
  return s;
}

}  // namespace

Status fuseLinear(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    if (edit.removed(n)) continue;
    const Matcher m(edit);
    Chain c;
    std::string why;
    if (!m.head(n, c, why)) {
      // A product with a reason (it has one output) is worth a line when a step follows it.
      if (!why.empty()) {
        const auto& readers = edit.consumers(edit.node(n).outputs[0]);
        if (readers.size() == 1 && couldFollow(edit, readers[0]))
          context.declined("left " + describe(edit.node(n)) + " alone: " + why);
      }
      continue;
    }
    std::string stop;
    m.extend(c, stop);
    const std::string what =
        describe(edit.node(n)) +
        (c.tail.empty() ? "" : " and the " + std::to_string(c.tail.size()) + " layers after it");
    if (!stop.empty())
      context.declined((c.tail.empty() ? "left " + what + " alone: "
                                       : "ended the Linear of " + what + " early: ") +
                       stop);
    if (c.tail.empty()) continue;
    const int32_t last = c.tail.back();
    const TensorShape expect = edit.tensor(edit.node(last).outputs[0]).shape;
    const int64_t columns = expect.dims.d[expect.dims.nbDims - 1];
    // The Linear's shape rule decides what it takes (the bias as the [N] it will be); its output
    // must be the chain's.
    std::vector<TensorShape> shapes{edit.tensor(c.x).shape, edit.tensor(c.w).shape}, outShapes;
    if (c.bias >= 0) shapes.push_back({makeDims({columns}), edit.tensor(c.bias).shape.type});
    if (c.residual >= 0) shapes.push_back(edit.tensor(c.residual).shape);
    const Status st = inferLayerOutputs(LayerType::kLINEAR, c.params, shapes, outShapes);
    if (!st || outShapes.size() != 1 || outShapes[0].dims != expect.dims ||
        outShapes[0].type != expect.type) {
      context.declined("left " + what + " alone: " +
                       (st ? std::string("the Linear would not give its output's shape")
                           : "the Linear layer refuses it: " + st.message()));
      continue;
    }
    std::vector<int32_t> inputs{c.x, c.w};
    if (c.bias >= 0) inputs.push_back(biasVector(edit, c.bias, columns));
    if (c.residual >= 0) inputs.push_back(c.residual);
    std::string names = describe(edit.node(n));
    for (int32_t t : c.tail) names += ", " + describe(edit.node(t));
    context.changed("fused " + names + " into one Linear of '" + edit.tensor(c.x).name + "' (" +
                    features(c.params) + ")");
    edit.removeNode(n);
    for (size_t i = 0; i + 1 < c.tail.size(); ++i) edit.removeNode(c.tail[i]);
    edit.replaceLayer(last, LayerType::kLINEAR, c.params, std::move(inputs));
  }
  return edit.compact();
}

}  // namespace kiln::passes
