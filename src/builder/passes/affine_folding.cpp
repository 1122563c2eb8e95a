// Affine folding: y = conv(x) * s (or / s, + t, - t) with s and t constants per output channel
// becomes one convolution with scaled weights and a shifted bias; likewise a gemm (fully
// connected) with a constant B, per output column. A BatchNorm, imported as Mul then Add by
// per-channel constants, folds in two steps. The folded layer takes over the elementwise layer's
// output tensor (its name included), so everything downstream is unchanged. The elementwise
// layer may also come after a reshape that keeps the batch and channel dims (a 1-D convolution is
// imported as a 2-D one between two reshapes); the reshape then takes over its output.
//
// Folds only when:
//  - the layer's weights (and bias / C, if any) are FP32 constants, and so is the elementwise
//    constant (other types are left alone, with the reason in the verbose log);
//  - the layer's output (and the reshape's) is read by that one layer only and is not a network
//    output;
//  - the constant is one value per output channel ([1,K,1,1], [K,1,1] or [K] against a
//    convolution's [N,K,H,W]; [1,K] or [K] against a gemm's [M,K]) or a single value, so that the
//    elementwise output has the layer's shape and type;
//  - every constant is finite and no divisor is zero: (W x) / 0 is inf or NaN depending on x,
//    which no finite weights reproduce, and infinities would not survive the rewrite either.
// Arithmetic is in double, stored as float. Deconvolution and matrix multiply (no bias input)
// are not folded into.
#include <array>
#include <cmath>
#include <cstring>

#include "builder/passes/constant_values.h"
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"
#include "core/tensor_shape.h"

namespace kiln::passes {
namespace {

// The layer being folded into: where its weights live and how a per-channel factor reaches them.
struct Target {
  int32_t node = -1;
  int32_t weights = -1;      // tensor: conv [K, C/g, kh, kw]; gemm B [K_in, N] or [N, K_in]
  int32_t bias = -1;         // tensor or -1: conv [K]; gemm C (broadcast to [M, N])
  int32_t channelAxis = 1;   // of the output
  int64_t channels = 0;      // K (conv) or N (gemm)
  bool convolution = false;  // else a gemm
  bool transposedB = false;  // gemm
  double beta = 1;           // gemm
  const char* kind = "";
};

bool finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

std::shared_ptr<const std::vector<uint8_t>> floatBytes(const std::vector<double>& v) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(v.size() * 4);
  for (size_t k = 0; k < v.size(); ++k) {
    const float f = static_cast<float>(v[k]);
    std::memcpy(bytes->data() + 4 * k, &f, 4);
  }
  return bytes;
}

// Whether layer n is a convolution or gemm (with constant B) to fold into; `why` says what keeps
// it from taking a fold, if anything does.
bool asTarget(const GraphEditor& edit, int32_t n, Target& t, std::string& why) {
  const GraphNode& node = edit.node(n);
  if (node.outputs.size() != 1) return false;
  const GraphTensor& out = edit.tensor(node.outputs[0]);
  t = Target{};
  t.node = n;
  if (node.type == LayerType::kCONVOLUTION && node.inputs.size() >= 2) {
    if (out.shape.dims.nbDims != 4) return false;
    // A fused epilogue (residual, activation) comes after the scale and shift would: no fold.
    const auto* p = std::get_if<ConvolutionParams>(&node.params);
    if (!p || p->hasResidual || p->hasActivation) return false;
    t.weights = node.inputs[1];
    t.bias = node.inputs.size() > 2 ? node.inputs[2] : -1;
    t.channels = out.shape.dims.d[1];
    t.convolution = true;
    t.kind = "convolution";
  } else if (node.type == LayerType::kGEMM && node.inputs.size() >= 2) {
    const auto* p = std::get_if<GemmParams>(&node.params);
    if (!p || out.shape.dims.nbDims != 2) return false;
    t.weights = node.inputs[1];
    t.bias = node.inputs.size() > 2 ? node.inputs[2] : -1;
    t.channels = out.shape.dims.d[1];
    t.transposedB = p->transposeB;
    t.beta = p->beta;
    t.kind = "gemm";
    if (!isConstant(edit.tensor(t.weights))) return false;  // a matrix product of activations
  } else {
    return false;
  }
  auto fp32Constant = [&](int32_t tensor) {
    return tensor < 0 ||
           (isConstant(edit.tensor(tensor)) && edit.tensor(tensor).shape.type == DataType::kFLOAT);
  };
  if (!isConstant(edit.tensor(t.weights))) {
    why = "its weights are not a constant";
  } else if (out.shape.type != DataType::kFLOAT || !fp32Constant(t.weights) ||
             !fp32Constant(t.bias)) {
    why = "only FP32 layers and weights are folded into";
  } else if (t.bias >= 0 && node.type == LayerType::kGEMM) {
    // C must be one value per column (or one value), so that scaling it stays a vector.
    const Dims& c = edit.tensor(t.bias).shape.dims;
    for (int32_t i = 0; i + 1 < c.nbDims; ++i)
      if (c.d[i] != 1) why = "its C " + dimsString(c) + " is not one value per column";
  }
  return true;
}

// The per-channel values of constant `c` against an output of dims `out`, or false.
bool perChannel(const GraphTensor& c, const Dims& out, int32_t axis, int64_t channels,
                std::vector<double>& values) {
  const Dims& d = c.shape.dims;
  if (d.nbDims > out.nbDims) return false;
  bool varies = false;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const int32_t a = out.nbDims - d.nbDims + i;
    if (d.d[i] == 1) continue;
    if (a != axis || d.d[i] != channels) return false;
    varies = true;
  }
  std::vector<double> v;
  if (!floatValues(c, v) || v.empty()) return false;
  values.assign(size_t(channels), v[0]);
  if (varies) values = v;
  return true;
}

// The layer's bias as one value per channel (zeros when there is none), beta applied.
std::vector<double> biasValues(const GraphEditor& edit, const Target& t) {
  std::vector<double> b(size_t(t.channels), 0.0);
  if (t.bias < 0 || t.beta == 0) return b;
  std::vector<double> v;
  floatValues(edit.tensor(t.bias), v);
  for (size_t k = 0; k < b.size(); ++k) b[k] = t.beta * (v.size() == 1 ? v[0] : v[k]);
  return b;
}

// The tensor to hold new values for constant `t` of layer n: t itself when n is its only
// reader (its bytes are replaced, not changed: the network shares them), else a new constant.
int32_t writable(GraphEditor& edit, int32_t t, int32_t n, TensorShape shape,
                 std::shared_ptr<const std::vector<uint8_t>> bytes) {
  const auto& readers = edit.consumers(t);
  if (readers.size() == 1 && readers[0] == n && edit.tensor(t).shape.dims == shape.dims &&
      !edit.tensor(t).isInput) {
    edit.graph().tensors[size_t(t)].constant = std::move(bytes);
    return t;
  }
  const std::string name = edit.tensor(t).name + "_folded";
  return edit.addConstant(name, shape, std::move(bytes));
}

// Applies `op` with per-channel `c` to the target's weights and bias. False with `why` when the
// result would not be finite.
bool fold(GraphEditor& edit, const Target& t, ElementwiseOp op, const std::vector<double>& c,
          std::string& why) {
  std::vector<double> w, b = biasValues(edit, t);
  floatValues(edit.tensor(t.weights), w);
  const bool scales = op == ElementwiseOp::kMUL || op == ElementwiseOp::kDIV;
  const Dims& wd = edit.tensor(t.weights).shape.dims;
  for (size_t k = 0; k < b.size(); ++k) {
    switch (op) {
      case ElementwiseOp::kMUL:
        b[k] *= c[k];
        break;
      case ElementwiseOp::kDIV:
        b[k] /= c[k];
        break;
      case ElementwiseOp::kADD:
        b[k] += c[k];
        break;
      default:
        b[k] -= c[k];
        break;
    }
  }
  if (scales) {
    for (size_t e = 0; e < w.size(); ++e) {
      // Which output channel weight e feeds: conv [K, ...] by row; gemm B by column (or row).
      size_t k;
      if (t.convolution) {
        k = e / (w.size() / size_t(t.channels));
      } else {
        k = t.transposedB ? e / size_t(wd.d[1]) : e % size_t(wd.d[1]);
      }
      w[e] = op == ElementwiseOp::kMUL ? w[e] * c[k] : w[e] / c[k];
    }
  }
  std::vector<double> wf(w.size()), bf(b.size());
  for (size_t e = 0; e < w.size(); ++e) wf[e] = static_cast<float>(w[e]);
  for (size_t k = 0; k < b.size(); ++k) bf[k] = static_cast<float>(b[k]);
  if (!finite(wf) || !finite(bf)) {
    why = "the folded weights would overflow FP32";
    return false;
  }

  GraphNode& node = edit.graph().nodes[size_t(t.node)];
  if (scales) {
    const int32_t nw =
        writable(edit, t.weights, t.node, edit.tensor(t.weights).shape, floatBytes(w));
    edit.setInput(t.node, 1, nw);
  }
  const bool hadBias = t.bias >= 0;
  // Mul or Div of a layer without bias leaves a zero bias: none is needed.
  if (!hadBias && scales) return true;
  const TensorShape biasShape{makeDims({t.channels}), DataType::kFLOAT};
  if (hadBias) {
    const int32_t nb = writable(edit, t.bias, t.node, biasShape, floatBytes(b));
    edit.setInput(t.node, 2, nb);
  } else {
    edit.appendInput(t.node, edit.addConstant(node.name + "_bias", biasShape, floatBytes(b)));
  }
  if (auto* p = std::get_if<GemmParams>(&node.params)) p->beta = 1;  // beta is in C now
  return true;
}

// A reshape that alone reads `t` and keeps its first two (batch and channel) dims, so that a
// per-channel constant after it is per channel of `t` too: a 1-D convolution is imported as a
// 2-D one between two reshapes. Its node, or -1.
int32_t reshapeAfter(const GraphEditor& edit, int32_t t) {
  if (edit.consumers(t).size() != 1) return -1;
  const int32_t r = edit.consumers(t)[0];
  const GraphNode& node = edit.node(r);
  const auto* p = std::get_if<ShuffleParams>(&node.params);
  if (node.type != LayerType::kSHUFFLE || !p || p->hasFirstTranspose || p->hasSecondTranspose ||
      node.inputs[0] != t)  // t may be a reshape's dims source
    return -1;
  const Dims& in = edit.tensor(t).shape.dims;
  const Dims& out = edit.tensor(node.outputs[0]).shape.dims;
  if (in.nbDims < 2 || out.nbDims < 2 || in.d[0] != out.d[0] || in.d[1] != out.d[1]) return -1;
  return r;
}

// An elementwise Mul/Div/Add/Sub reading `t` and a constant (t * c, c * t, t / c, t + c, c + t,
// t - c), the first one among t's readers.
struct Candidate {
  int32_t node = -1;
  int32_t constant = -1;
  ElementwiseOp op = ElementwiseOp::kADD;
};

bool findCandidate(const GraphEditor& edit, int32_t t, Candidate& out) {
  for (int32_t r : edit.consumers(t)) {
    const GraphNode& reader = edit.node(r);
    const auto* p = std::get_if<ElementwiseParams>(&reader.params);
    if (reader.type != LayerType::kELEMENTWISE || !p || reader.inputs.size() != 2) continue;
    const bool commutes = p->op == ElementwiseOp::kMUL || p->op == ElementwiseOp::kADD;
    const bool right = p->op == ElementwiseOp::kDIV || p->op == ElementwiseOp::kSUB;
    for (size_t side = 0; side < 2; ++side) {
      const int32_t other = reader.inputs[1 - side];
      if (reader.inputs[side] != t || other == t || !isConstant(edit.tensor(other))) continue;
      if (commutes || (right && side == 0)) {
        out = Candidate{r, other, p->op};
        return true;
      }
    }
  }
  return false;
}

// Why the candidate cannot fold ("" when it can), and its per-channel values. `path` holds the
// layer's output and the tensor the elementwise layer reads (the same, or a reshape's output).
std::string whyNotFold(const GraphEditor& edit, const Target& target, std::array<int32_t, 2> path,
                       const Candidate& cand, std::vector<double>& values) {
  for (int32_t t : path) {
    const GraphTensor& y = edit.tensor(t);
    if (y.isOutput) return "'" + y.name + "' is a network output, which must keep its values";
    if (edit.consumers(t).size() != 1)
      return "'" + y.name + "' is read " + std::to_string(edit.consumers(t).size()) +
             " times; folding would change what the other readers see";
  }
  const GraphTensor& x = edit.tensor(path[1]);
  const GraphTensor& z = edit.tensor(edit.node(cand.node).outputs[0]);
  const GraphTensor& c = edit.tensor(cand.constant);
  if (c.shape.type != DataType::kFLOAT)
    return "its constant '" + c.name + "' is " + dataTypeName(c.shape.type) +
           "; only FP32 constants are folded";
  if (!perChannel(c, x.shape.dims, target.channelAxis, target.channels, values))
    return "its constant '" + c.name + "' " + dimsString(c.shape.dims) +
           " is not one value per output channel of " + dimsString(x.shape.dims);
  if (z.shape.dims != x.shape.dims || z.shape.type != x.shape.type)
    return "its output " + dimsString(z.shape.dims) + " differs from its input's";
  if (!finite(values)) return "its constant '" + c.name + "' is not finite";
  if (cand.op == ElementwiseOp::kDIV) {
    for (double v : values)
      if (v == 0) return "its constant '" + c.name + "' has a zero divisor";
  }
  return "";
}

}  // namespace

Status foldAffine(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    if (edit.removed(n)) continue;
    // One step per round: the layer's output changes with every fold, so chains fold in turn.
    for (;;) {
      Target target;
      std::string why;
      if (!asTarget(edit, n, target, why)) break;
      const GraphNode& node = edit.node(n);
      const int32_t out = node.outputs[0];
      const int32_t via = reshapeAfter(edit, out);
      const int32_t read = via >= 0 ? edit.node(via).outputs[0] : out;
      Candidate cand;
      if (!findCandidate(edit, read, cand)) break;
      const GraphNode& elementwise = edit.node(cand.node);
      std::vector<double> values;
      if (why.empty()) why = whyNotFold(edit, target, {out, read}, cand, values);
      if (why.empty()) fold(edit, target, cand.op, values, why);
      if (!why.empty()) {
        context.declined("left " + describe(elementwise) + " alone (not folded into " +
                         describe(node) + "): " + why);
        break;
      }
      context.changed("folded " + describe(elementwise) + " into " + target.kind + " '" +
                      node.name + "'" +
                      (via >= 0 ? " through reshape '" + edit.node(via).name + "'" : ""));
      // The elementwise layer's output is now made by the last layer before it.
      const int32_t zi = elementwise.outputs[0];
      edit.removeNode(cand.node);
      edit.setOutput(via >= 0 ? via : n, 0, zi);
    }
  }
  return edit.compact();
}

}  // namespace kiln::passes
