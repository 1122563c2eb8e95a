// Transpose motion: nn.MultiheadAttention (as torchvision's ViT and nn.TransformerEncoder export
// it with batch_first) transposes the batch-first [B, S, E] stream to [S, B, E] before its input
// projection and back after its output projection, with the output projection a 2-D Gemm between
// reshapes:
//   x -> Transpose(1, 0, 2) -> Linear (q, k, v) -> ... Attention ... -> Reshape [S B, E] -> Gemm
//     -> Reshape [S, B, E] -> Transpose(1, 0, 2) -> + x
// Each transpose is a copy of the whole stream, and the last one keeps the residual add out of
// the output projection's epilogue. A product over the last axis (Linear) commutes with any
// permutation of the leading axes, so this pass moves each such transpose to the attention side
// of its product, where the attention_layout pass takes it into the Attention layer's head views:
//   into_product  Transpose P (last axis kept) whose one reader is a Linear L without residual:
//                 L reads P's input and P permutes L's output (the same tensor, as before).
//   out_of_product  a Linear L without residual whose one reader is such a Transpose P: P
//                 permutes L's input, and L writes what P wrote.
//   rows_product  Reshape [d0 .. dk, K] -> [M, K], Gemm (constant W, no transA, alpha 1, a bias
//                 C with beta 1, or none), Reshape [M, N] -> [d0 .. dk, N], each the one reader
//                 of the one before: one Linear over the [d0 .. dk, K] view (the first reshape
//                 now makes it; the second goes), so that out_of_product can pass through it.
//   A pure reshape followed by a transpose, the reshape's one reader, become one Shuffle.
//   flatten       Reshape of a rank-4 map, then any transpose, its one reader (a CNN's feature
//                 map turned into tokens: ViT's patch embedding, flatten(2).transpose(1, 2)): one
//                 Shuffle, which Shuffle's channels_last_copy runs as a plain copy of the
//                 channels-last map the convolution wrote, with no reformat before it.
// Run after linear_fusion (which makes the Linears) and before the second linear_fusion, which
// then takes the residual add into the output projection, and attention_layout.
//
// Profile builds run the passes at every corner and need the same parameters from each: the
// reshape that rows_product rewrites is encoded by ONNX's rules (0: the input's dim, -1: the rest)
// and K, never by the corner's batch or sequence, and declined where that cannot be done.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

// Node n's transpose when it is a Shuffle that only permutes its input, else nullptr.
const ShuffleParams* pureTranspose(const GraphEditor& edit, int32_t n) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kSHUFFLE || node.inputs.size() != 1) return nullptr;
  const auto* p = std::get_if<ShuffleParams>(&node.params);
  if (!p || !p->hasFirstTranspose || p->hasReshape || p->hasSecondTranspose) return nullptr;
  return p;
}

// Whether node n is a Shuffle that only permutes the leading axes of its input (the last axis
// stays last), with that permutation in *perm.
bool leadingTranspose(const GraphEditor& edit, int32_t n, std::vector<int32_t>* perm) {
  const ShuffleParams* p = pureTranspose(edit, n);
  const int32_t rank = p ? edit.tensor(edit.node(n).inputs[0]).shape.dims.nbDims : 0;
  if (rank < 2 || p->firstTranspose[rank - 1] != rank - 1) return false;
  perm->assign(p->firstTranspose, p->firstTranspose + rank);
  return true;
}

// Whether node n is a Shuffle that only reshapes (no transpose, no shape input).
const ShuffleParams* pureReshape(const GraphEditor& edit, int32_t n) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kSHUFFLE || node.inputs.size() != 1) return nullptr;
  const auto* p = std::get_if<ShuffleParams>(&node.params);
  if (!p || p->hasFirstTranspose || !p->hasReshape || p->hasSecondTranspose) return nullptr;
  for (int32_t i = 0; i < p->reshapeDims.nbDims; ++i)
    if (p->reshapeDimsOf[i] != 0) return nullptr;
  return p;
}

// A Linear without residual: it acts on each row (the last axis) of X alone.
bool rowwiseLinear(const GraphEditor& edit, int32_t n) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kLINEAR) return false;
  const auto* p = std::get_if<LinearParams>(&node.params);
  return p && !p->hasResidual;
}

// The one live reader of tensor t when it is not a network output, else -1.
int32_t onlyReader(const GraphEditor& edit, int32_t t) {
  const auto& readers = edit.consumers(t);
  if (readers.size() != 1 || edit.tensor(t).isOutput) return -1;
  return readers[0];
}

// Whether every input of node n but the first is a constant (a Linear's W and bias), so that n
// may move to an earlier slot of the topological order.
bool restConstant(const GraphEditor& edit, int32_t n) {
  const auto& in = edit.node(n).inputs;
  for (size_t i = 1; i < in.size(); ++i)
    if (!isConstant(edit.tensor(in[i]))) return false;
  return true;
}

Dims permuted(const Dims& d, const std::vector<int32_t>& perm) {
  Dims out = d;
  for (size_t i = 0; i < perm.size(); ++i) out.d[i] = d.d[perm[i]];
  return out;
}

class Mover {
 public:
  Mover(GraphEditor& edit, PassContext& context) : edit_(edit), context_(context) {}

  // P (node p) then Linear L (its one reader): node p becomes L, node l becomes P.
  bool intoProduct(int32_t p) {
    std::vector<int32_t> perm;
    if (!leadingTranspose(edit_, p, &perm)) return false;
    const int32_t mid = edit_.node(p).outputs[0];
    const int32_t l = onlyReader(edit_, mid);
    if (l < 0 || !rowwiseLinear(edit_, l) || edit_.node(l).inputs[0] != mid) return false;
    if (!restConstant(edit_, l)) return false;
    const int32_t x = edit_.node(p).inputs[0];
    const int32_t y = edit_.node(l).outputs[0];
    // L's output before the permutation: x's dims with L's columns last.
    TensorShape shape = edit_.tensor(x).shape;
    const Dims& yd = edit_.tensor(y).shape.dims;
    shape.dims.d[shape.dims.nbDims - 1] = yd.d[yd.nbDims - 1];
    shape.type = edit_.tensor(y).shape.type;
    const int32_t unpermuted = edit_.addActivation(edit_.tensor(y).name + "_rows", shape);
    // Profile builds: the same at every corner (GraphTensor::rangeDims).
    for (size_t c = 0; c < edit_.tensor(x).rangeDims.size(); ++c) {
      Dims d = edit_.tensor(x).rangeDims[c];
      const Dims& yc = edit_.tensor(y).rangeDims.at(c);
      d.d[d.nbDims - 1] = yc.d[yc.nbDims - 1];
      edit_.graph().tensors[size_t(unpermuted)].rangeDims.push_back(d);
    }
    const GraphNode linear = edit_.node(l), shuffle = edit_.node(p);
    std::vector<int32_t> inputs = linear.inputs;
    inputs[0] = x;
    // A constant that a layer makes (a folded transpose of the weights) may be made after slot p:
    // the Linear there reads the same bytes as a plain constant instead.
    for (size_t i = 1; i < inputs.size(); ++i) {
      const GraphTensor& c = edit_.tensor(inputs[i]);
      if (edit_.producer(inputs[i]) >= p)
        inputs[i] = edit_.addConstant(c.name, c.shape, c.constant);
    }
    become(p, linear, inputs);
    edit_.setOutput(p, 0, unpermuted);
    become(l, shuffle, {unpermuted});
    context_.changed("moved " + describe(shuffle) + " after " + describe(linear) +
                     ", which now reads '" + edit_.tensor(x).name + "'");
    return true;
  }

  // Linear L then P (its one reader): node l becomes P on L's input, node p becomes L.
  bool outOfProduct(int32_t l) {
    if (!rowwiseLinear(edit_, l)) return false;
    const int32_t mid = edit_.node(l).outputs[0];
    const int32_t p = onlyReader(edit_, mid);
    std::vector<int32_t> perm;
    if (p < 0 || !leadingTranspose(edit_, p, &perm)) return false;
    const int32_t x = edit_.node(l).inputs[0];
    TensorShape shape = edit_.tensor(x).shape;
    if (shape.dims.nbDims != static_cast<int32_t>(perm.size())) return false;
    shape.dims = permuted(shape.dims, perm);
    const int32_t y = edit_.node(p).outputs[0];
    const int32_t xp = edit_.addActivation(edit_.tensor(x).name + "_permuted", shape);
    for (const Dims& d : edit_.tensor(x).rangeDims)
      edit_.graph().tensors[size_t(xp)].rangeDims.push_back(permuted(d, perm));
    const GraphNode linear = edit_.node(l), shuffle = edit_.node(p);
    std::vector<int32_t> inputs = linear.inputs;
    inputs[0] = xp;
    become(l, shuffle, {x});
    edit_.setOutput(l, 0, xp);
    become(p, linear, inputs);
    context_.changed("moved " + describe(shuffle) + " before " + describe(linear) +
                     ", which now writes '" + edit_.tensor(y).name + "'");
    mergeReshape(l);
    return true;
  }

  // Reshape -> Gemm -> Reshape (node g the Gemm) as one Linear over the first reshape's view.
  bool rowsProduct(int32_t g) {
    const GraphNode& gemm = edit_.node(g);
    if (gemm.type != LayerType::kGEMM || gemm.inputs.size() < 2) return false;
    const auto* gp = std::get_if<GemmParams>(&gemm.params);
    if (!gp || gp->transposeA || gp->alpha != 1.f || (gemm.inputs.size() == 3 && gp->beta != 1.f))
      return false;
    const GraphTensor& w = edit_.tensor(gemm.inputs[1]);
    if (!isConstant(w) || w.shape.dims.nbDims != 2) return false;
    const int32_t a = edit_.producer(gemm.inputs[0]);
    if (a < 0 || !pureReshape(edit_, a) || onlyReader(edit_, gemm.inputs[0]) != g) return false;
    const int32_t b = onlyReader(edit_, gemm.outputs[0]);
    if (b < 0 || !pureReshape(edit_, b)) return false;
    const int32_t src = edit_.node(a).inputs[0];
    const Dims& in = edit_.tensor(src).shape.dims;
    const Dims& flat = edit_.tensor(gemm.inputs[0]).shape.dims;           // [M, K]
    const Dims& out = edit_.tensor(edit_.node(b).outputs[0]).shape.dims;  // [d0 .. dk, N]
    if (flat.nbDims != 2 || out.nbDims < 2) return false;
    // The view [d0 .. dk, K]: leading dims as the second reshape's, by ONNX's 0 and -1.
    ShuffleParams view;
    view.hasReshape = true;
    view.reshapeDims.nbDims = out.nbDims;
    int64_t rows = 1;
    int32_t rest = -1;
    for (int32_t i = 0; i + 1 < out.nbDims; ++i) {
      rows *= out.d[i];
      if (i < in.nbDims && out.d[i] == in.d[i]) {
        view.reshapeDims.d[i] = 0;
      } else if (rest < 0) {
        rest = i;
        view.reshapeDims.d[i] = -1;
      } else {
        context_.declined("left " + describe(gemm) +
                          " alone: its rows' dims cannot be named independently of the shapes");
        return false;
      }
    }
    view.reshapeDims.d[out.nbDims - 1] = flat.d[1];
    if (rows != flat.d[0]) return false;
    // The Linear: the Gemm's W and bias (C must be one value per column).
    LinearParams lp;
    lp.transposeW = gp->transposeB;
    std::vector<int32_t> inputs{gemm.inputs[0], gemm.inputs[1]};
    const int64_t n = out.d[out.nbDims - 1];
    if (gemm.inputs.size() == 3) {
      const GraphTensor& c = edit_.tensor(gemm.inputs[2]);
      if (!isConstant(c) || !(c.shape.dims.nbDims == 1 && c.shape.dims.d[0] == n)) return false;
      lp.hasBias = true;
      inputs.push_back(gemm.inputs[2]);
    }
    TensorShape viewShape = edit_.tensor(gemm.inputs[0]).shape;
    viewShape.dims = out;
    viewShape.dims.d[out.nbDims - 1] = flat.d[1];
    std::vector<TensorShape> shapes{viewShape, w.shape}, outShapes;
    if (lp.hasBias) shapes.push_back(edit_.tensor(inputs[2]).shape);
    if (!inferLayerOutputs(LayerType::kLINEAR, lp, shapes, outShapes) || outShapes.size() != 1 ||
        outShapes[0].dims != out)
      return false;
    const GraphNode gemmCopy = gemm, second = edit_.node(b);
    const int32_t y = second.outputs[0];
    GraphTensor& viewed = edit_.graph().tensors[size_t(gemm.inputs[0])];
    viewed.shape = viewShape;
    viewed.rangeDims = edit_.tensor(y).rangeDims;
    for (Dims& d : viewed.rangeDims) d.d[d.nbDims - 1] = viewShape.dims.d[out.nbDims - 1];
    edit_.graph().nodes[size_t(a)].params = view;  // the same node, a new target shape
    edit_.removeNode(b);
    edit_.replaceLayer(g, LayerType::kLINEAR, lp, inputs);
    edit_.setOutput(g, 0, y);
    context_.changed("made " + describe(gemmCopy) + " and the reshape " + describe(second) +
                     " one Linear over the rows of '" + edit_.tensor(src).name + "'");
    return true;
  }

  // flatten (see the header): node r a transpose whose input is a rank-4 map's pure reshape.
  bool flatten(int32_t r) {
    const ShuffleParams* t = pureTranspose(edit_, r);
    if (!t) return false;
    const int32_t mid = edit_.node(r).inputs[0];
    const int32_t a = edit_.producer(mid);
    if (a < 0 || !pureReshape(edit_, a) || onlyReader(edit_, mid) != r) return false;
    if (edit_.tensor(edit_.node(a).inputs[0]).shape.dims.nbDims != 4) return false;
    const int32_t rank = edit_.tensor(mid).shape.dims.nbDims;
    mergeTransposeInto(a, r, std::vector<int32_t>(t->firstTranspose, t->firstTranspose + rank));
    return true;
  }

 private:
  // Node n becomes the layer `as` was (its type, parameters and name), reading `inputs`; its
  // outputs stay.
  void become(int32_t n, const GraphNode& as, std::vector<int32_t> inputs) {
    edit_.replaceLayer(n, as.type, as.params, std::move(inputs));
    edit_.rename(n, as.name);
  }

  // A pure reshape (node r's producer) and then the transpose r, its one reader: one Shuffle, which
  // also takes the transpose before the reshape, where there is one (the Attention's output
  // permuted to [S, B H, D], regrouped to [S, B, E], permuted to [B, S, E]: a Shuffle's first
  // transpose, reshape and second transpose, which attention_layout takes as O's one reader).
  void mergeReshape(int32_t r) {
    const int32_t mid = edit_.node(r).inputs[0];
    const int32_t a = edit_.producer(mid);
    const ShuffleParams* reshape = a < 0 ? nullptr : pureReshape(edit_, a);
    if (!reshape || onlyReader(edit_, mid) != r) return;
    std::vector<int32_t> perm;
    if (!leadingTranspose(edit_, r, &perm)) return;
    mergeTransposeInto(a, r, perm);
    const ShuffleParams merged = std::get<ShuffleParams>(edit_.node(a).params);
    const GraphNode first = edit_.node(a);
    const int32_t before = first.inputs[0];
    const int32_t t = edit_.producer(before);
    if (t < 0 || onlyReader(edit_, before) != a) return;
    const ShuffleParams* lp = pureTranspose(edit_, t);
    if (!lp) return;
    const GraphNode& lead = edit_.node(t);
    ShuffleParams withLead = merged;
    withLead.hasFirstTranspose = true;
    std::copy(lp->firstTranspose, lp->firstTranspose + Dims::kMaxDims, withLead.firstTranspose);
    const std::string leadName = describe(lead);
    const int32_t source = lead.inputs[0];
    edit_.removeNode(t);
    edit_.graph().nodes[size_t(a)].params = withLead;
    edit_.setInput(a, 0, source);
    context_.changed("merged " + leadName + " into that Shuffle too");
  }

  // The pure reshape a and the transpose r (perm), a's one reader, as one Shuffle at a's node,
  // writing what r wrote.
  void mergeTransposeInto(int32_t a, int32_t r, const std::vector<int32_t>& perm) {
    ShuffleParams merged = std::get<ShuffleParams>(edit_.node(a).params);
    merged.hasSecondTranspose = true;
    for (size_t i = 0; i < perm.size(); ++i) merged.secondTranspose[i] = perm[i];
    const GraphNode first = edit_.node(a), transpose = edit_.node(r);
    const int32_t y = transpose.outputs[0];
    edit_.removeNode(r);
    edit_.graph().nodes[size_t(a)].params = merged;
    edit_.setOutput(a, 0, y);
    context_.changed("merged " + describe(first) + " and " + describe(transpose) +
                     " into one Shuffle");
  }

  GraphEditor& edit_;
  PassContext& context_;
};

}  // namespace

Status moveTransposes(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  Mover mover(edit, context);
  for (int32_t n = 0; n < edit.nodeCount(); ++n)
    if (!edit.removed(n)) mover.rowsProduct(n);
  for (int32_t n = 0; n < edit.nodeCount(); ++n)
    if (!edit.removed(n)) mover.flatten(n);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    if (edit.removed(n)) continue;
    if (!mover.intoProduct(n)) mover.outOfProduct(n);
  }
  return edit.compact();
}

}  // namespace kiln::passes
