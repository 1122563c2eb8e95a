// LayerNorm fusion: exporters before opset 17 (PyTorch at opset 13, say) write nn.LayerNorm out as
//   m = mean(x) over the trailing dims;  d = x - m;  v = mean(d ^ 2);
//   y = d / sqrt(v + eps) * gamma + beta
// nine layers, two of them reductions over the whole tensor. The pass makes the chain's last
// layer one LayerNormalization(x, gamma[, beta]) with the axis where the reduced dims start, and
// drops the rest. The fused layer computes the same statistics (the biased variance, in FP32, in
// two passes) in one pass over memory per row instead of nine over the tensor, so it fuses
// unconditionally, as gelu_fusion does.
//
// Left alone (with the reason in the verbose log): a chain whose intermediates are read elsewhere
// or are network outputs, reductions over dims that are not the trailing ones, a gamma or beta
// that is not a constant, or parameters the LayerNormalization shape rule refuses.
#include <cstring>
#include <memory>
#include <string>

#include "builder/passes/chain_fusion.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

// The live producer of t when it is a keep-dims mean over `mask` (any mask when 0), else -1.
int32_t meanProducer(const GraphEditor& edit, int32_t t, uint32_t mask) {
  const int32_t n = edit.producer(t);
  if (n < 0 || edit.node(n).type != LayerType::kREDUCE) return -1;
  const auto* p = std::get_if<ReduceParams>(&edit.node(n).params);
  if (!p || p->op != ReduceOp::kMEAN || !p->keepDims) return -1;
  return mask == 0 || p->axesMask == mask ? n : -1;
}

struct Found {
  int32_t x = -1, gamma = -1, beta = -1;
  int32_t axis = 0;
  float epsilon = 0.f;
  int32_t deviation = -1;      // the node of d = x - mean, which the square and the division read
  std::vector<int32_t> chain;  // every node but the last, which becomes the LayerNormalization
};

// Whether node `last` ends a written-out LayerNorm; fills `f`.
bool match(const GraphEditor& edit, int32_t last, Found& f) {
  auto in = [&](int32_t n, size_t i) { return edit.node(n).inputs[i]; };
  // The last layer: ... * gamma + beta, ... * gamma, or ... + beta (a gamma of ones, which
  // identity elimination has removed).
  int32_t mul = -1, add = -1, beta = -1, gamma = -1, normed = -1;
  if (isElementwise(edit, last, ElementwiseOp::kADD)) {
    add = last;
    normed = nonConstantInput(edit, add, &beta);
    mul = normed < 0 ? -1 : elementwiseProducer(edit, normed, ElementwiseOp::kMUL);
  } else if (isElementwise(edit, last, ElementwiseOp::kMUL)) {
    // Not the end when a shift by a constant follows: the chain ends at that add.
    const auto& next = edit.consumers(edit.node(last).outputs[0]);
    int32_t shift = -1;
    if (next.size() == 1 && isElementwise(edit, next[0], ElementwiseOp::kADD) &&
        nonConstantInput(edit, next[0], &shift) >= 0)
      return false;
    mul = last;
  } else {
    return false;
  }
  if (mul >= 0) normed = nonConstantInput(edit, mul, &gamma);
  const int32_t div = normed < 0 ? -1 : elementwiseProducer(edit, normed, ElementwiseOp::kDIV);
  if (div < 0) return false;
  const int32_t d = in(div, 0);
  const int32_t sqrt = edit.producer(in(div, 1));
  if (sqrt < 0 || edit.node(sqrt).type != LayerType::kACTIVATION) return false;
  const auto* a = std::get_if<ActivationParams>(&edit.node(sqrt).params);
  if (!a || a->type != ActivationType::kSQRT) return false;
  const int32_t plusEps = elementwiseProducer(edit, in(sqrt, 0), ElementwiseOp::kADD);
  int32_t eps = -1;
  const int32_t v = plusEps < 0 ? -1 : nonConstantInput(edit, plusEps, &eps);
  if (v < 0 || volume(edit.tensor(eps).shape.dims) != 1) return false;
  const int32_t varMean = meanProducer(edit, v, 0);
  if (varMean < 0) return false;
  const uint32_t mask = std::get<ReduceParams>(edit.node(varMean).params).axesMask;
  const int32_t pow = elementwiseProducer(edit, in(varMean, 0), ElementwiseOp::kPOW);
  if (pow < 0 || in(pow, 0) != d || !constantIsAll(edit.tensor(in(pow, 1)), 2.0)) return false;
  const int32_t sub = elementwiseProducer(edit, d, ElementwiseOp::kSUB);
  if (sub < 0) return false;
  const int32_t x = in(sub, 0);
  const int32_t mean = meanProducer(edit, in(sub, 1), mask);
  if (mean < 0 || in(mean, 0) != x) return false;
  // The reduced dims must be the trailing ones: bits [axis, rank) of the mask.
  const int32_t rank = edit.tensor(x).shape.dims.nbDims;
  int32_t axis = rank;
  while (axis > 0 && (mask >> (axis - 1) & 1u)) --axis;
  if (axis == rank || mask != ((1u << rank) - 1u) - ((1u << axis) - 1u)) return false;
  f.x = x;
  f.gamma = gamma;
  f.beta = beta;
  f.axis = axis;
  f.epsilon = static_cast<float>(constantValue(edit.tensor(eps), 0));
  f.deviation = sub;
  f.chain = {mean, sub, pow, varMean, plusEps, sqrt, div};
  if (add >= 0 && mul >= 0) f.chain.push_back(mul);
  return true;
}

// A constant of ones over the normalised dims of x, for a LayerNorm written without a scale.
int32_t onesScale(GraphEditor& edit, const Found& f, const std::string& base) {
  const Dims& xd = edit.tensor(f.x).shape.dims;
  Dims row;
  for (int32_t i = f.axis; i < xd.nbDims; ++i) row.d[row.nbDims++] = xd.d[i];
  std::vector<float> ones(size_t(volume(row)), 1.f);
  auto bytes = std::make_shared<std::vector<uint8_t>>(ones.size() * sizeof(float));
  std::memcpy(bytes->data(), ones.data(), bytes->size());
  return edit.addConstant(base + "_scale", TensorShape{row, DataType::kFLOAT}, bytes);
}

}  // namespace

Status fuseLayerNorm(Graph& graph, PassContext& context) {
  return fuseChains(graph, context, [&](GraphEditor& edit, int32_t n, ChainFusion& out) {
    Found f;
    if (!match(edit, n, f)) return false;
    const std::string what = "the LayerNorm written out as " + std::to_string(f.chain.size() + 1) +
                             " layers ending in " + describe(edit.node(n));
    const DataType type = edit.tensor(f.x).shape.type;
    if (f.gamma < 0 && type != DataType::kFLOAT) {
      context.declined("left " + what + " alone: it has no scale, and its input is " +
                       dataTypeName(type));
      return false;
    }
    LayerNormalizationParams p;
    p.axis = f.axis;
    p.epsilon = f.epsilon;
    std::vector<TensorShape> shapes = {edit.tensor(f.x).shape}, outShapes;
    shapes.push_back(f.gamma >= 0 ? edit.tensor(f.gamma).shape : TensorShape{{}, type});
    if (f.beta >= 0) shapes.push_back(edit.tensor(f.beta).shape);
    const Status s = inferLayerOutputs(LayerType::kLAYER_NORMALIZATION, p, shapes, outShapes);
    if (!s || outShapes[0].dims != edit.tensor(edit.node(n).outputs[0]).shape.dims) {
      context.declined("left " + what +
                       " alone: " + (s ? std::string("its output shape differs") : s.message()));
      return false;
    }
    if (f.gamma < 0) f.gamma = onesScale(edit, f, edit.node(n).name);
    out.chain = f.chain;
    out.reads = {{f.deviation, 2}};
    out.what = what;
    out.into = "one LayerNormalization of '" + edit.tensor(f.x).name + "' (axis " +
               std::to_string(f.axis) + ")";
    out.type = LayerType::kLAYER_NORMALIZATION;
    out.params = p;
    out.inputs = {f.x, f.gamma};
    if (f.beta >= 0) out.inputs.push_back(f.beta);
    return true;
  });
}

}  // namespace kiln::passes
