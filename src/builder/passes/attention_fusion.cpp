// Attention fusion: exporters write scaled dot-product attention out as a chain of layers,
//   S = MatMul(Q', K'^T)  where Q' is Q, or Q times or divided by a scalar (PyTorch scales Q;
//                         torch.onnx's scaled_dot_product_attention scales K^T as well)
//   S' = S, or S times or divided by a scalar (Hugging Face scales the scores)
//   S'' = S', or S' + Mask (a padding or causal mask, constant or computed)
//   P = Softmax(S'' over its last axis), or Where(IsNaN(P), 0, P) of it (torch.onnx's
//       scaled_dot_product_attention guards its softmax so; kiln imports IsNaN as
//       Not(Equal(P, P)): the Attention layer's zeroNanRows)
//   O = MatMul(P, V)
// and the pass makes the last MatMul one Attention layer reading Q, K, V and the mask, with the
// scalars multiplied into its scale. The score matrix, [batch, heads, Sq, Sk] and the largest
// tensor of a transformer at long sequences, then never exists in memory on the fused CUDA kernel.
//
// It fuses unconditionally: the Attention layer's tactics include the unfused chain itself
// (CUDA's unfused_cublas: the same two cuBLAS products around one masked-softmax kernel, in one
// layer), so the builder's timing chooses between fused and unfused kernels per layer, and on
// the CPU the blocked kernel does the chain's arithmetic with less memory traffic.
//
// It fuses on every target. (Until its CUDA kernels had run on a GPU, CUDA builds held back unless
// KILN_CUDA_ATTENTION=1; on the H200, 2026-12-02, the op harness's 72 device cases, memcheck and
// racecheck, and the 12 torch exports in FP32 and FP16 passed, so the switch is gone.)
//
// Afterwards, a transpose that makes K^T for an Attention alone makes K instead
// (readKeysUntransposed), so that the kernels read K's rows.
//
// Left alone, with the reason in the verbose log: chains whose intermediates are read elsewhere
// or are network outputs, softmax over another axis, transposed Q or V operands, non-float
// tensors, and shapes the Attention layer refuses (its shape rule says why).
#include <string>
#include <vector>

#include "builder/passes/chain_fusion.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

class Matcher {
 public:
  explicit Matcher(const GraphEditor& edit) : edit_(edit) {}

  // t, with a Mul or Div by a one-element constant looked through: the scaled operand, its
  // factor multiplied into *scale and the node appended to `chain`.
  int32_t unscaled(int32_t t, float* scale, std::vector<int32_t>& chain) const {
    const int32_t n = edit_.producer(t);
    if (n < 0) return t;
    const bool mul = isElementwise(edit_, n, ElementwiseOp::kMUL);
    const bool div = isElementwise(edit_, n, ElementwiseOp::kDIV);
    if (!mul && !div) return t;
    const auto& in = edit_.node(n).inputs;
    int32_t constant = -1;
    const int32_t other = nonConstantInput(edit_, n, &constant);
    if (other < 0 || volume(edit_.tensor(constant).shape.dims) != 1) return t;
    if (div && constant != in[1]) return t;  // c / x is not a scale
    const double c = constantValue(edit_.tensor(constant), 0);
    if (!(c == c) || c == 0.0) return t;
    // The scalar must not broadcast the operand to a higher rank.
    if (edit_.tensor(other).shape.dims != edit_.tensor(t).shape.dims) return t;
    *scale *= static_cast<float>(div ? 1.0 / c : c);
    chain.push_back(n);
    return other;
  }

  // When t is Where(IsNaN(P), 0, P) as kiln imports it, Select(Not(Equal(P, P)), zero, P) with
  // zero a one-element constant 0: P, with the three layers in `guard`; else -1.
  int32_t nanGuarded(int32_t t, std::vector<int32_t>& guard) const {
    const int32_t select = edit_.producer(t);
    if (select < 0 || edit_.node(select).type != LayerType::kSELECT) return -1;
    const auto& in = edit_.node(select).inputs;
    if (in.size() != 3 || !scalarNear(edit_.tensor(in[1]), 0.0)) return -1;
    const int32_t p = in[2];
    if (edit_.tensor(p).shape.dims != edit_.tensor(t).shape.dims ||
        edit_.tensor(p).shape.type != edit_.tensor(t).shape.type)
      return -1;
    const int32_t no = edit_.producer(in[0]);
    if (no < 0 || edit_.node(no).type != LayerType::kACTIVATION) return -1;
    const auto* a = std::get_if<ActivationParams>(&edit_.node(no).params);
    if (!a || a->type != ActivationType::kNOT) return -1;
    const int32_t equal =
        elementwiseProducer(edit_, edit_.node(no).inputs[0], ElementwiseOp::kEQUAL);
    if (equal < 0 || edit_.node(equal).inputs[0] != p || edit_.node(equal).inputs[1] != p)
      return -1;
    guard = {select, no, equal};
    return p;
  }

  bool match(int32_t last, ChainFusion& f) const {
    // O = MatMul(P, V)
    const GraphNode& out = edit_.node(last);
    if (out.type != LayerType::kMATRIX_MULTIPLY) return false;
    const auto* mm2 = std::get_if<MatrixMultiplyParams>(&out.params);
    if (!mm2 || mm2->transposeA || mm2->transposeB) return false;
    int32_t p = out.inputs[0];
    const int32_t v = out.inputs[1];
    // P = Where(IsNaN(P'), 0, P'), or P' itself
    std::vector<int32_t> guard;
    if (const int32_t guarded = nanGuarded(p, guard); guarded >= 0) p = guarded;
    // P' = Softmax(S'' over the last axis)
    const int32_t softmax = edit_.producer(p);
    if (softmax < 0 || edit_.node(softmax).type != LayerType::kSOFTMAX) return false;
    const auto* sp = std::get_if<SoftmaxParams>(&edit_.node(softmax).params);
    const int32_t rank = edit_.tensor(p).shape.dims.nbDims;
    if (!sp || sp->log || (sp->axis != -1 && sp->axis != rank - 1)) return false;
    std::vector<int32_t> chain = guard;
    chain.push_back(softmax);
    // The guard reads P three times: Equal(P, P) and the Select.
    if (!guard.empty()) f.reads = {{softmax, 3}};
    int32_t s = edit_.node(softmax).inputs[0];
    // S'' = S' + Mask: either operand may be the scores (the one a MatMul, perhaps scaled, made).
    int32_t mask = -1;
    float scale = 1.f;
    int32_t matmul = -1;
    std::vector<int32_t> scaled;
    const int32_t add = elementwiseProducer(edit_, s, ElementwiseOp::kADD);
    if (add >= 0) {
      for (size_t side = 0; side < 2 && matmul < 0; ++side) {
        scaled.clear();
        scale = 1.f;
        const int32_t scores = unscaled(edit_.node(add).inputs[side], &scale, scaled);
        const int32_t n = edit_.producer(scores);
        if (n >= 0 && edit_.node(n).type == LayerType::kMATRIX_MULTIPLY) {
          matmul = n;
          mask = edit_.node(add).inputs[1 - side];
        }
      }
      if (matmul < 0) return false;
      chain.push_back(add);
    } else {
      const int32_t scores = unscaled(s, &scale, scaled);
      matmul = edit_.producer(scores);
      if (matmul < 0 || edit_.node(matmul).type != LayerType::kMATRIX_MULTIPLY) return false;
    }
    chain.insert(chain.end(), scaled.begin(), scaled.end());
    chain.push_back(matmul);
    // S = MatMul(Q', K^T) with Q' not transposed; K^T as the right operand either way.
    const auto* mm1 = std::get_if<MatrixMultiplyParams>(&edit_.node(matmul).params);
    if (!mm1 || mm1->transposeA) return false;
    const int32_t q = unscaled(edit_.node(matmul).inputs[0], &scale, chain);
    // torch.onnx's scaled_dot_product_attention scales both Q and K^T by sqrt(scale).
    const int32_t k = unscaled(edit_.node(matmul).inputs[1], &scale, chain);

    AttentionParams params;
    params.scale = scale;
    params.keyTransposed = !mm1->transposeB;
    params.zeroNanRows = !guard.empty();
    std::vector<int32_t> inputs{q, k, v};
    if (mask >= 0) inputs.push_back(mask);
    // The Attention layer's shape rule decides what it takes; its output must be the chain's.
    std::vector<TensorShape> shapes, outShapes;
    for (int32_t t : inputs) shapes.push_back(edit_.tensor(t).shape);
    for (const TensorShape& sh : shapes)
      if (!isFloatType(sh.type)) return false;
    const TensorShape& expect = edit_.tensor(out.outputs[0]).shape;
    const Status st = inferLayerOutputs(LayerType::kATTENTION, params, shapes, outShapes);
    if (!st || outShapes.size() != 1 || outShapes[0].dims != expect.dims ||
        outShapes[0].type != expect.type) {
      reason_ = st ? "the Attention layer would not give its output's shape"
                   : "the Attention layer refuses it: " + st.message();
      return false;
    }
    // The mask must not widen the scores (it broadcasts to them, not they to it).
    if (mask >= 0 && edit_.tensor(edit_.node(add).outputs[0]).shape.dims !=
                         edit_.tensor(edit_.node(matmul).outputs[0]).shape.dims)
      return false;
    f.chain = chain;
    f.what = "the attention written out as " + std::to_string(chain.size() + 1) +
             " layers ending in " + describe(out);
    f.into = "one Attention of '" + edit_.tensor(q).name + "', '" + edit_.tensor(k).name + "', '" +
             edit_.tensor(v).name + "'" +
             (mask >= 0 ? " with mask '" + edit_.tensor(mask).name + "'" : std::string()) +
             " (scale " + std::to_string(scale) + (guard.empty() ? "" : ", NaN rows zeroed") + ")";
    f.type = LayerType::kATTENTION;
    f.params = params;
    f.inputs = inputs;
    return true;
  }

  const std::string& reason() const { return reason_; }

 private:
  const GraphEditor& edit_;
  mutable std::string reason_;
};

// Exporters write K^T as a transpose of its own (MatMul(Q, Transpose(K))), which makes the
// Attention layer read K transposed, [.., D, Sk]: its kernels then gather K a column at a time
// (the flash kernel cannot use its 16-byte row copies). Where that transpose feeds this Attention
// alone, it writes K itself instead (its last two axes swapped back) and the Attention reads it
// untransposed: the same one copy, and rows the kernels load whole.
Status readKeysUntransposed(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    GraphNode& node = graph.nodes[size_t(n)];
    auto* p = std::get_if<AttentionParams>(&node.params);
    if (edit.removed(n) || node.type != LayerType::kATTENTION || !p || !p->keyTransposed) continue;
    const int32_t kt = node.inputs[1];
    const int32_t s = edit.producer(kt);
    if (s < 0) continue;
    GraphNode& shuffle = graph.nodes[size_t(s)];
    auto* sp = std::get_if<ShuffleParams>(&shuffle.params);
    GraphTensor& t = graph.tensors[size_t(kt)];
    const int32_t r = t.shape.dims.nbDims;
    if (shuffle.type != LayerType::kSHUFFLE || shuffle.inputs.size() != 1 || !sp ||
        !sp->hasFirstTranspose || sp->hasReshape || sp->hasSecondTranspose || r < 2 || t.isOutput ||
        edit.consumers(kt).size() != 1)
      continue;
    std::swap(sp->firstTranspose[r - 2], sp->firstTranspose[r - 1]);
    std::swap(t.shape.dims.d[r - 2], t.shape.dims.d[r - 1]);
    for (Dims& d : t.rangeDims)
      if (d.nbDims == r) std::swap(d.d[r - 2], d.d[r - 1]);
    p->keyTransposed = false;
    bool identity = true;
    for (int32_t i = 0; i < r; ++i) identity = identity && sp->firstTranspose[i] == i;
    if (identity) {  // K^T of K itself: the Attention reads K, and the transpose goes
      context.changed("the Attention " + describe(node) +
                      " reads K untransposed: " + describe(shuffle) + " (K^T) is gone");
      edit.setInput(n, 1, shuffle.inputs[0]);
      edit.removeNode(s);
    } else {
      context.changed("the Attention " + describe(node) +
                      " reads K untransposed: " + describe(shuffle) + " writes K instead of K^T");
    }
  }
  return edit.compact();
}

}  // namespace

Status fuseAttention(Graph& graph, PassContext& context) {
  KILN_RETURN_IF_ERROR(
      fuseChains(graph, context, [&](const GraphEditor& edit, int32_t n, ChainFusion& f) {
        Matcher m(edit);
        if (m.match(n, f)) return true;
        if (!m.reason().empty())
          context.declined("left the attention ending in " + describe(edit.node(n)) +
                           " alone: " + m.reason());
        return false;
      }));
  return readKeysUntransposed(graph, context);
}

}  // namespace kiln::passes
