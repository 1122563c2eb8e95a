// Elementwise chain fusion: what the product fusions leave of per-element work often comes as a
// run of layers, each one more pass over the whole tensor: an add then an activation outside a
// convolution's epilogue, a mask's (1 - m) * -10000, a scale then a shift, a clamp written as max
// then min. A run of at least two such steps, each
//   Activation   any activation with a float form
//   Elementwise  add, sub, mul, div, max, min, pow, prelu or fmod of the value so far and either a
//                one-element constant or a tensor of exactly its shape and type (no broadcast)
// becomes one ElementwiseChain layer (kiln/ops/elementwise_chain.h): it reads x and each operand
// once and writes once, computing every step in FP32 and rounding once at the end.
//
// It runs after the convolution and linear fusions, which take the steps that belong in a
// product's epilogue first. Unconditional, as the other fusions: fewer passes over memory for the
// same arithmetic. A run whose intermediate is read by another layer too, or is a network output,
// stays, with the reason in the verbose log; runs of more than kMaxElementwiseChainSteps fuse
// their last steps only.
#include <string>
#include <vector>

#include "builder/passes/chain_fusion.h"
#include "ops/elementwise_chain/elementwise_chain_semantics.h"

namespace kiln::passes {
namespace {

// One step as seen from its node: which input carries the value so far, and what the step does.
struct Step {
  int32_t value = -1;    // the tensor the step applies to
  int32_t operand = -1;  // a kINPUT step's other tensor
  ElementwiseChainStep kind = ElementwiseChainStep::kACTIVATION;
  int32_t code = 0;
  float alpha = 0.f, beta = 0.f;
  bool operandFirst = false;
};

class Matcher {
 public:
  explicit Matcher(const GraphEditor& edit) : edit_(edit) {}

  // Node n as a step, with `preferred` the side to take as the value when both could be (-1:
  // input 0); false when n is no step.
  bool step(int32_t n, Step& s, int32_t preferred = -1) const {
    const GraphNode& node = edit_.node(n);
    if (node.outputs.size() != 1) return false;
    const GraphTensor& out = edit_.tensor(node.outputs[0]);
    if (!isFloatType(out.shape.type)) return false;
    if (node.type == LayerType::kACTIVATION) {
      const auto* a = std::get_if<ActivationParams>(&node.params);
      if (!a || a->type == ActivationType::kNOT || node.inputs.size() != 1) return false;
      s = Step{node.inputs[0],
               -1,
               ElementwiseChainStep::kACTIVATION,
               static_cast<int32_t>(a->type),
               a->alpha,
               a->beta,
               false};
      return true;
    }
    if (node.type != LayerType::kELEMENTWISE || node.inputs.size() != 2) return false;
    const auto* e = std::get_if<ElementwiseParams>(&node.params);
    if (!e || !ops::elementwise_chain::isChainOp(e->op)) return false;
    const int32_t a = node.inputs[0], b = node.inputs[1];
    if (a == b) return false;  // x op x reads the value twice
    // Shapes decide what a step is, so in a profile build they must hold at every corner
    // (GraphTensor::rangeDims): every corner's graph stays one list of steps.
    const auto sameAsOut = [&](int32_t t) {
      const GraphTensor& g = edit_.tensor(t);
      return g.shape.dims == out.shape.dims && g.shape.type == out.shape.type &&
             g.rangeDims == out.rangeDims;
    };
    const auto scalar = [&](int32_t t) {
      const GraphTensor& g = edit_.tensor(t);
      if (!isConstant(g) || volume(g.shape.dims) != 1 || !isFloatType(g.shape.type)) return false;
      for (const Dims& d : g.rangeDims)
        if (volume(d) != 1) return false;
      return true;
    };
    const int32_t code = static_cast<int32_t>(e->op);
    for (int side : {0, 1}) {
      const int32_t v = side ? b : a, other = side ? a : b;
      if (!sameAsOut(v) || !scalar(other)) continue;
      const auto value = static_cast<float>(constantValue(edit_.tensor(other), 0));
      s = Step{v, -1, ElementwiseChainStep::kSCALAR, code, value, 0.f, side == 1};
      return true;
    }
    if (!sameAsOut(a) || !sameAsOut(b)) return false;
    const bool second = preferred == b;
    s = Step{second ? b : a, second ? a : b, ElementwiseChainStep::kINPUT, code, 0.f, 0.f, second};
    return true;
  }

  // Whether tensor t is an intermediate a chain may pass through: read by one layer only and not
  // a network output.
  bool passesThrough(int32_t t) const {
    return !edit_.tensor(t).isOutput && edit_.consumers(t).size() == 1;
  }

  // The side of node n whose producer could continue the chain backwards, else -1.
  int32_t extendableSide(int32_t n) const {
    for (int32_t t : edit_.node(n).inputs) {
      const int32_t p = edit_.producer(t);
      Step ignored;
      if (p >= 0 && passesThrough(t) && step(p, ignored)) return t;
    }
    return -1;
  }

 private:
  const GraphEditor& edit_;
};

}  // namespace

Status fuseElementwiseChains(Graph& graph, PassContext& context) {
  return fuseChains(graph, context, [](const GraphEditor& edit, int32_t n, ChainFusion& f) {
    const Matcher m(edit);
    Step last;
    if (!m.step(n, last)) return false;
    // Only at a run's end: a step whose single reader is another step leaves the fusion to it.
    const int32_t out = edit.node(n).outputs[0];
    if (m.passesThrough(out)) {
      Step next;
      if (m.step(edit.consumers(out)[0], next)) return false;
    }
    // Walk back while the value comes from another step read only here.
    std::vector<int32_t> nodes;  // the run, last first
    std::vector<Step> steps;
    int32_t cur = n;
    while (true) {
      Step s;
      m.step(cur, s, m.extendableSide(cur));
      nodes.push_back(cur);
      steps.push_back(s);
      const int32_t p = edit.producer(s.value);
      Step before;
      if (static_cast<int32_t>(steps.size()) == kMaxElementwiseChainSteps || p < 0 ||
          !m.passesThrough(s.value) || !m.step(p, before))
        break;
      cur = p;
    }
    if (steps.size() < 2) return false;
    const int32_t x = steps.back().value;
    ElementwiseChainParams p;
    std::vector<int32_t> inputs = {x};
    for (auto s = steps.rbegin(); s != steps.rend(); ++s) {  // first step first
      int32_t input = 0;
      if (s->operand >= 0) {
        input = static_cast<int32_t>(inputs.size());
        inputs.push_back(s->operand);
      }
      appendChainStep(p, s->kind, s->code, s->alpha, s->beta, input, s->operandFirst);
    }
    f.chain.assign(nodes.begin() + 1, nodes.end());
    f.what = std::to_string(steps.size()) + " elementwise and activation layers ending in " +
             describe(edit.node(n));
    f.into = "one ElementwiseChain of '" + edit.tensor(x).name + "'";
    f.type = LayerType::kELEMENTWISE_CHAIN;
    f.params = p;
    f.inputs = std::move(inputs);
    return true;
  });
}

}  // namespace kiln::passes
