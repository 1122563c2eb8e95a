// Attention layout: exporters write multi-head attention with its data movement spelled out.
// torch.nn.MultiheadAttention (as torchvision's ViT and every nn.TransformerEncoder export it)
// projects Q, K and V in one product [S, B, 3E], picks each third (Slice, or Gather after a
// transpose of the packed projection), splits the heads and moves them before the sequence
// (Reshape, Transpose), and after the attention moves them back (Transpose, Reshape); Hugging
// Face's BERT does the same from [B, S, E]. Each of those transposes is a full copy of an
// activation: at ViT-B/16 batch 64, eight per layer, about 1.9 ms of 9.3 on the H200.
//
// This pass makes them views instead: for each Attention it walks up from Q, K and V through the
// layers that only move data (Shuffle, Slice with unit steps, Gather of one constant index) to
// the tensor they came from, composes what those layers do into one strided view of it, and,
// where that view is one the Attention layer can read (its head views, kiln/ops/attention.h:
// batch, heads, sequence and head size each a piece of one axis, at most one slot), the
// Attention reads that tensor directly. Its output likewise: when O's one reader is a Shuffle,
// the Attention writes that Shuffle's output in its order and the Shuffle goes. The layers left
// without readers go at dead-layer elimination.
//
// Each view is checked by resolving it as the kernels will (attention_views.h) against the
// composed strides, at the working shape and, in profile builds, at every corner of every
// profile, so a view that holds at one shape only is left alone, with the reason in the log.
// Runs after attention and linear fusion (it reads what they made), before dead-layer
// elimination.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "builder/passes/constant_values.h"
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"
#include "ops/attention/attention_views.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

using Role = AttentionParams::Role;
namespace at = ops::attention;

// A tensor as a strided view of a contiguous source: per logical dim its pieces, outer to inner,
// each a size (> 1) and a stride in elements of the source; a dim of size 1 has none.
struct Piece {
  int64_t size = 1, stride = 0;
};
struct View {
  std::vector<std::vector<Piece>> dims;
  int64_t offset = 0;
};

View contiguous(const Dims& d) {
  View v;
  v.dims.resize(size_t(d.nbDims));
  int64_t stride = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    if (d.d[i] > 1) v.dims[size_t(i)].push_back({d.d[i], stride});
    stride *= d.d[i];
  }
  return v;
}

int64_t dimSize(const std::vector<Piece>& pieces) {
  int64_t n = 1;
  for (const Piece& p : pieces) n *= p.size;
  return n;
}

void permute(View& v, const int32_t* perm) {
  std::vector<std::vector<Piece>> out(v.dims.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = v.dims[size_t(perm[i])];
  v.dims = std::move(out);
}

void permuteInverse(View& v, const int32_t* perm) {
  std::vector<std::vector<Piece>> out(v.dims.size());
  for (size_t i = 0; i < out.size(); ++i) out[size_t(perm[i])] = v.dims[i];
  v.dims = std::move(out);
}

// The same elements in row-major order, grouped into dims `to` (a reshape): pieces that are one
// run merge, a piece splits where a new dim ends inside it; false when a dim would need elements
// of two pieces that are not one run.
bool regroup(View& v, const Dims& to) {
  std::vector<Piece> flat;
  for (const auto& d : v.dims)
    for (const Piece& p : d) {
      if (!flat.empty() && flat.back().stride == p.size * p.stride) {
        flat.back() = {flat.back().size * p.size, p.stride};
      } else {
        flat.push_back(p);
      }
    }
  std::vector<std::vector<Piece>> out(size_t(to.nbDims));
  size_t next = 0;
  for (int32_t i = 0; i < to.nbDims; ++i) {
    int64_t need = to.d[i];
    if (need < 1) return false;
    while (need > 1) {
      if (next >= flat.size()) return false;
      Piece& p = flat[next];
      if (p.size <= need) {
        if (need % p.size != 0) return false;
        out[size_t(i)].push_back(p);
        need /= p.size;
        ++next;
      } else {
        if (p.size % need != 0) return false;
        const int64_t rest = p.size / need;
        out[size_t(i)].push_back({need, p.stride * rest});
        p = {rest, p.stride};
        need = 1;
      }
    }
  }
  if (next != flat.size()) return false;
  v.dims = std::move(out);
  return true;
}

// Reads the dims of tensors at one shape: the working shape, or one profile corner.
using DimsOf = std::function<const Dims&(int32_t)>;

// v (the view of node n's data input) becomes the view of its output; false when the node is
// not a pure data movement this can follow.
bool follow(const GraphEditor& edit, int32_t n, const DimsOf& dimsOf, View& v) {
  const GraphNode& node = edit.node(n);
  const Dims& in = dimsOf(node.inputs[0]);
  const Dims& out = dimsOf(node.outputs[0]);
  if (node.type == LayerType::kSHUFFLE) {
    const auto* p = std::get_if<ShuffleParams>(&node.params);
    if (!p) return false;
    if (p->hasFirstTranspose) permute(v, p->firstTranspose);
    if (p->hasReshape || p->hasSecondTranspose) {
      Dims mid = out;  // the reshape's dims: the output before the second transpose
      if (p->hasSecondTranspose)
        for (int32_t i = 0; i < out.nbDims; ++i) mid.d[p->secondTranspose[i]] = out.d[i];
      if (p->hasReshape && !regroup(v, mid)) return false;
      if (p->hasSecondTranspose) permute(v, p->secondTranspose);
    }
    return true;
  }
  if (node.type == LayerType::kSLICE) {
    const auto* p = std::get_if<SliceParams>(&node.params);
    if (!p || in.nbDims != out.nbDims) return false;
    for (int32_t a = 0; a < in.nbDims; ++a) {
      if (out.d[a] == in.d[a]) continue;
      auto& pieces = v.dims[size_t(a)];
      if (p->steps.d[a] != 1 || pieces.size() != 1) return false;
      v.offset += p->startOn(a, in.d[a]) * pieces[0].stride;
      if (out.d[a] > 1)
        pieces[0].size = out.d[a];
      else
        pieces.clear();
    }
    return true;
  }
  if (node.type == LayerType::kGATHER) {
    const auto* p = std::get_if<GatherParams>(&node.params);
    if (!p || node.inputs.size() != 2) return false;
    const GraphTensor& index = edit.tensor(node.inputs[1]);
    if (!isConstant(index) || volume(index.shape.dims) != 1 || index.shape.dims.nbDims > 1)
      return false;
    const int32_t a = p->axis < 0 ? p->axis + in.nbDims : p->axis;
    if (a < 0 || a >= in.nbDims) return false;
    int64_t i = static_cast<int64_t>(constantValue(index, 0));
    if (i < 0) i += in.d[a];
    if (i < 0 || i >= in.d[a]) return false;
    const auto& pieces = v.dims[size_t(a)];
    if (pieces.size() > 1) return false;
    if (!pieces.empty()) v.offset += i * pieces[0].stride;
    v.dims.erase(v.dims.begin() + a);
    if (index.shape.dims.nbDims == 1) v.dims.insert(v.dims.begin() + a, std::vector<Piece>{});
    return true;
  }
  return false;
}

bool movesDataOnly(const GraphEditor& edit, int32_t n) {
  const LayerType t = edit.node(n).type;
  return t == LayerType::kSHUFFLE || t == LayerType::kSLICE || t == LayerType::kGATHER;
}

// The roles of an attention operand or output as pieces: B and H from its batch dims (at most two
// pieces in all), S and D (one piece each, D contiguous); false when it has more.
struct Roles {
  Piece role[4];  // size 1 where absent
};

bool batchPieces(const View& v, std::vector<Piece>& batch) {
  batch.clear();
  for (size_t i = 0; i + 2 < v.dims.size(); ++i)
    for (const Piece& p : v.dims[i]) batch.push_back(p);
  return batch.size() <= 2;
}

bool rolesOf(const View& v, const std::vector<Piece>& batch, int64_t b, int64_t h, Roles& r) {
  const size_t rank = v.dims.size();
  if (rank < 2 || v.dims[rank - 1].size() > 1 || v.dims[rank - 2].size() > 1) return false;
  if (!v.dims[rank - 1].empty()) r.role[Role::kHeadSize] = v.dims[rank - 1][0];
  if (!v.dims[rank - 2].empty()) r.role[Role::kSequence] = v.dims[rank - 2][0];
  if (batch.size() == 2) {
    if (batch[0].size != b || batch[1].size != h) return false;
    r.role[Role::kBatch] = batch[0];
    r.role[Role::kHeads] = batch[1];
  } else if (batch.size() == 1) {
    if (batch[0].size != b * h) return false;
    if (b > 1) r.role[Role::kBatch] = {b, batch[0].stride * h};
    if (h > 1) r.role[Role::kHeads] = {h, batch[0].stride};
  } else if (b * h != 1) {
    return false;
  }
  return true;
}

// Input `input`'s head view (axis, inner, size of each role, slot) in p for roles r over a
// contiguous source of dims x with element `offset` first; false when the roles are not pieces of
// x's axes or the offset is not one slot.
bool encodeInput(const Roles& r, int64_t offset, const Dims& x, int input, AttentionParams& p) {
  const int32_t rank = x.nbDims;
  int64_t stride[Dims::kMaxDims] = {};
  at::contiguousStrides(x, stride);
  const int32_t base = input * AttentionParams::kRoles;
  int64_t top[Dims::kMaxDims];  // per axis, how far its roles reach (inner times size)
  std::fill(top, top + rank, 1);
  for (int32_t role = 0; role < 4; ++role) {
    const Piece& piece = r.role[role];
    if (piece.size <= 1) {
      if (role == Role::kHeadSize) {  // D = 1: the last axis' innermost element
        p.viewAxis[base + role] = rank - 1;
        p.viewInner[base + role] = 1;
        p.viewSize[base + role] = 1;
      }
      continue;
    }
    int32_t a = 0;
    while (a < rank && !(piece.stride >= stride[a] && piece.stride < stride[a] * x.d[a])) ++a;
    if (a == rank || piece.stride % stride[a] != 0) return false;
    const int64_t inner = piece.stride / stride[a];
    p.viewAxis[base + role] = a;
    p.viewInner[base + role] = inner;
    p.viewSize[base + role] = inner * piece.size == x.d[a] ? 0 : piece.size;
    top[a] = std::max(top[a], inner * piece.size);
  }
  // The offset's coordinates; at most one axis may hold a slot.
  int64_t rest = offset;
  int32_t slotAxis = -1;
  int64_t coordinate = 0;
  for (int32_t a = 0; a < rank; ++a) {
    const int64_t c = rest / stride[a];
    rest %= stride[a];
    if (c == 0 && top[a] == x.d[a]) continue;
    if (c == 0 && x.d[a] == 1) continue;
    if (slotAxis >= 0) return false;
    slotAxis = a;
    coordinate = c;
  }
  if (slotAxis < 0) return true;
  const int64_t inner = top[slotAxis];
  if (coordinate % inner != 0 || x.d[slotAxis] % inner != 0) return false;
  p.viewAxis[base + Role::kSlot] = slotAxis;
  p.viewInner[base + Role::kSlot] = inner;
  p.viewSize[base + Role::kSlot] = 0;
  p.viewSlot[input] = coordinate / inner;
  return true;
}

// Whether resolving input `input`'s view of x (as the kernels will) gives roles r and offset.
bool resolvesTo(const AttentionParams& p, int input, const Dims& x, const Roles& r, int64_t offset,
                std::string* why) {
  at::InputView view;
  if (!at::resolveInputView(p, input, x, view, why)) return false;
  for (int32_t role = 0; role < 4; ++role) {
    const Piece& want = r.role[role];
    const at::RoleView& got = view.role[role];
    if (got.size != want.size || (want.size > 1 && got.stride != want.stride)) {
      if (why) *why = "the view resolves to other strides than the layers' at " + dimsString(x);
      return false;
    }
  }
  if (view.offset != offset) {
    if (why) *why = "the view resolves to another offset than the layers' at " + dimsString(x);
    return false;
  }
  return true;
}

// The output order and merges that lay roles r out as contiguous dims y, or false.
bool encodeOutput(const Roles& r, const Dims& y, AttentionParams& p) {
  int32_t order[4] = {Role::kBatch, Role::kHeads, Role::kSequence, Role::kHeadSize};
  const int64_t sizes[4] = {r.role[0].size, r.role[1].size, r.role[2].size, r.role[3].size};
  do {
    if (order[3] != Role::kHeadSize) continue;
    for (int32_t mask = 0; mask < 8; ++mask) {
      AttentionParams c = p;
      std::copy(order, order + 4, c.outputOrder);
      for (int32_t i = 0; i < 4; ++i) c.outputMerged[i] = i > 0 && (mask >> (i - 1) & 1);
      Dims dims;
      int64_t strides[4] = {};
      if (!at::outputLayout(c, sizes, dims, strides, nullptr) || !(dims == y)) continue;
      bool same = true;
      for (int32_t role = 0; role < 4; ++role)
        same = same && (sizes[role] <= 1 || strides[role] == r.role[role].stride);
      if (!same) continue;
      std::copy(c.outputOrder, c.outputOrder + 4, p.outputOrder);
      std::copy(c.outputMerged, c.outputMerged + 4, p.outputMerged);
      return true;
    }
  } while (std::next_permutation(order, order + 4));
  return false;
}

// One Attention's operands and output as views, at one shape.
struct Layout {
  int32_t source[3] = {-1, -1, -1};  // the tensors Q, K and V are read from
  View view[3];
  int32_t output = -1;  // the tensor O is written as (O itself, or its Shuffle's output)
  View outputView;      // O as a view of it
};

// The chain of data-movement layers above t, nearest first, as far as they go.
std::vector<int32_t> chainAbove(const GraphEditor& edit, int32_t t) {
  std::vector<int32_t> chain;
  for (int32_t n = edit.producer(t); n >= 0 && movesDataOnly(edit, n);
       n = edit.producer(edit.node(n).inputs[0]))
    chain.push_back(n);
  return chain;
}

// The view of t from the tensor `depth` layers up its chain, or false.
bool viewFrom(const GraphEditor& edit, const std::vector<int32_t>& chain, size_t depth,
              const DimsOf& dimsOf, View& v) {
  if (depth == 0) return false;
  v = contiguous(dimsOf(edit.node(chain[depth - 1]).inputs[0]));
  for (size_t i = depth; i-- > 0;)
    if (!follow(edit, chain[i], dimsOf, v)) return false;
  return true;
}

class AttentionLayout {
 public:
  AttentionLayout(GraphEditor& edit, PassContext& context) : edit_(edit), context_(context) {}

  void run(int32_t n) {
    const GraphNode& node = edit_.node(n);
    const auto* p = std::get_if<AttentionParams>(&node.params);
    if (!p || p->viewed || p->keyTransposed) return;
    // The chains above Q, K and V (the deepest view first), and O's one Shuffle reader.
    std::vector<int32_t> chains[3];
    for (int i = 0; i < 3; ++i) chains[i] = chainAbove(edit_, node.inputs[size_t(i)]);
    const int32_t o = node.outputs[0];
    int32_t shuffle = -1;
    if (!edit_.tensor(o).isOutput && edit_.consumers(o).size() == 1) {
      const int32_t c = edit_.consumers(o)[0];
      if (edit_.node(c).type == LayerType::kSHUFFLE && edit_.node(c).inputs[0] == o) shuffle = c;
    }
    if (shuffle < 0 && chains[0].empty() && chains[1].empty() && chains[2].empty()) return;
    // Try the deepest sources first, then shallower ones, for each operand independently.
    size_t depth[3];
    for (int i = 0; i < 3; ++i) depth[i] = chains[i].size();
    std::string why;
    for (;;) {
      AttentionParams params;
      if (plan(n, chains, depth, shuffle, params, &why)) {
        apply(n, chains, depth, shuffle, params);
        return;
      }
      // Shorten the longest chain and try again; give up when none is left.
      int longest = 0;
      for (int i = 1; i < 3; ++i)
        if (depth[i] > depth[longest]) longest = i;
      if (depth[longest] == 0) {
        if (shuffle >= 0) {
          shuffle = -1;
          for (int i = 0; i < 3; ++i) depth[i] = chains[i].size();
          continue;
        }
        context_.declined("left the layout of " + describe(node) + " alone: " + why);
        return;
      }
      --depth[longest];
    }
  }

 private:
  // The dims of each corner of each profile, or just the working shape (static builds).
  size_t cornerCount(const std::vector<int32_t>& tensors) const {
    size_t corners = 0;
    for (int32_t t : tensors) corners = std::max(corners, edit_.tensor(t).rangeDims.size());
    return corners;
  }

  // The views at one shape (`corner` -1: the working shape); false with *why.
  bool layoutAt(int32_t n, const std::vector<int32_t> (&chains)[3], const size_t (&depth)[3],
                int32_t shuffle, long corner, Layout& l, std::string* why) const {
    const DimsOf dimsOf = [&](int32_t t) -> const Dims& { return dimsAt(t, corner); };
    const GraphNode& node = edit_.node(n);
    for (int i = 0; i < 3; ++i) {
      const int32_t t = node.inputs[size_t(i)];
      if (depth[i] == 0) {
        l.source[i] = t;
        l.view[i] = contiguous(dimsOf(t));
      } else {
        l.source[i] = edit_.node(chains[i][depth[i] - 1]).inputs[0];
        if (!viewFrom(edit_, chains[i], depth[i], dimsOf, l.view[i])) {
          *why = "the layers above " +
                 std::string(i == 0   ? "Q"
                             : i == 1 ? "K"
                                      : "V") +
                 " are not one strided view";
          return false;
        }
      }
    }
    const int32_t o = node.outputs[0];
    l.output = o;
    l.outputView = contiguous(dimsOf(o));
    if (shuffle >= 0) {
      // O as a view of the Shuffle's output: the Shuffle's steps undone, last first.
      const GraphNode& s = edit_.node(shuffle);
      const auto* sp = std::get_if<ShuffleParams>(&s.params);
      l.output = s.outputs[0];
      View v = contiguous(dimsOf(l.output));
      if (sp->hasSecondTranspose) permuteInverse(v, sp->secondTranspose);
      if (sp->hasReshape || sp->hasSecondTranspose) {
        Dims mid = dimsOf(o);  // the dims after the first transpose
        if (sp->hasFirstTranspose)
          for (int32_t i = 0; i < mid.nbDims; ++i) mid.d[i] = dimsOf(o).d[sp->firstTranspose[i]];
        if (!regroup(v, mid)) {
          *why = "O's reader " + describe(s) + " is not a strided view";
          return false;
        }
      }
      if (sp->hasFirstTranspose) permuteInverse(v, sp->firstTranspose);
      l.outputView = v;
    }
    return true;
  }

  const Dims& dimsAt(int32_t t, long corner) const {
    const GraphTensor& g = edit_.tensor(t);
    return corner < 0 ? g.shape.dims : g.rangeDims[size_t(corner)];
  }

  // The head views that make the layers above and below the Attention views; false with *why.
  // In profile builds the passes run at every corner, and each run must make the same views: so
  // every run derives them at the same corner (the one with the largest output, where the fewest
  // roles are 1 and so absent) and checks them at all.
  bool plan(int32_t n, const std::vector<int32_t> (&chains)[3], const size_t (&depth)[3],
            int32_t shuffle, AttentionParams& params, std::string* why) const {
    const GraphNode& node = edit_.node(n);
    std::vector<int32_t> tensors(node.inputs.begin(), node.inputs.end());
    tensors.push_back(node.outputs[0]);
    if (shuffle >= 0) tensors.push_back(edit_.node(shuffle).outputs[0]);
    for (int i = 0; i < 3; ++i)
      for (size_t k = 0; k < depth[i]; ++k) {
        tensors.push_back(edit_.node(chains[i][k]).inputs[0]);
        tensors.push_back(edit_.node(chains[i][k]).outputs[0]);
      }
    const size_t corners = cornerCount(tensors);
    for (int32_t t : tensors)
      if (edit_.tensor(t).rangeDims.size() != corners) {
        *why = "a tensor of the chain has no dims at the profile corners";
        return false;
      }
    long from = -1;
    for (size_t c = 0; c < corners; ++c)
      if (from < 0 ||
          volume(dimsAt(node.outputs[0], long(c))) > volume(dimsAt(node.outputs[0], from)))
        from = long(c);
    int64_t h = 0;
    if (!derive(n, chains, depth, shuffle, from, params, h, why)) return false;
    // The shape rule must agree at the working shape.
    Layout l;
    if (!layoutAt(n, chains, depth, shuffle, -1, l, why)) return false;
    std::vector<TensorShape> shapes, out;
    for (int i = 0; i < 3; ++i) shapes.push_back(edit_.tensor(l.source[i]).shape);
    if (node.inputs.size() == 4) shapes.push_back(edit_.tensor(node.inputs[3]).shape);
    const Status st = inferLayerOutputs(LayerType::kATTENTION, params, shapes, out);
    if (!st || out.size() != 1 || !(out[0].dims == edit_.tensor(l.output).shape.dims)) {
      *why = st ? "the viewed Attention would not give its output's dims" : st.message();
      return false;
    }
    for (long c = -1; c < long(corners); ++c)
      if (!agreesAt(n, chains, depth, shuffle, c, params, h, why)) return false;
    return true;
  }

  // The views at one shape (`corner`, -1: the working shape) as head views in params, with the
  // head count in h; false with *why.
  bool derive(int32_t n, const std::vector<int32_t> (&chains)[3], const size_t (&depth)[3],
              int32_t shuffle, long corner, AttentionParams& params, int64_t& h,
              std::string* why) const {
    const GraphNode& node = edit_.node(n);
    params = std::get<AttentionParams>(node.params);
    params.viewed = true;
    Layout l;
    if (!layoutAt(n, chains, depth, shuffle, corner, l, why)) return false;
    // B and H: from whichever operand has them apart (a batch in two pieces), else all heads.
    const Dims& od = dimsAt(node.outputs[0], corner);
    for (int i = 0; i < 3; ++i) {
      const Dims& d = dimsAt(node.inputs[size_t(i)], corner);
      for (int32_t a = 0; a + 2 < od.nbDims; ++a)
        if (d.nbDims != od.nbDims || d.d[a] != od.d[a]) {
          *why = "its operands broadcast over the batch";
          return false;
        }
    }
    int64_t count = 1;
    for (int32_t a = 0; a + 2 < od.nbDims; ++a) count *= od.d[a];
    int64_t b = 1;
    h = count;
    std::vector<Piece> batch[4];
    for (int i = 0; i < 4; ++i)
      if (!batchPieces(i < 3 ? l.view[i] : l.outputView, batch[i])) {
        *why = "the batch dims of an operand or the output are more than two strided pieces";
        return false;
      }
    for (const auto& pieces : batch)
      if (pieces.size() == 2) {
        b = pieces[0].size;
        h = pieces[1].size;
      }
    Roles roles[4];
    for (int i = 0; i < 4; ++i)
      if (!rolesOf(i < 3 ? l.view[i] : l.outputView, batch[i], b, h, roles[i])) {
        *why = "the operands disagree on batch and heads, or a row is not contiguous";
        return false;
      }
    for (int i = 0; i < 3; ++i) {
      const Dims& x = dimsAt(l.source[i], corner);
      if (!encodeInput(roles[i], l.view[i].offset, x, i, params)) {
        *why = std::string(i == 0   ? "Q"
                           : i == 1 ? "K"
                                    : "V") +
               " is not a head view of " + dimsString(x);
        return false;
      }
      if (!resolvesTo(params, i, x, roles[i], l.view[i].offset, why)) return false;
    }
    const Dims& y = dimsAt(l.output, corner);
    if (l.outputView.offset != 0 || !encodeOutput(roles[3], y, params)) {
      *why = "O is not a head layout of " + dimsString(y);
      return false;
    }
    return true;
  }

  // Whether the views in params give the layers' own strides at `corner` (-1: the working shape).
  bool agreesAt(int32_t n, const std::vector<int32_t> (&chains)[3], const size_t (&depth)[3],
                int32_t shuffle, long c, const AttentionParams& params, int64_t h,
                std::string* why) const {
    Layout l;
    if (!layoutAt(n, chains, depth, shuffle, c, l, why)) return false;
    const Dims& od = dimsAt(edit_.node(n).outputs[0], c);
    int64_t count = 1;
    for (int32_t a = 0; a + 2 < od.nbDims; ++a) count *= od.d[a];
    // H is fixed by the weights; B follows the batch.
    const int64_t bc = h > 0 && count % h == 0 ? count / h : -1;
    std::vector<Piece> batch;
    Roles roles[4];
    for (int i = 0; i < 4; ++i) {
      const View& v = i < 3 ? l.view[i] : l.outputView;
      if (bc < 0 || !batchPieces(v, batch) || !rolesOf(v, batch, bc, h, roles[i])) {
        *why = "at a profile corner the layers are another layout";
        return false;
      }
    }
    for (int i = 0; i < 3; ++i)
      if (!resolvesTo(params, i, dimsAt(l.source[i], c), roles[i], l.view[i].offset, why))
        return false;
    const int64_t sizes[4] = {roles[3].role[0].size, roles[3].role[1].size, roles[3].role[2].size,
                              roles[3].role[3].size};
    Dims y;
    int64_t strides[4] = {};
    bool same = at::outputLayout(params, sizes, y, strides, why) && y == dimsAt(l.output, c);
    for (int32_t role = 0; role < 4 && same; ++role)
      same = sizes[role] <= 1 || strides[role] == roles[3].role[role].stride;
    if (!same) *why = "at a profile corner the output is another layout";
    return same;
  }

  void apply(int32_t n, const std::vector<int32_t> (&chains)[3], const size_t (&depth)[3],
             int32_t shuffle, const AttentionParams& params) {
    const std::string before = describe(edit_.node(n));
    std::string moved;
    for (int i = 0; i < 3; ++i) {
      if (depth[i] == 0) continue;
      const int32_t source = edit_.node(chains[i][depth[i] - 1]).inputs[0];
      edit_.setInput(n, size_t(i), source);
      moved += std::string(moved.empty() ? "" : ", ") +
               (i == 0   ? "Q"
                : i == 1 ? "K"
                         : "V") +
               " from '" + edit_.tensor(source).name + "' (" + std::to_string(depth[i]) +
               " layers)";
    }
    GraphNode& node = edit_.graph().nodes[size_t(n)];
    node.params = params;
    if (shuffle >= 0) {
      const int32_t y = edit_.node(shuffle).outputs[0];
      const std::string gone = describe(edit_.node(shuffle));
      edit_.removeNode(shuffle);
      edit_.setOutput(n, 0, y);
      moved += std::string(moved.empty() ? "" : ", ") + "O as " + gone + "'s output";
    }
    context_.changed("the Attention " + before + " reads and writes head views: " + moved);
  }

  GraphEditor& edit_;
  PassContext& context_;
};

}  // namespace

Status layOutAttention(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  AttentionLayout layout(edit, context);
  for (int32_t n = 0; n < edit.nodeCount(); ++n)
    if (!edit.removed(n) && edit.node(n).type == LayerType::kATTENTION) layout.run(n);
  return edit.compact();
}

}  // namespace kiln::passes
