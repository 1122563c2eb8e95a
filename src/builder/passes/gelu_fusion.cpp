// GELU fusion: exporters before ONNX opset 20 write nn.GELU (and F.gelu) out as five layers,
//   y = (x * (erf(x / sqrt(2)) + 1)) * 0.5
// each reading and writing the whole tensor (PyTorch's form; x * 0.70710678 for the division and
// x * ((...) * 0.5) are accepted too, as are either operand order of add and mul). The pass
// makes the chain's last layer one Activation kGELU reading x and drops the other four.
//
// It fuses unconditionally rather than by timing: the fused layer reads x once and writes y once
// where the chain makes five passes over memory and four intermediates, on every backend and
// shape, and computes the same function in FP32 (erf of x / sqrt(2) against x * (1 / sqrt(2)):
// the same to an ulp of the argument).
//
// A chain is left alone, with the reason in the verbose log, when one of its intermediates is
// read by another layer too or is a network output (the intermediate must then exist).
#include <string>

#include "builder/passes/chain_fusion.h"

namespace kiln::passes {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

class Matcher {
 public:
  explicit Matcher(const GraphEditor& edit) : edit_(edit) {}

  // For a commutative node n = a op b: the input that is not the scalar near `value`, or -1.
  int32_t otherThanScalar(int32_t n, double value) const {
    const auto& in = edit_.node(n).inputs;
    if (scalarNear(edit_.tensor(in[1]), value)) return in[0];
    if (scalarNear(edit_.tensor(in[0]), value)) return in[1];
    return -1;
  }

  // t = erf(x / sqrt(2)) + 1: x, with the three nodes in `chain`, or -1.
  int32_t erfPlusOne(int32_t t, std::vector<int32_t>& chain) const {
    const int32_t add = elementwiseProducer(edit_, t, ElementwiseOp::kADD);
    if (add < 0) return -1;
    const int32_t e = otherThanScalar(add, 1.0);
    const int32_t erf = e < 0 ? -1 : edit_.producer(e);
    if (erf < 0 || edit_.node(erf).type != LayerType::kACTIVATION) return -1;
    const auto* a = std::get_if<ActivationParams>(&edit_.node(erf).params);
    if (!a || a->type != ActivationType::kERF) return -1;
    const int32_t d = edit_.node(erf).inputs[0];
    int32_t x = -1, scale = elementwiseProducer(edit_, d, ElementwiseOp::kDIV);
    if (scale >= 0 && scalarNear(edit_.tensor(edit_.node(scale).inputs[1]), kSqrt2)) {
      x = edit_.node(scale).inputs[0];
    } else if ((scale = elementwiseProducer(edit_, d, ElementwiseOp::kMUL)) >= 0) {
      x = otherThanScalar(scale, 1.0 / kSqrt2);
    }
    if (x < 0) return -1;
    chain.insert(chain.end(), {scale, erf, add});
    return x;
  }

  // y (made by node last) = x * (erf(x / sqrt(2)) + 1) * 0.5 in either grouping: x, with the
  // chain's other nodes in `chain`, or -1.
  int32_t gelu(int32_t last, std::vector<int32_t>& chain) const {
    if (!isElementwise(edit_, last, ElementwiseOp::kMUL)) return -1;
    const auto& in = edit_.node(last).inputs;
    // (x * t) * 0.5
    const int32_t product = otherThanScalar(last, 0.5);
    if (product >= 0) {
      const int32_t mul = elementwiseProducer(edit_, product, ElementwiseOp::kMUL);
      if (mul < 0) return -1;
      for (size_t side = 0; side < 2; ++side) {
        std::vector<int32_t> c;
        const int32_t x = erfPlusOne(edit_.node(mul).inputs[1 - side], c);
        if (x >= 0 && x == edit_.node(mul).inputs[side]) {
          chain = c;
          chain.push_back(mul);
          return x;
        }
      }
      return -1;
    }
    // x * (t * 0.5)
    for (size_t side = 0; side < 2; ++side) {
      const int32_t half = elementwiseProducer(edit_, in[1 - side], ElementwiseOp::kMUL);
      const int32_t t = half < 0 ? -1 : otherThanScalar(half, 0.5);
      std::vector<int32_t> c;
      const int32_t x = t < 0 ? -1 : erfPlusOne(t, c);
      if (x >= 0 && x == in[side]) {
        chain = c;
        chain.push_back(half);
        return x;
      }
    }
    return -1;
  }

 private:
  const GraphEditor& edit_;
};

}  // namespace

Status fuseGelu(Graph& graph, PassContext& context) {
  return fuseChains(graph, context, [](const GraphEditor& edit, int32_t n, ChainFusion& f) {
    const int32_t x = Matcher(edit).gelu(n, f.chain);
    if (x < 0) return false;
    const GraphTensor& in = edit.tensor(x);
    if (in.shape.dims != edit.tensor(edit.node(n).outputs[0]).shape.dims ||
        !isFloatType(in.shape.type))
      return false;
    f.what = "the GELU written out as " + std::to_string(f.chain.size() + 1) +
             " layers ending in " + describe(edit.node(n));
    f.into = "one GELU of '" + in.name + "'";
    f.type = LayerType::kACTIVATION;
    f.params = ActivationParams{ActivationType::kGELU};
    f.inputs = {x};
    return true;
  });
}

}  // namespace kiln::passes
