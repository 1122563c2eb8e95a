// The head views of Attention (kiln/ops/attention.h, `viewed`): where each role (batch, heads,
// sequence, head size) of Q, K and V lies inside its input tensor, and where O's roles go in the
// output. The shape rule (attention_shape.cpp), the kernels' geometry (attention_semantics.h)
// and the builder pass that makes views (attention_layout.cpp) all read them through these two
// functions, so a view means one thing everywhere. Host code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/tensor_shape.h"
#include "kiln/ops/attention.h"
#include "kiln/types.h"

namespace kiln::ops::attention {

// One role of a view: its size and its stride in elements (0 where the role is absent).
struct RoleView {
  int64_t size = 1;
  int64_t stride = 0;
};

// Q, K or V as a view of its input: roles B, H, S, D and the offset of element 0 (the slot).
struct InputView {
  RoleView role[4];
  int64_t offset = 0;
};

// The element strides of a contiguous tensor of dims x, per axis.
inline void contiguousStrides(const Dims& x, int64_t (&strides)[Dims::kMaxDims]) {
  int64_t s = 1;
  for (int32_t a = x.nbDims - 1; a >= 0; --a) {
    strides[a] = s;
    s *= x.d[a];
  }
}

// Input `input` (0 Q, 1 K, 2 V) of a viewed Attention over a contiguous tensor of dims x, or
// false with *why when the view does not fit x (roles that do not tile an axis, an axis of more
// than one element that no role uses, a slot index outside its role).
inline bool resolveInputView(const AttentionParams& p, int input, const Dims& x, InputView& view,
                             std::string* why) {
  static const char* const kInput[] = {"Q", "K", "V"};
  static const char* const kRole[] = {"batch", "heads", "sequence", "head size", "slot"};
  auto fail = [&](const std::string& what) {
    if (why) *why = std::string(kInput[input]) + "'s view of " + dimsString(x) + ": " + what;
    return false;
  };
  const int32_t rank = x.nbDims;
  int64_t axisStride[Dims::kMaxDims] = {};
  contiguousStrides(x, axisStride);
  const int32_t base = input * AttentionParams::kRoles;
  int64_t inner[AttentionParams::kRoles] = {}, size[AttentionParams::kRoles] = {};
  view = InputView{};
  for (int32_t r = 0; r < AttentionParams::kRoles; ++r) {
    const int32_t a = p.viewAxis[base + r];
    if (a < 0) continue;
    if (a >= rank)
      return fail(std::string("the ") + kRole[r] + " role is on axis " + std::to_string(a) +
                  ", past its rank");
    inner[r] = p.viewInner[base + r];
    size[r] = p.viewSize[base + r];
    if (inner[r] < 1 || size[r] < 0 || (x.d[a] > 0 && inner[r] > x.d[a]))
      return fail(std::string("the ") + kRole[r] + " role has inner " + std::to_string(inner[r]) +
                  " and size " + std::to_string(size[r]) + " on an axis of " +
                  std::to_string(x.d[a]));
    if (size[r] == 0) {
      if (x.d[a] % inner[r] != 0)
        return fail(std::string("axis ") + std::to_string(a) + " of " + std::to_string(x.d[a]) +
                    " is not a multiple of the " + kRole[r] + " role's inner " +
                    std::to_string(inner[r]));
      size[r] = x.d[a] / inner[r];
    }
  }
  if (p.viewAxis[base + AttentionParams::kHeadSize] != rank - 1 ||
      inner[AttentionParams::kHeadSize] != 1)
    return fail("the head size must be the innermost part of the last axis");
  // Per axis, its roles of more than one element, from the innermost out, must tile it exactly
  // (every index of the view inside X, no element of X in two places).
  for (int32_t a = 0; a < rank; ++a) {
    int32_t order[AttentionParams::kRoles], n = 0;
    bool empty = false;
    for (int32_t r = 0; r < AttentionParams::kRoles; ++r) {
      if (p.viewAxis[base + r] != a) continue;
      empty = empty || size[r] == 0;
      if (size[r] > 1) order[n++] = r;
    }
    std::sort(order, order + n, [&](int32_t u, int32_t w) { return inner[u] < inner[w]; });
    int64_t expect = 1;
    for (int32_t i = 0; i < n; ++i) {
      if (inner[order[i]] != expect)
        return fail(std::string("the roles on axis ") + std::to_string(a) + " (" +
                    std::to_string(x.d[a]) + ") do not tile it");
      expect *= size[order[i]];
    }
    if (x.d[a] == 0 ? !empty : expect != x.d[a])
      return fail(std::string("the roles on axis ") + std::to_string(a) + " cover " +
                  std::to_string(expect) + " of its " + std::to_string(x.d[a]) + " elements");
  }
  for (int32_t r = 0; r < 4; ++r)
    if (p.viewAxis[base + r] >= 0)
      view.role[r] = {size[r], inner[r] * axisStride[p.viewAxis[base + r]]};
  const int64_t slot = p.viewSlot[input];
  if (p.viewAxis[base + AttentionParams::kSlot] >= 0) {
    if (slot < 0 || slot >= size[AttentionParams::kSlot])
      return fail("slot " + std::to_string(slot) + " outside the slot role's " +
                  std::to_string(size[AttentionParams::kSlot]));
    view.offset = slot * inner[AttentionParams::kSlot] *
                  axisStride[p.viewAxis[base + AttentionParams::kSlot]];
  } else if (slot != 0) {
    return fail("a slot index without a slot role");
  }
  return true;
}

// Whether a viewed Attention's mask of dims m holds its batch and heads merged into one dim of
// B * H ([B * H, Sq, Sk], as exports that attend over [B * H, S, D] write it) rather than
// broadcasting to [B, H, Sq, Sk]; with B or H 1 the two readings are one.
inline bool maskMergesBatch(const Dims& m, int64_t b, int64_t h) {
  if (m.nbDims < 3 || b <= 1 || h <= 1 || m.d[m.nbDims - 3] != b * h) return false;
  for (int32_t i = 0; i + 3 < m.nbDims; ++i)
    if (m.d[i] != 1) return false;
  return true;
}

// The output of a viewed Attention whose roles B, H, S, Dv have `sizes`: its dims and each role's
// stride, or false with *why when outputOrder / outputMerged are not a valid layout.
inline bool outputLayout(const AttentionParams& p, const int64_t (&sizes)[4], Dims& dims,
                         int64_t (&strides)[4], std::string* why) {
  bool seen[4] = {};
  for (int32_t i = 0; i < 4; ++i) {
    const int32_t r = p.outputOrder[i];
    if (r < 0 || r > 3 || seen[r]) {
      if (why) *why = "outputOrder is not an order of the roles batch, heads, sequence, head size";
      return false;
    }
    seen[r] = true;
  }
  if (p.outputOrder[3] != AttentionParams::kHeadSize || p.outputMerged[0]) {
    if (why) *why = "the output's head size must be innermost, and its first dim not merged";
    return false;
  }
  int64_t stride = 1;
  for (int32_t i = 3; i >= 0; --i) {
    strides[p.outputOrder[i]] = stride;
    stride *= sizes[p.outputOrder[i]];
  }
  dims = Dims{};
  for (int32_t i = 0; i < 4; ++i) {
    const int64_t s = sizes[p.outputOrder[i]];
    if (p.outputMerged[i])
      dims.d[dims.nbDims - 1] *= s;
    else
      dims.d[dims.nbDims++] = s;
  }
  return true;
}

}  // namespace kiln::ops::attention
