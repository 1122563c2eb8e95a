// The CUDA data-movement family against the CPU reference: shuffle, concatenation, slice,
// padding, tile, expand, gather, select, reformat, resize, roi_align. Every parameter variant,
// several shapes (odd sizes, ranks 1..6), float types fp32/fp16/bf16 and the integer types for
// the element movers; channels-last where the kernels take it (reformat, resize, roi_align).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cuda/cuda_ops_test_util.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernel.h"
#include "kiln/float16.h"
#include "ops/op_table.h"

namespace {

using kiln::DataType;
using kiln::Dims;
using kiln::LayerParams;
using kiln::LayerType;
using kiln::makeDims;
using kiln::TensorFormat;
using kiln::testing::OpCase;
using kiln::testing::OpInput;

const std::vector<DataType> kAllFloats = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
const std::vector<DataType> kIntTypes = {DataType::kINT8, DataType::kINT32, DataType::kINT64,
                                         DataType::kBOOL};
const std::vector<TensorFormat> kBothFormats = {TensorFormat::kLINEAR,
                                                TensorFormat::kCHANNELS_LAST};

const char* typeTag(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
      return "f32";
    case DataType::kHALF:
      return "f16";
    case DataType::kBF16:
      return "bf16";
    case DataType::kINT8:
      return "i8";
    case DataType::kINT32:
      return "i32";
    case DataType::kINT64:
      return "i64";
    case DataType::kBOOL:
      return "bool";
  }
  return "?";
}

OpInput input(Dims d, DataType t = DataType::kFLOAT) {
  OpInput in;
  in.dims = d;
  in.type = t;
  in.intLo = t == DataType::kINT8 ? -128 : -1000;
  in.intHi = t == DataType::kINT8 ? 128 : 1000;
  return in;
}

OpCase opCase(std::string name, LayerType type, LayerParams params, std::vector<OpInput> inputs) {
  OpCase c;
  c.name = std::move(name);
  c.type = type;
  c.params = std::move(params);
  c.inputs = std::move(inputs);
  c.floatTypes = kAllFloats;
  return c;
}

// The element movers take every type: one case per float set and one per integer type, with the
// first input (the moved data) retyped.
void addMover(std::vector<OpCase>& out, const OpCase& base, size_t dataInputs = 1,
              size_t firstData = 0) {
  out.push_back(base);
  for (DataType t : kIntTypes) {
    OpCase c = base;
    c.name += std::string("_") + typeTag(t);
    c.floatTypes = {DataType::kFLOAT};
    for (size_t i = firstData; i < firstData + dataInputs; ++i) {
      const Dims d = c.inputs[i].dims;
      c.inputs[i] = input(d, t);
    }
    out.push_back(c);
  }
}

// ---------------------------------------------------------------------------------------------

void shuffleCases(std::vector<OpCase>& out) {
  auto perm = [](kiln::ShuffleParams& p, bool first, std::initializer_list<int32_t> v) {
    int32_t* dst = first ? p.firstTranspose : p.secondTranspose;
    (first ? p.hasFirstTranspose : p.hasSecondTranspose) = true;
    int i = 0;
    for (int32_t x : v) dst[i++] = x;
  };
  {
    kiln::ShuffleParams p;
    perm(p, true, {0, 2, 3, 1});
    addMover(out, opCase("shuffle_transpose_r4", LayerType::kSHUFFLE, p,
                         {input(makeDims({2, 3, 4, 5}))}));
  }
  {
    kiln::ShuffleParams p;
    p.hasReshape = true;
    p.reshapeDims = makeDims({0, -1});
    addMover(out, opCase("shuffle_reshape", LayerType::kSHUFFLE, p, {input(makeDims({2, 3, 7}))}));
  }
  {
    kiln::ShuffleParams p;
    perm(p, true, {3, 1, 0, 2});
    p.hasReshape = true;
    p.reshapeDims = makeDims({7, 15, 2});
    perm(p, false, {2, 0, 1});
    addMover(out, opCase("shuffle_both_transposes", LayerType::kSHUFFLE, p,
                         {input(makeDims({2, 3, 5, 7}))}));
  }
  {
    kiln::ShuffleParams p;
    perm(p, true, {0});
    perm(p, false, {0});
    addMover(out, opCase("shuffle_identity_r1", LayerType::kSHUFFLE, p, {input(makeDims({17}))}));
  }
  {
    kiln::ShuffleParams p;
    perm(p, true, {5, 4, 3, 2, 1, 0});
    addMover(out, opCase("shuffle_reverse_r6", LayerType::kSHUFFLE, p,
                         {input(makeDims({2, 1, 3, 2, 3, 2}))}));
  }
  {
    kiln::ShuffleParams p;
    p.hasReshape = true;
    p.reshapeDims = makeDims({3, 5, 2});
    perm(p, false, {1, 2, 0});
    addMover(out, opCase("shuffle_reshape_transpose", LayerType::kSHUFFLE, p,
                         {input(makeDims({6, 5}))}));
  }
  {
    // ViT's patch tokens (flatten(2).transpose(1, 2)): channels_last_copy takes the map in its
    // channels-last memory order as one plain copy.
    kiln::ShuffleParams p;
    p.hasReshape = true;
    p.reshapeDims = makeDims({0, 0, -1});
    perm(p, false, {0, 2, 1});
    OpCase c = opCase("shuffle_channels_last_tokens", LayerType::kSHUFFLE, p,
                      {input(makeDims({2, 6, 3, 5}))});
    c.formats = {TensorFormat::kLINEAR, TensorFormat::kCHANNELS_LAST};
    addMover(out, c);
  }
  // The fast tactics (permute_vectorized, tiled_transpose): attention-head permutes with runs
  // of 8 and of an odd 7 elements, size-1 axes from Unsqueeze, a QKV split, transposes of the
  // innermost axis over several tiles with ragged edges, and both copies of one plan.
  auto fast = [&](const char* name, Dims in, std::initializer_list<int32_t> first) {
    kiln::ShuffleParams p;
    perm(p, true, first);
    addMover(out, opCase(name, LayerType::kSHUFFLE, p, {input(in)}));
  };
  fast("shuffle_heads_run8", makeDims({2, 5, 3, 8}), {0, 2, 1, 3});
  fast("shuffle_heads_run7", makeDims({3, 5, 2, 7}), {0, 2, 1, 3});
  fast("shuffle_size1_axes", makeDims({2, 1, 3, 1, 5}), {2, 1, 0, 4, 3});
  fast("shuffle_only_size1_moves", makeDims({4, 1, 6}), {1, 0, 2});
  fast("shuffle_qkv_split", makeDims({5, 2, 3, 12}), {2, 0, 1, 3});
  fast("shuffle_trailing_size1_transpose", makeDims({3, 4, 1}), {1, 0, 2});
  fast("shuffle_transpose_2d", makeDims({65, 33}), {1, 0});
  fast("shuffle_transpose_batched", makeDims({3, 70, 40}), {0, 2, 1});
  fast("shuffle_transpose_r4_mixed", makeDims({2, 3, 33, 5}), {3, 1, 0, 2});
  {
    kiln::ShuffleParams p;
    perm(p, true, {0, 2, 1, 3});
    p.hasReshape = true;
    p.reshapeDims = makeDims({2, 7, 9});
    perm(p, false, {0, 2, 1});
    addMover(out, opCase("shuffle_both_run_then_transpose", LayerType::kSHUFFLE, p,
                         {input(makeDims({2, 3, 7, 3}))}));
  }
  {
    // Reshape dims from a second input's dims (dynamic exports): [30] to [2, 3, 5] by the dims of
    // a [3, 2] source, then transposed; the source's data is never read.
    kiln::ShuffleParams p;
    p.hasReshape = true;
    p.reshapeDims = makeDims({1, 1, -1});
    p.reshapeDimsOf[0] = 2;
    p.reshapeDimsOf[1] = 1;
    perm(p, false, {2, 0, 1});
    addMover(out, opCase("shuffle_reshape_dims_of_source", LayerType::kSHUFFLE, p,
                         {input(makeDims({30})), input(makeDims({3, 2}))}));
  }
}

void concatCases(std::vector<OpCase>& out) {
  auto c3 = [&](const char* name, int32_t axis, std::vector<Dims> dims) {
    kiln::ConcatenationParams p;
    p.axis = axis;
    std::vector<OpInput> ins;
    for (const Dims& d : dims) ins.push_back(input(d));
    addMover(out, opCase(name, LayerType::kCONCATENATION, p, ins), dims.size());
  };
  c3("concat_axis0", 0, {makeDims({2, 3, 5}), makeDims({1, 3, 5}), makeDims({4, 3, 5})});
  c3("concat_axis1", 1, {makeDims({2, 3, 5}), makeDims({2, 1, 5}), makeDims({2, 7, 5})});
  c3("concat_axis_neg1", -1, {makeDims({3, 2, 3}), makeDims({3, 2, 5})});
  c3("concat_r1", 0, {makeDims({5}), makeDims({11}), makeDims({1})});
  c3("concat_r5_axis2", 2, {makeDims({2, 1, 3, 2, 3}), makeDims({2, 1, 4, 2, 3})});
  c3("concat_empty_part", 1, {makeDims({2, 0, 3}), makeDims({2, 4, 3})});
  c3("concat_single", 0, {makeDims({3, 5})});
  // Runs of whole 16-byte vectors in every float type (the vectorized tactic): ViT's class token
  // before its patch tokens, and runs of one FP16 vector beside longer ones.
  c3("concat_class_token", 1, {makeDims({3, 1, 64}), makeDims({3, 9, 64})});
  c3("concat_vector_runs", 1, {makeDims({2, 1, 8}), makeDims({2, 3, 8}), makeDims({2, 2, 8})});
}

void sliceCases(std::vector<OpCase>& out) {
  auto s = [&](const char* name, Dims in, Dims starts, Dims steps, Dims outDims) {
    kiln::SliceParams p;
    p.starts = starts;
    p.steps = steps;
    p.outputDims = outDims;
    addMover(out, opCase(name, LayerType::kSLICE, p, {input(in)}));
  };
  s("slice_r2_mixed_steps", makeDims({7, 9}), makeDims({1, 8}), makeDims({2, -3}),
    makeDims({3, 3}));
  s("slice_r4", makeDims({2, 5, 6, 7}), makeDims({0, 4, 0, 6}), makeDims({1, -1, 3, -2}),
    makeDims({2, 5, 2, 4}));
  s("slice_r1_reverse", makeDims({13}), makeDims({12}), makeDims({-1}), makeDims({13}));
  s("slice_r1_stride", makeDims({13}), makeDims({2}), makeDims({4}), makeDims({3}));
  // -1: to the end of the axis (dynamic exports' x[1::2, :, 3:]).
  s("slice_to_the_end", makeDims({5, 9, 10}), makeDims({1, 0, 3}), makeDims({2, 1, 1}),
    makeDims({-1, -1, -1}));
  s("slice_r6", makeDims({3, 2, 4, 3, 2, 5}), makeDims({1, 0, 3, 0, 1, 1}),
    makeDims({1, 1, -2, 2, 1, 2}), makeDims({2, 2, 2, 2, 1, 2}));
  s("slice_r3_empty", makeDims({3, 4, 5}), makeDims({0, 0, 0}), makeDims({1, 1, 1}),
    makeDims({3, 0, 5}));
  // runs_vectorized: odd runs at odd offsets, whole rows that collapse into one run, a reversed
  // outer axis, a run of one element (declined), and rows of 16 bytes in fp16 at an offset.
  s("slice_runs_odd", makeDims({4, 6, 10}), makeDims({1, 0, 2}), makeDims({1, 2, 1}),
    makeDims({2, 3, 7}));
  s("slice_runs_whole_rows", makeDims({3, 8, 16}), makeDims({1, 0, 0}), makeDims({1, 1, 1}),
    makeDims({2, 8, 16}));
  s("slice_runs_reversed_outer", makeDims({5, 12}), makeDims({4, 4}), makeDims({-2, 1}),
    makeDims({3, 8}));
  s("slice_runs_column", makeDims({7, 9}), makeDims({0, 3}), makeDims({1, 1}), makeDims({7, 1}));
  s("slice_runs_size1_axes", makeDims({1, 6, 1, 24}), makeDims({0, 2, 0, 8}),
    makeDims({1, 1, 1, 1}), makeDims({1, 3, 1, 16}));
}

void paddingCases(std::vector<OpCase>& out) {
  auto pad = [&](std::string name, kiln::PaddingMode mode, float value, Dims in,
                 std::vector<int64_t> before, std::vector<int64_t> after) {
    kiln::PaddingParams p;
    p.mode = mode;
    p.value = value;
    for (size_t i = 0; i < before.size(); ++i) {
      p.before[i] = before[i];
      p.after[i] = after[i];
    }
    addMover(out, opCase(std::move(name), LayerType::kPADDING, p, {input(in)}));
  };
  const std::pair<kiln::PaddingMode, const char*> modes[] = {
      {kiln::PaddingMode::kCONSTANT, "constant"},
      {kiln::PaddingMode::kREFLECT, "reflect"},
      {kiln::PaddingMode::kEDGE, "edge"}};
  for (auto [mode, tag] : modes) {
    const std::string m = std::string("padding_") + tag;
    pad(m + "_r1", mode, 1.5f, makeDims({7}), {3}, {2});
    pad(m + "_r2", mode, -2.75f, makeDims({5, 6}), {1, 0}, {4, 5});
    pad(m + "_r4", mode, 0.25f, makeDims({2, 3, 4, 5}), {0, 1, 2, 3}, {1, 2, 3, 0});
    pad(m + "_r5", mode, 3.f, makeDims({2, 3, 2, 3, 4}), {1, 2, 1, 0, 3}, {0, 1, 1, 2, 1});
  }
  // Constant values that saturate or truncate in integer types.
  pad("padding_constant_huge", kiln::PaddingMode::kCONSTANT, -1e20f, makeDims({3, 4}), {1, 2},
      {2, 1});
  pad("padding_constant_big", kiln::PaddingMode::kCONSTANT, 300.7f, makeDims({3, 4}), {1, 2},
      {2, 1});
}

void tileExpandCases(std::vector<OpCase>& out) {
  auto tile = [&](const char* name, Dims in, Dims repeats) {
    kiln::TileParams p;
    p.repeats = repeats;
    addMover(out, opCase(name, LayerType::kTILE, p, {input(in)}));
  };
  tile("tile_r1", makeDims({5}), makeDims({3}));
  tile("tile_r3", makeDims({2, 3, 4}), makeDims({2, 1, 3}));
  tile("tile_r5", makeDims({1, 2, 3, 1, 2}), makeDims({3, 2, 1, 4, 2}));
  tile("tile_zero_repeat", makeDims({2, 3}), makeDims({0, 2}));
  auto expand = [&](const char* name, Dims in, Dims shape) {
    kiln::ExpandParams p;
    p.shape = shape;
    addMover(out, opCase(name, LayerType::kEXPAND, p, {input(in)}));
  };
  expand("expand_lower_rank_input", makeDims({3, 1}), makeDims({2, 1, 4}));
  expand("expand_scalar_like", makeDims({1}), makeDims({5, 3}));
  expand("expand_r4", makeDims({2, 1, 3, 1}), makeDims({2, 4, 3, 5}));
  expand("expand_lower_rank_shape", makeDims({4, 1, 6}), makeDims({5, 1}));
  expand("expand_r6", makeDims({1, 3, 1, 2, 1, 1}), makeDims({2, 3, 2, 2, 1, 3}));
  expand("expand_identity", makeDims({3, 4}), makeDims({3, 4}));
}

void gatherCases(std::vector<OpCase>& out) {
  auto g = [&](const char* name, int32_t axis, Dims data, Dims indices, DataType indexType,
               int64_t lo, int64_t hi) {
    kiln::GatherParams p;
    p.axis = axis;
    OpInput idx = input(indices, indexType);
    idx.intLo = lo;
    idx.intHi = hi;
    addMover(out, opCase(name, LayerType::kGATHER, p, {input(data), idx}));
  };
  g("gather_axis0_i32", 0, makeDims({5, 4, 3}), makeDims({2, 3}), DataType::kINT32, -5, 5);
  g("gather_axis1_i64", 1, makeDims({5, 4, 3}), makeDims({7}), DataType::kINT64, -4, 4);
  g("gather_axis_neg1_scalar_index", -1, makeDims({3, 2, 7}), Dims{}, DataType::kINT32, -7, 7);
  g("gather_r1", 0, makeDims({11}), makeDims({4, 2}), DataType::kINT64, -11, 11);
  g("gather_r5_axis3", 3, makeDims({2, 1, 3, 5, 2}), makeDims({3}), DataType::kINT32, -5, 5);
  // slab_vectorized: torch's MHA q/k/v pick (a scalar index on axis 0 of [3, B, S, E]), slabs of
  // odd lengths, size-1 axes.
  g("gather_qkv_pick", 0, makeDims({3, 2, 5, 8}), Dims{}, DataType::kINT64, -3, 3);
  g("gather_slab_odd", 1, makeDims({2, 5, 3, 7}), makeDims({4}), DataType::kINT32, -5, 5);
  g("gather_slab_size1", 1, makeDims({3, 4, 1, 6}), makeDims({2, 2}), DataType::kINT64, -4, 4);
}

// ScatterND: every reduction on floats, the integer types with their reductions and the moved
// types without; repeated tuples (a small index range over many tuples) check the tuple order.
void scatterNdCases(std::vector<OpCase>& out) {
  auto sc = [&](const std::string& name, kiln::ScatterReduction r, Dims data, Dims indices,
                Dims updates, int64_t lo, int64_t hi) {
    kiln::ScatterNDParams p;
    p.reduction = r;
    OpInput idx = input(indices, DataType::kINT64);
    idx.intLo = lo;
    idx.intHi = hi;
    OpCase base =
        opCase(name.c_str(), LayerType::kSCATTER_ND, p, {input(data), idx, input(updates)});
    out.push_back(base);
    for (DataType t : kIntTypes) {
      const bool arithmetic = t == DataType::kINT32 || t == DataType::kINT64;
      if (r != kiln::ScatterReduction::kNONE && !arithmetic) continue;
      OpCase c = base;
      c.name += std::string("_") + typeTag(t);
      c.floatTypes = {DataType::kFLOAT};
      c.inputs[0] = input(data, t);
      c.inputs[2] = input(updates, t);
      out.push_back(c);
    }
  };
  const char* names[] = {"none", "add", "mul", "max", "min"};
  for (int r = 0; r < 5; ++r) {
    const auto red = static_cast<kiln::ScatterReduction>(r);
    sc(std::string("scatter_nd_") + names[r] + "_slices", red, makeDims({4, 5, 6}),
       makeDims({3, 2}), makeDims({3, 6}), -4, 4);
    sc(std::string("scatter_nd_") + names[r] + "_repeated_elements", red, makeDims({3, 4}),
       makeDims({2, 3, 2}), makeDims({2, 3}), -3, 3);
  }
  sc("scatter_nd_whole_rows", kiln::ScatterReduction::kNONE, makeDims({6, 3, 2}), makeDims({2, 1}),
     makeDims({2, 3, 2}), -6, 6);
}

void selectCases(std::vector<OpCase>& out) {
  auto s = [&](const char* name, Dims c, Dims x, Dims y) {
    addMover(out,
             opCase(name, LayerType::kSELECT, kiln::SelectParams{},
                    {input(c, DataType::kBOOL), input(x), input(y)}),
             2, 1);
  };
  s("select_same_shape", makeDims({3, 5}), makeDims({3, 5}), makeDims({3, 5}));
  s("select_broadcast_all", makeDims({4, 1, 5}), makeDims({3, 1}), makeDims({4, 3, 5}));
  s("select_scalar_xy", makeDims({2, 3, 4}), makeDims({1}), Dims{});
  s("select_r6", makeDims({2, 1, 3, 1, 2, 1}), makeDims({1, 2, 1, 2, 1, 3}),
    makeDims({3, 1, 2, 3}));
  s("select_r1", makeDims({9}), makeDims({9}), makeDims({1}));
}

void reformatCases(std::vector<OpCase>& out) {
  auto r = [&](std::string name, Dims d, DataType in, DataType to, TensorFormat outFormat,
               std::vector<TensorFormat> formats, bool followsFormat = true) {
    kiln::ReformatParams p;
    p.outputType = to;
    p.outputFormat = outFormat;
    OpInput x = input(d, in);
    x.followsFormat = followsFormat;
    if (in == DataType::kFLOAT) {  // large enough to saturate int32
      x.floatLo = -5e9f;
      x.floatHi = 5e9f;
    }
    if (in == DataType::kINT64 || in == DataType::kINT32) {
      x.intLo = in == DataType::kINT64 ? -(int64_t{1} << 40) : -2000000000;
      x.intHi = -x.intLo;
    }
    OpCase c = opCase(std::move(name), LayerType::kREFORMAT, p, {x});
    c.floatTypes = {DataType::kFLOAT};
    c.formats = std::move(formats);
    out.push_back(c);
  };
  const Dims d4 = makeDims({2, 3, 5, 7});
  const Dims d3 = makeDims({3, 5, 7});
  const std::vector<TensorFormat> lin = {TensorFormat::kLINEAR};
  const std::vector<TensorFormat> cl = {TensorFormat::kCHANNELS_LAST};
  // Float <-> float: the variant's float type in, every float type out, same format both sides.
  // The harness's CPU reference always writes a linear output, so reformats that make a
  // channels-last tensor are checked by the direct tests at the end of this file.
  for (DataType to : kAllFloats) {
    for (TensorFormat f : {TensorFormat::kLINEAR}) {
      OpCase c;
      kiln::ReformatParams p;
      p.outputType = to;
      p.outputFormat = f;
      // Values stay in [-1, 1): an infinity in the expected output would make the harness's
      // scale-relative tolerance meaningless.
      OpInput x = input(d4);
      c = opCase(std::string("reformat_float_to_") + typeTag(to) +
                     (f == TensorFormat::kLINEAR ? "_linear" : "_channels_last"),
                 LayerType::kREFORMAT, p, {x});
      c.formats = {f};
      out.push_back(c);
    }
    OpCase c3 =
        opCase(std::string("reformat_float_to_") + typeTag(to) + "_r3", LayerType::kREFORMAT,
               kiln::ReformatParams{to, TensorFormat::kLINEAR}, {input(d3)});
    out.push_back(c3);
  }
  // fp32 <-> int32/int64/bool, with format changes (integers stay linear in the harness).
  for (DataType t : {DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    const std::string tag = typeTag(t);
    r("reformat_f32_to_" + tag, d3, DataType::kFLOAT, t, TensorFormat::kLINEAR, lin);
    r("reformat_f32_cl_to_" + tag + "_linear", d4, DataType::kFLOAT, t, TensorFormat::kLINEAR, cl);
    r("reformat_" + tag + "_to_f32", d3, t, DataType::kFLOAT, TensorFormat::kLINEAR, lin);
    r("reformat_" + tag + "_to_f32_r4_linear", d4, t, DataType::kFLOAT, TensorFormat::kLINEAR, lin);
  }
  // Integers among themselves (saturating), bool included.
  for (DataType from : kIntTypes)
    for (DataType to : kIntTypes)
      r(std::string("reformat_") + typeTag(from) + "_to_" + typeTag(to), d4, from, to,
        TensorFormat::kLINEAR, lin);
  // Channels-last between identical integer layouts needs rank 4 (the harness keeps integer
  // tensors linear, so this is linear -> linear of rank 4; covered above) and a rank-1 copy.
  r("reformat_i32_to_i64_r1", makeDims({17}), DataType::kINT32, DataType::kINT64,
    TensorFormat::kLINEAR, lin);
}

void resizeCases(std::vector<OpCase>& out) {
  using kiln::ResizeCoordinates;
  using kiln::ResizeMode;
  using kiln::ResizeRounding;
  const std::pair<ResizeCoordinates, const char*> coords[] = {
      {ResizeCoordinates::kHALF_PIXEL, "half_pixel"},
      {ResizeCoordinates::kASYMMETRIC, "asymmetric"},
      {ResizeCoordinates::kALIGN_CORNERS, "align_corners"},
      {ResizeCoordinates::kPYTORCH_HALF_PIXEL, "pytorch_half_pixel"},
      {ResizeCoordinates::kTF_HALF_PIXEL_FOR_NN, "tf_half_pixel_for_nn"}};
  const std::pair<ResizeRounding, const char*> roundings[] = {
      {ResizeRounding::kROUND_PREFER_FLOOR, "round_prefer_floor"},
      {ResizeRounding::kROUND_PREFER_CEIL, "round_prefer_ceil"},
      {ResizeRounding::kFLOOR, "floor"},
      {ResizeRounding::kCEIL, "ceil"}};
  auto make = [&](std::string name, ResizeMode mode, ResizeCoordinates co, ResizeRounding ro,
                  Dims in, Dims outDims, std::vector<float> scales) {
    kiln::ResizeParams p;
    p.mode = mode;
    p.coordinates = co;
    p.rounding = ro;
    p.outputDims = outDims;
    for (size_t i = 0; i < scales.size(); ++i) p.scales[i] = scales[i];
    OpCase c = opCase(std::move(name), LayerType::kRESIZE, p, {input(in)});
    if (in.nbDims == 4) c.formats = kBothFormats;
    out.push_back(c);
  };
  for (auto [co, ctag] : coords) {
    for (auto [ro, rtag] : roundings) {
      const std::string n = std::string("resize_nearest_") + ctag + "_" + rtag;
      // Exact factors 2 and 3 up (ties for the roundings), and an odd factor down.
      make(n + "_up", ResizeMode::kNEAREST, co, ro, makeDims({1, 2, 5, 4}),
           makeDims({1, 2, 10, 12}), {1, 1, 2, 3});
      make(n + "_down_sizes", ResizeMode::kNEAREST, co, ro, makeDims({2, 3, 9, 7}),
           makeDims({2, 3, 4, 5}), {});
    }
    const std::string n = std::string("resize_linear_") + ctag;
    make(n + "_up", ResizeMode::kLINEAR, co, ResizeRounding::kROUND_PREFER_FLOOR,
         makeDims({1, 2, 5, 4}), makeDims({1, 2, 10, 12}), {1, 1, 2, 3});
    make(n + "_mixed_sizes", ResizeMode::kLINEAR, co, ResizeRounding::kROUND_PREFER_FLOOR,
         makeDims({2, 3, 9, 4}), makeDims({2, 3, 4, 7}), {});
    make(n + "_scales", ResizeMode::kLINEAR, co, ResizeRounding::kROUND_PREFER_FLOOR,
         makeDims({1, 1, 6, 5}), makeDims({1, 1, 10, 3}), {1, 1, 1.7f, 0.6f});
    make(n + "_r3_all_axes", ResizeMode::kLINEAR, co, ResizeRounding::kROUND_PREFER_FLOOR,
         makeDims({3, 4, 5}), makeDims({5, 7, 3}), {});
    make(n + "_r1", ResizeMode::kLINEAR, co, ResizeRounding::kROUND_PREFER_FLOOR, makeDims({6}),
         makeDims({13}), {});
    make(std::string("resize_nearest_") + ctag + "_r5", ResizeMode::kNEAREST, co,
         ResizeRounding::kROUND_PREFER_CEIL, makeDims({2, 3, 2, 3, 4}), makeDims({3, 3, 5, 2, 6}),
         {});
  }
}

void roiAlignCases(std::vector<OpCase>& out) {
  struct Variant {
    const char* name;
    kiln::RoiAlignMode mode;
    int32_t ratio;
    bool halfPixel;
    float scale;
    int32_t oh, ow;
  };
  const Variant variants[] = {
      {"avg_adaptive_half_pixel", kiln::RoiAlignMode::kAVERAGE, 0, true, 1.f, 3, 4},
      {"avg_ratio2_output_half_pixel", kiln::RoiAlignMode::kAVERAGE, 2, false, 0.5f, 2, 3},
      {"max_adaptive_half_pixel", kiln::RoiAlignMode::kMAX, 0, true, 0.5f, 3, 2},
      {"max_ratio3_output_half_pixel", kiln::RoiAlignMode::kMAX, 3, false, 1.f, 2, 2},
      {"avg_adaptive_1x1", kiln::RoiAlignMode::kAVERAGE, 0, false, 1.f, 1, 1},
      {"max_ratio1_5x4", kiln::RoiAlignMode::kMAX, 1, true, 0.75f, 5, 4},
  };
  for (const Variant& v : variants) {
    for (DataType idxType : {DataType::kINT32, DataType::kINT64}) {
      kiln::RoiAlignParams p;
      p.mode = v.mode;
      p.samplingRatio = v.ratio;
      p.halfPixel = v.halfPixel;
      p.spatialScale = v.scale;
      p.outputHeight = v.oh;
      p.outputWidth = v.ow;
      OpInput x = input(makeDims({2, 3, 10, 12}));
      OpInput rois = input(makeDims({6, 4}));
      rois.floatLo = -2.f;  // some rois partly outside the map, some with x1 > x2
      rois.floatHi = 14.f;
      rois.edgeValues = false;  // the CPU refuses a non-finite roi; the GPU writes zeros
      OpInput idx = input(makeDims({6}), idxType);
      idx.intLo = 0;
      idx.intHi = 2;
      OpCase c = opCase(std::string("roi_align_") + v.name + "_" + typeTag(idxType),
                        LayerType::kROI_ALIGN, p, {x, rois, idx});
      c.formats = kBothFormats;
      out.push_back(c);
    }
  }
}

void triluCases(std::vector<OpCase>& out) {
  auto trilu = [&](const char* name, Dims in, bool upper, int64_t k) {
    addMover(out, opCase(name, LayerType::kTRILU, kiln::TriluParams{upper, k}, {input(in)}));
  };
  trilu("trilu_upper", makeDims({5, 7}), true, 0);
  trilu("trilu_lower_batched", makeDims({2, 3, 6, 4}), false, 0);
  trilu("trilu_upper_above", makeDims({3, 5, 5}), true, 2);
  trilu("trilu_lower_below", makeDims({4, 6}), false, -3);
  trilu("trilu_k_past_the_matrix", makeDims({2, 3, 4}), true, 9);
  trilu("trilu_one_row", makeDims({3, 1, 5}), false, -1);
}

void rangeCases(std::vector<OpCase>& out) {
  // Lengths from the dims source (its data never read), values of every output type.
  auto range = [&](const char* name, DataType type, double start, double delta, Dims source,
                   int32_t lengthOf) {
    kiln::RangeParams p;
    p.type = type;
    p.start = start;
    p.delta = delta;
    p.lengthOf = lengthOf;
    out.push_back(opCase(name, LayerType::kRANGE, p, {input(source)}));
  };
  range("range_int64_position_ids", DataType::kINT64, 0, 1, makeDims({2, 37}), 2);
  range("range_int32_negative_delta", DataType::kINT32, 40, -3, makeDims({13}), 1);
  range("range_float", DataType::kFLOAT, -1.5, 0.25, makeDims({3, 4, 300}), 3);
  range("range_empty", DataType::kINT64, 5, 1, makeDims({0, 3}), 1);
  // Shape: dims 1..3 of its input (whose data is never read), and all of a rank-1 one.
  kiln::ShapeParams dims;
  dims.start = 1;
  dims.end = 3;
  out.push_back(
      opCase("shape_middle_dims", LayerType::kSHAPE, dims, {input(makeDims({2, 7, 5, 3}))}));
  out.push_back(
      opCase("shape_all_dims", LayerType::kSHAPE, kiln::ShapeParams{}, {input(makeDims({9}))}));
}

// Slice and Expand with dims from a second input (dynamic exports): GPT-2's mask buffer sliced to
// the sequence, a causal mask's ConstantOfShape([S, S]).
void dimsOfSourceCases(std::vector<OpCase>& out) {
  {
    kiln::SliceParams p;
    p.starts = makeDims({0, 1});
    p.steps = makeDims({1, 1});
    p.outputDims = makeDims({1, 3});
    p.outputDimsOf[0] = 2;
    addMover(out, opCase("slice_output_dims_of_source", LayerType::kSLICE, p,
                         {input(makeDims({10, 4})), input(makeDims({2, 6}))}));
  }
  {
    // x[:, 1:-2:2]: to the end of axis 1 less two (SliceParams::beforeEnd).
    kiln::SliceParams p;
    p.starts = makeDims({0, 1});
    p.steps = makeDims({1, 2});
    p.outputDims = makeDims({-1, -1});
    p.beforeEnd[1] = 2;
    addMover(out, opCase("slice_before_the_end", LayerType::kSLICE, p, {input(makeDims({3, 11}))}));
  }
  {
    // x[-3:, ::-1]: starts counted from the end (SliceParams::startFromEnd), the second axis
    // reversed down to element 0.
    kiln::SliceParams p;
    p.starts = makeDims({0, 0});
    p.steps = makeDims({1, -1});
    p.outputDims = makeDims({-1, -1});
    p.startFromEnd[0] = 3;
    p.startFromEnd[1] = 1;
    addMover(out, opCase("slice_from_the_end", LayerType::kSLICE, p, {input(makeDims({5, 11}))}));
  }
  {
    kiln::ExpandParams p;
    p.shape = makeDims({1, 1});
    p.shapeDimsOf[0] = 2;
    p.shapeDimsOf[1] = 2;
    addMover(out, opCase("expand_shape_dims_of_source", LayerType::kEXPAND, p,
                         {input(makeDims({1, 1})), input(makeDims({3, 7}))}));
    p.shapeDimsOf[0] = 0;
    addMover(out, opCase("expand_one_shape_dim_of_source", LayerType::kEXPAND, p,
                         {input(makeDims({2, 1})), input(makeDims({3, 5}))}));
  }
}

std::vector<OpCase> dataMovementCases() {
  std::vector<OpCase> out;
  shuffleCases(out);
  concatCases(out);
  sliceCases(out);
  paddingCases(out);
  tileExpandCases(out);
  gatherCases(out);
  scatterNdCases(out);
  selectCases(out);
  reformatCases(out);
  resizeCases(out);
  roiAlignCases(out);
  triluCases(out);
  rangeCases(out);
  dimsOfSourceCases(out);
  return out;
}

}  // namespace

KILN_CUDA_OP_CASES(DataMovement, dataMovementCases);

// ---------------------------------------------------------------------------------------------
// Reformats that write channels-last. The harness compares with a CPU reference that writes a
// linear output, so these compare directly with the CPU reformat run with the same formats:
// byte for byte, every CUDA reformat tactic, emulated here and on the GPU where there is one.

namespace {

// Float values where conversions go wrong: signed zeros, infinities, NaN, the edges of fp16's
// and bf16's range (65504 is fp16's largest, 65520 the first value that rounds to infinity),
// fp16 subnormals, fp32 denormals, ties and int32's limits.
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kEdgeFloats[] = {0.f,
                                 -0.f,
                                 kInf,
                                 -kInf,
                                 std::numeric_limits<float>::quiet_NaN(),
                                 65504.f,
                                 65519.f,
                                 65520.f,
                                 -70000.f,
                                 5.96e-8f,
                                 -2.98e-8f,
                                 6.1e-5f,
                                 1e-40f,
                                 -1e-45f,
                                 3.39e38f,
                                 -3.4028235e38f,
                                 2.5f,
                                 -0.5f,
                                 1.00048828f,
                                 2147483520.f,
                                 -2147483648.f,
                                 4294967296.f,
                                 1.5e-5f,
                                 -65504.f};

std::vector<uint8_t> randomBytes(DataType t, int64_t count, std::mt19937& rng, bool edges) {
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * kiln::dataTypeSize(t));
  std::uniform_real_distribution<float> real(-3.f, 3.f);
  std::uniform_int_distribution<int64_t> integer(-100000, 100000);
  // With `edges`, every other float is the next edge value in turn (so a tensor of 48 or more
  // elements holds each), the rest stay random.
  auto value = [&](int64_t e) {
    return edges && e % 2 == 0 ? kEdgeFloats[(e / 2) % std::size(kEdgeFloats)] : real(rng);
  };
  for (int64_t e = 0; e < count; ++e) {
    uint8_t* p = bytes.data() + e * kiln::dataTypeSize(t);
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (t) {
      case DataType::kFLOAT:
        put(value(e));
        break;
      case DataType::kHALF:
        put(kiln::floatToHalf(value(e)));
        break;
      case DataType::kBF16:
        put(kiln::floatToBf16(value(e)));
        break;
      case DataType::kINT8:
        put(static_cast<int8_t>(integer(rng)));
        break;
      case DataType::kINT32:
        put(static_cast<int32_t>(integer(rng)));
        break;
      case DataType::kINT64:
        put(integer(rng) * 3000000);
        break;
      case DataType::kBOOL:
        put(static_cast<uint8_t>(integer(rng) & 1));
        break;
    }
  }
  return bytes;
}

struct ReformatCase {
  DataType from, to;
  TensorFormat inFormat, outFormat;
};

std::vector<ReformatCase> channelsLastReformats() {
  const TensorFormat L = TensorFormat::kLINEAR, C = TensorFormat::kCHANNELS_LAST;
  std::vector<ReformatCase> cases;
  for (DataType a : kAllFloats)
    for (DataType b : kAllFloats)
      for (auto [fi, fo] : {std::pair{L, C}, std::pair{C, L}, std::pair{C, C}})
        cases.push_back({a, b, fi, fo});
  for (DataType t : {DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    cases.push_back({DataType::kFLOAT, t, L, C});
    cases.push_back({t, DataType::kFLOAT, L, C});
    cases.push_back({t, DataType::kFLOAT, C, L});
  }
  for (DataType a : kIntTypes)
    for (DataType b : kIntTypes) cases.push_back({a, b, L, C});
  return cases;
}

bool isNan(DataType t, const uint8_t* p) {
  switch (t) {
    case DataType::kFLOAT: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return std::isnan(v);
    }
    case DataType::kHALF: {
      uint16_t h;
      std::memcpy(&h, p, sizeof h);
      return std::isnan(kiln::halfToFloat(h));
    }
    case DataType::kBF16: {
      uint16_t b;
      std::memcpy(&b, p, sizeof b);
      return std::isnan(kiln::bf16ToFloat(b));
    }
    default:
      return false;
  }
}

// Whether element e of the two outputs agrees: the same bytes, or both NaN. NaN payloads are not
// compared: the CPU keeps the input's quiet NaN (0x7fc00000 -> 0x7e00), CUDA's conversions give
// their canonical NaN (0x7fff, 0x7fffffff), and neither IEEE 754 nor ONNX fixes a payload.
bool sameElement(DataType t, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                 size_t e) {
  const size_t size = kiln::dataTypeSize(t);
  if (std::memcmp(&got[e * size], &want[e * size], size) == 0) return true;
  return isNan(t, &got[e * size]) && isNan(t, &want[e * size]);
}

// Where two reformat outputs first differ: the element, both encodings and the input's bytes.
// Empty when every element agrees.
std::string firstDifference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                            const ReformatCase& rc, const std::vector<uint8_t>& in) {
  const size_t outSize = kiln::dataTypeSize(rc.to), inSize = kiln::dataTypeSize(rc.from);
  for (size_t e = 0; e * outSize < got.size(); ++e) {
    if (sameElement(rc.to, got, want, e)) continue;
    auto hex = [](const uint8_t* p, size_t n) {
      std::string h;
      char buf[3];
      for (size_t i = n; i-- > 0;) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        h += buf;
      }
      return h;
    };
    // The input element behind output element e depends on the two formats; show the candidate
    // at the same flat index, which is right whenever the formats match.
    std::string at = " (output element " + std::to_string(e) + ": got 0x" +
                     hex(&got[e * outSize], outSize) + ", CPU 0x" +
                     hex(&want[e * outSize], outSize);
    if (rc.inFormat == rc.outFormat && (e + 1) * inSize <= in.size())
      at += ", input 0x" + hex(&in[e * inSize], inSize);
    return at + ")";
  }
  return got.size() == want.size() ? "" : " (the outputs' sizes differ)";
}

void checkChannelsLastReformats(bool device, bool edges) {
  std::mt19937 rng(std::random_device{}());
  const Dims dims = makeDims({2, 5, 3, 7});
  const int64_t count = kiln::volume(dims);
  int ran = 0;
  for (const ReformatCase& rc : channelsLastReformats()) {
    const std::string what = std::string(typeTag(rc.from)) + " " + kiln::formatName(rc.inFormat) +
                             " -> " + typeTag(rc.to) + " " + kiln::formatName(rc.outFormat);
    SCOPED_TRACE(what);
    kiln::KernelConfig config;
    config.type = LayerType::kREFORMAT;
    config.params = kiln::ReformatParams{rc.to, rc.outFormat};
    config.inputs = {{dims, rc.from, rc.inFormat, kiln::DeviceKind::kCPU}};
    config.outputs = {{dims, rc.to, rc.outFormat, kiln::DeviceKind::kCPU}};
    config.constantInputs = {nullptr};
    const std::vector<uint8_t> in = randomBytes(rc.from, count, rng, edges);
    const size_t outBytes = static_cast<size_t>(count) * kiln::dataTypeSize(rc.to);
    std::vector<uint8_t> want(outBytes, 0xAB);
    {
      std::string why;
      auto cpu = kiln::ops::cpuTactics(LayerType::kREFORMAT).back().create(config, &why);
      ASSERT_TRUE(cpu) << why;
      std::vector<uint8_t> ws(cpu->workspaceSize() + 64);
      const void* ins[] = {in.data()};
      void* outs[] = {want.data()};
      ASSERT_TRUE(cpu->run(ins, outs, ws.data(), {}).isOk());
    }
    config.inputs[0].device = kiln::DeviceKind::kCUDA;
    config.outputs[0].device = kiln::DeviceKind::kCUDA;
    bool accepted = false;
    for (const kiln::Tactic& tactic : kiln::ops::cudaTactics(LayerType::kREFORMAT)) {
      std::string why;
      auto kernel = tactic.create(config, &why);
      if (!kernel) continue;
      accepted = true;
      std::vector<uint8_t> got(outBytes, 0xCD);
      kiln::Status s = kiln::Status::ok();
      if (!device) {
        std::vector<uint8_t> ws(kernel->workspaceSize() + 256);
        const void* ins[] = {in.data()};
        void* outs[] = {got.data()};
        kiln::cuda::RunContext ctx;
        ctx.emulate = true;
        s = kernel->run(ins, outs, ws.data(), ctx);
        if (s.code() == kiln::StatusCode::kUnsupported) continue;
      } else {
        kiln::cuda::DeviceBuffer dIn, dOut, dWork;
        kiln::cuda::StreamHandle stream;
        s = stream.create();
        if (s) s = dIn.allocate(in.size(), "input");
        if (s) s = dOut.allocate(outBytes, "output");
        if (s) s = dWork.allocate(kernel->workspaceSize() + 256, "workspace");
        if (s) s = kiln::cuda::copyToDevice(dIn.data(), in.data(), in.size());
        kiln::cuda::RunContext ctx;
        ctx.stream = stream.get();
        const void* ins[] = {dIn.data()};
        void* outs[] = {dOut.data()};
        if (s) s = kernel->run(ins, outs, dWork.data(), ctx);
        if (s) s = kiln::cuda::synchronize(stream.get());
        if (s) s = kiln::cuda::copyToHost(got.data(), dOut.data(), outBytes);
      }
      ASSERT_TRUE(s.isOk()) << tactic.name << ": " << s.message();
      ++ran;
      const std::string difference = firstDifference(got, want, rc, in);
      EXPECT_TRUE(difference.empty())
          << "tactic " << tactic.name << " differs from the CPU reformat" << difference;
    }
    EXPECT_TRUE(accepted) << "no CUDA reformat tactic accepts " << what;
  }
  EXPECT_GT(ran, 0);
}

}  // namespace

TEST(DataMovementReformatChannelsLast, Emulated) { checkChannelsLastReformats(false, false); }

TEST(DataMovementReformatChannelsLast, Device) {
  const std::string why = kiln::testing::deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  checkChannelsLastReformats(true, false);
}

// The same conversions on edge values (infinities, NaN, overflow to fp16's infinity, subnormals,
// int32 saturation), compared byte for byte with the CPU reformat.
TEST(DataMovementReformatEdgeValues, Emulated) { checkChannelsLastReformats(false, true); }

TEST(DataMovementReformatEdgeValues, Device) {
  const std::string why = kiln::testing::deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  checkChannelsLastReformats(true, true);
}

// ---------------------------------------------------------------------------------------------
// Bad device-side data. The CPU reference fails run() on an out-of-range gather index or roi
// batch index; the CUDA kernels cannot report that without synchronizing, so they write 0 for
// the affected elements (reading nothing out of bounds) and set the int32 error flag at the
// start of their workspace, which run() resets first.

namespace {

// Runs `kernel` on host buffers (emulated) or on the GPU and returns the output bytes and the
// first int32 of the workspace.
kiln::Status runDirect(const kiln::Kernel& kernel, bool device,
                       const std::vector<std::vector<uint8_t>>& ins, size_t outBytes,
                       std::vector<uint8_t>& out, int32_t& flag) {
  out.assign(outBytes, 0xEE);
  std::vector<uint8_t> ws(kernel.workspaceSize() + 256, 0x77);
  if (!device) {
    std::vector<const void*> in;
    for (const auto& b : ins) in.push_back(b.data());
    void* outs[] = {out.data()};
    kiln::cuda::RunContext ctx;
    ctx.emulate = true;
    kiln::Status s = kernel.run(in.data(), outs, ws.data(), ctx);
    std::memcpy(&flag, ws.data(), sizeof flag);
    return s;
  }
  std::vector<kiln::cuda::DeviceBuffer> dIn(ins.size());
  kiln::cuda::DeviceBuffer dOut, dWork;
  kiln::cuda::StreamHandle stream;
  kiln::Status s = stream.create();
  std::vector<const void*> in;
  for (size_t i = 0; s && i < ins.size(); ++i) {
    s = dIn[i].allocate(ins[i].size(), "input");
    if (s) s = kiln::cuda::copyToDevice(dIn[i].data(), ins[i].data(), ins[i].size());
    in.push_back(dIn[i].data());
  }
  if (s) s = dOut.allocate(outBytes, "output");
  if (s) s = dWork.allocate(ws.size(), "workspace");
  if (s) s = kiln::cuda::copyToDevice(dWork.data(), ws.data(), ws.size());
  kiln::cuda::RunContext ctx;
  ctx.stream = stream.get();
  void* outs[] = {dOut.data()};
  if (s) s = kernel.run(in.data(), outs, dWork.data(), ctx);
  if (s) s = kiln::cuda::synchronize(stream.get());
  if (s) s = kiln::cuda::copyToHost(out.data(), dOut.data(), outBytes);
  if (s) s = kiln::cuda::copyToHost(&flag, dWork.data(), sizeof flag);
  return s;
}

template <class T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

void checkGatherOutOfRange(bool device) {
  for (bool bad : {false, true}) {
    kiln::KernelConfig c;
    c.type = LayerType::kGATHER;
    c.params = kiln::GatherParams{0};
    c.inputs = {
        {makeDims({4, 3}), DataType::kFLOAT, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA},
        {makeDims({4}), DataType::kINT32, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA}};
    c.outputs = {
        {makeDims({4, 3}), DataType::kFLOAT, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA}};
    c.constantInputs = {nullptr, nullptr};
    // Every tactic keeps the reference's rule (slab_vectorized copies the 12-byte rows as 4-byte
    // vectors).
    for (const kiln::Tactic& tactic : kiln::ops::cudaTactics(LayerType::kGATHER)) {
      SCOPED_TRACE(tactic.name);
      std::string why;
      auto kernel = tactic.create(c, &why);
      ASSERT_TRUE(kernel) << why;
      const std::vector<float> data = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
      const std::vector<int32_t> idx =
          bad ? std::vector<int32_t>{1, 4, -5, -1} : std::vector<int32_t>{1, 3, -4, -1};
      std::vector<uint8_t> out;
      int32_t flag = -1;
      ASSERT_TRUE(
          runDirect(*kernel, device, {bytesOf(data), bytesOf(idx)}, 12 * sizeof(float), out, flag)
              .isOk());
      std::vector<float> got(12);
      std::memcpy(got.data(), out.data(), out.size());
      const std::vector<float> want =
          bad ? std::vector<float>{10, 11, 12, 0, 0, 0, 0, 0, 0, 30, 31, 32}
              : std::vector<float>{10, 11, 12, 30, 31, 32, 0, 1, 2, 30, 31, 32};
      EXPECT_EQ(got, want);
      EXPECT_EQ(flag, bad ? 1 : 0);
    }
  }
}

void checkRoiAlignBadBatchIndex(bool device) {
  kiln::KernelConfig c;
  c.type = LayerType::kROI_ALIGN;
  kiln::RoiAlignParams p;
  p.outputHeight = 2;
  p.outputWidth = 2;
  c.params = p;
  c.inputs = {
      {makeDims({2, 1, 4, 4}), DataType::kFLOAT, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA},
      {makeDims({2, 4}), DataType::kFLOAT, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA},
      {makeDims({2}), DataType::kINT64, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA}};
  c.outputs = {
      {makeDims({2, 1, 2, 2}), DataType::kFLOAT, TensorFormat::kLINEAR, kiln::DeviceKind::kCUDA}};
  c.constantInputs = {nullptr, nullptr, nullptr};
  std::string why;
  auto kernel = kiln::ops::cudaTactics(LayerType::kROI_ALIGN).back().create(c, &why);
  ASSERT_TRUE(kernel) << why;
  std::vector<float> x(32, 1.f);
  const std::vector<float> rois = {0, 0, 3, 3, 0, 0, 3, 3};
  const std::vector<int64_t> idx = {1, 2};  // roi 1's image does not exist
  std::vector<uint8_t> out;
  int32_t flag = -1;
  ASSERT_TRUE(runDirect(*kernel, device, {bytesOf(x), bytesOf(rois), bytesOf(idx)},
                        8 * sizeof(float), out, flag)
                  .isOk());
  std::vector<float> got(8);
  std::memcpy(got.data(), out.data(), out.size());
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], 1.f) << i;  // constant image, valid roi
  for (int i = 4; i < 8; ++i) EXPECT_EQ(got[i], 0.f) << i;
  EXPECT_EQ(flag, 1);
}

}  // namespace

TEST(DataMovementBadIndices, Emulated) {
  checkGatherOutOfRange(false);
  checkRoiAlignBadBatchIndex(false);
}

TEST(DataMovementBadIndices, Device) {
  const std::string why = kiln::testing::deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  checkGatherOutOfRange(true);
  checkRoiAlignBadBatchIndex(true);
}

// The fast movers against the CUDA reference, byte for byte, in emulation, with every buffer
// aligned and then shifted by one element (so the vector width drops to what the addresses
// allow), for every element size.
TEST(DataMovementFastTactics, EmulatedBytesEqualReference) {
  std::mt19937 rng(7);
  auto randomBytes = [&](size_t n) {
    std::vector<uint8_t> b(n);
    for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
    return b;
  };
  const DataType types[] = {DataType::kINT8, DataType::kHALF, DataType::kFLOAT, DataType::kINT64};
  int ran = 0;
  for (DataType t : types) {
    const size_t e = kiln::dataTypeSize(t);
    for (size_t shift : {size_t{0}, e}) {
      SCOPED_TRACE(std::string(kiln::dataTypeName(t)) + " shifted " + std::to_string(shift));
      int n = 0;
      {
        kiln::ShuffleParams p;
        p.hasFirstTranspose = true;
        const int32_t perm[] = {0, 2, 1, 3};
        std::copy(std::begin(perm), std::end(perm), p.firstTranspose);
        for (Dims d : {makeDims({2, 5, 3, 8}), makeDims({3, 5, 2, 7}), makeDims({2, 3, 4, 32})}) {
          const auto c = kiln::testing::linearConfig(LayerType::kSHUFFLE, p, {{d, t}});
          EXPECT_EQ(kiln::testing::bytesAgainstReference(c, {randomBytes(kiln::volume(d) * e)},
                                                         shift, &n),
                    "");
          ran += n;
        }
      }
      {
        kiln::SliceParams p;
        p.starts = makeDims({1, 0, 2});
        p.steps = makeDims({1, 2, 1});
        p.outputDims = makeDims({2, 3, 8});
        const Dims d = makeDims({4, 6, 10});
        const auto c = kiln::testing::linearConfig(LayerType::kSLICE, p, {{d, t}});
        EXPECT_EQ(
            kiln::testing::bytesAgainstReference(c, {randomBytes(kiln::volume(d) * e)}, shift, &n),
            "");
        ran += n;
      }
      {
        const Dims d = makeDims({3, 2, 5, 8});
        const std::vector<int32_t> idx = {2, -3, 1};
        std::vector<uint8_t> ib(idx.size() * 4);
        std::memcpy(ib.data(), idx.data(), ib.size());
        const auto c = kiln::testing::linearConfig(LayerType::kGATHER, kiln::GatherParams{0},
                                                   {{d, t}, {makeDims({3}), DataType::kINT32}});
        // The indices are shifted too: 4-byte aligned at worst, as an int32 tensor always is.
        if (shift % 4 == 0) {
          EXPECT_EQ(kiln::testing::bytesAgainstReference(c, {randomBytes(kiln::volume(d) * e), ib},
                                                         shift, &n),
                    "");
          ran += n;
        }
      }
    }
  }
  EXPECT_GT(ran, 0);
}
