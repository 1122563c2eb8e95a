// Linear fusion: exporters write a fully connected layer as a matrix product followed by separate
// layers for its bias, its residual and its activation, each a pass over the whole output:
//   head      MatMul(X, W)   W a 2-D constant, transposeB allowed (not transposeA); or
//             Gemm(X, W[, C]) with alpha 1, no transA, W a constant, C (if any) a constant bias
//             ([N], [1, N] or one value) with beta 1; or a Linear without residual and
//             activation (the pipeline runs this pass again after transpose motion)
//   bias      + b            b a constant of one value per output column ([N], [1, ..., 1, N]) or a
//                            single value, either operand order (not after a Gemm with C)
//   residual  + r            r any tensor of exactly the output's shape and type
//   act       Activation     any activation with a float form (ReLU, Clip as ReLU6, GELU erf and
//                            tanh, Sigmoid, LeakyReLU, ...)
// in that order, each step optional (at least one after the head), and the pass makes the last
// layer one Linear (kiln/ops/linear.h), act(X W + b + r), reading X, W, the bias and the residual.
// The order is the Linear's own: a residual added after the activation (a pre-norm transformer's
// x + fc2(gelu(fc1(x))) adds it after fc2, which has none) ends the chain before it. SiLU comes as
// one Activation from silu_fusion, which runs before.
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
#include <string>
#include <vector>

#include "builder/passes/chain_fusion.h"
#include "builder/passes/epilogue_chain.h"
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

// Whether constant tensor c, added to an output// Whether constant tensor c, added to an output of
// dims `out`, is a bias: every dim 1 but perhaps the last, which is N or 1, and no higher rank than
// the output (so it broadcasts along the last axis only).
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
    } else if (node.type == LayerType::kLINEAR) {
      // A Linear made earlier (by this pass before transpose motion) that a residual add or an
      // activation now follows: its own bias stays, the chain goes on from there.
      const auto* p = std::get_if<LinearParams>(&node.params);
      if (!p || p->hasResidual || p->hasActivation) return false;
      c.params = *p;
      if (p->hasBias) c.bias = node.inputs[2];
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

  // Extends the chain from its head while the next layer is its next step (epilogue_chain.h).
  void extend(Chain& c, std::string& stop) const {
    const EpilogueSteps steps = extendEpilogue(edit_, c.head, c.params.hasBias, &isBias, stop);
    c.tail = steps.tail;
    if (steps.bias >= 0) {
      c.bias = steps.bias;
      c.params.hasBias = true;
    }
    c.residual = steps.residual;
    setEpilogueFields(steps, c.params);
  }

 private:
  static bool because(std::string& why, std::string reason) {
    why = std::move(reason);
    return false;
  }

  const GraphEditor& edit_;
};

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
