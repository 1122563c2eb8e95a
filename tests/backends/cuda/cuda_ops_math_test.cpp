// The CUDA tactics of the math ops (elementwise, activation, softmax, reduce, instance
// normalization, LRN, layer normalization; src/ops/<op>/<op>_cuda.cu) against the CPU reference:
// every op and activation type, broadcasting patterns (scalar, rank mismatch, both sides
// broadcast, rank 8), every softmax axis, reduce masks with and without keepDims, argmax on floats
// and integers, layer-normalization axes with broadcast or missing Scale/B;
// fp32/fp16/bf16, int32/int64/bool where the layer keeps them, linear and channels-last.
// Row normalisations over row lengths 1 to 5000 (each side of warp_per_row's limit and of its
// 16-byte vectors), large activations whose fp16 squares overflow, and direct checks of the
// tactics' limits and of the vectorized activation's bits against the reference's.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cuda_ops_test_util.h"
#include "backends/kernel.h"
#include "kiln/float16.h"
#include "ops/elementwise/elementwise_semantics.h"
#include "ops/op_table.h"

namespace {

using kiln::ActivationParams;
using kiln::ActivationType;
using kiln::DataType;
using kiln::Dims;
using kiln::ElementwiseChainParams;
using kiln::ElementwiseChainStep;
using kiln::ElementwiseOp;
using kiln::ElementwiseParams;
using kiln::GroupNormalizationParams;
using kiln::LayerNormalizationParams;
using kiln::LayerType;
using kiln::LRNParams;
using kiln::makeDims;
using kiln::NormalizationParams;
using kiln::ReduceOp;
using kiln::ReduceParams;
using kiln::RMSNormalizationParams;
using kiln::SoftmaxParams;
using kiln::TensorFormat;
using kiln::testing::OpCase;
using kiln::testing::OpInput;

const std::vector<DataType> kFloats = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
const std::vector<TensorFormat> kBothFormats = {TensorFormat::kLINEAR,
                                                TensorFormat::kCHANNELS_LAST};

OpInput input(Dims d, float lo = -1.f, float hi = 1.f) {
  OpInput in;
  in.dims = d;
  in.floatLo = lo;
  in.floatHi = hi;
  return in;
}

OpInput intInput(Dims d, DataType t, int64_t lo, int64_t hi) {
  OpInput in;
  in.dims = d;
  in.type = t;
  in.intLo = lo;
  in.intHi = hi;
  return in;
}

std::string dimsName(const Dims& d) {
  std::string s;
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "x" : "") + std::to_string(d.d[i]);
  return s.empty() ? "scalar" : s;
}

bool hasRank4(const std::vector<OpInput>& ins) {
  for (const OpInput& in : ins)
    if (in.dims.nbDims == 4) return true;
  return false;
}

using kiln::ops::elementwise::opName;

void addElementwise(std::vector<OpCase>& cases) {
  // (a, b) shape pairs: same, scalar both ways, rank mismatch, both sides broadcast, rank 8.
  const std::vector<std::pair<Dims, Dims>> shapes = {
      {makeDims({2, 3, 5, 7}), makeDims({2, 3, 5, 7})},
      {makeDims({4, 5}), Dims{}},
      {makeDims({1}), makeDims({6, 7})},
      {makeDims({2, 3, 5, 7}), makeDims({3, 1, 1})},
      {makeDims({1, 3, 1, 1}), makeDims({2, 3, 5, 7})},
      {makeDims({2, 1, 3, 1, 4}), makeDims({3, 5, 1})},
      {makeDims({2, 1, 2, 1, 2, 1, 2, 3}), makeDims({1, 2, 1, 2, 1, 2, 1, 3})},
      {makeDims({33}), makeDims({33})},
      {makeDims({2, 0, 3}), makeDims({3})},
      // row_broadcast (a bias, a position embedding, either side, an odd period) and same_shape
      // in whole 16-byte groups.
      {makeDims({4, 5, 8}), makeDims({8})},
      {makeDims({1, 5, 8}), makeDims({4, 5, 8})},
      {makeDims({3, 7}), makeDims({7})},
      {makeDims({2, 3, 5, 7}), makeDims({1, 1, 1, 7})},
      {makeDims({2, 3, 64}), makeDims({2, 3, 64})},
  };
  const ElementwiseOp floatOps[] = {
      ElementwiseOp::kADD,  ElementwiseOp::kSUB,     ElementwiseOp::kMUL, ElementwiseOp::kDIV,
      ElementwiseOp::kMAX,  ElementwiseOp::kMIN,     ElementwiseOp::kPOW, ElementwiseOp::kEQUAL,
      ElementwiseOp::kLESS, ElementwiseOp::kGREATER, ElementwiseOp::kFMOD};
  for (ElementwiseOp op : floatOps) {
    for (const auto& [a, b] : shapes) {
      OpCase c;
      c.name = std::string("elementwise_") + opName(op) + "_" + dimsName(a) + "_" + dimsName(b);
      c.type = LayerType::kELEMENTWISE;
      c.params = ElementwiseParams{op};
      OpInput ia = input(a), ib = input(b);
      if (op == ElementwiseOp::kPOW) {  // positive base, moderate exponent
        ia.floatLo = 0.1f;
        ia.floatHi = 2.f;
        ib.floatLo = -2.f;
        ib.floatHi = 2.f;
      } else if (op == ElementwiseOp::kDIV || op == ElementwiseOp::kFMOD) {  // divisor not near 0
        ib.floatLo = 0.5f;
        ib.floatHi = 2.f;
      }
      c.inputs = {ia, ib};
      c.floatTypes = kFloats;
      if (hasRank4(c.inputs)) c.formats = kBothFormats;
      cases.push_back(c);
    }
  }
  // prelu: the slope broadcasts to x (the output has x's shape).
  for (const Dims& slope :
       {makeDims({3, 1, 1}), makeDims({1}), makeDims({2, 3, 5, 7}), makeDims({1, 3, 1, 1})}) {
    OpCase c;
    c.name = "elementwise_prelu_" + dimsName(slope);
    c.type = LayerType::kELEMENTWISE;
    c.params = ElementwiseParams{ElementwiseOp::kPRELU};
    c.inputs = {input(makeDims({2, 3, 5, 7})), input(slope, 0.f, 0.5f)};
    c.floatTypes = kFloats;
    c.formats = kBothFormats;
    cases.push_back(c);
  }
  // Integers: every op the CPU keeps on int32/int64 (not pow, not prelu). Values include 0 and
  // negatives, so that division by zero and truncation toward zero are exercised.
  const ElementwiseOp intOps[] = {
      ElementwiseOp::kADD,     ElementwiseOp::kSUB, ElementwiseOp::kMUL,   ElementwiseOp::kDIV,
      ElementwiseOp::kMAX,     ElementwiseOp::kMIN, ElementwiseOp::kEQUAL, ElementwiseOp::kLESS,
      ElementwiseOp::kGREATER, ElementwiseOp::kMOD, ElementwiseOp::kFMOD};
  for (DataType t : {DataType::kINT32, DataType::kINT64}) {
    for (ElementwiseOp op : intOps) {
      for (const auto& [a, b] :
           {std::pair{makeDims({3, 4, 5}), makeDims({3, 4, 5})},
            std::pair{makeDims({3, 4, 5}), makeDims({4, 1})}, std::pair{Dims{}, makeDims({7})},
            std::pair{makeDims({3, 4, 8}), makeDims({8})}}) {
        OpCase c;
        c.name = std::string("elementwise_") + opName(op) + "_" + kiln::dataTypeName(t) + "_" +
                 dimsName(a) + "_" + dimsName(b);
        c.type = LayerType::kELEMENTWISE;
        c.params = ElementwiseParams{op};
        c.inputs = {intInput(a, t, -20, 20), intInput(b, t, -4, 4)};
        c.floatTypes = {DataType::kFLOAT};
        cases.push_back(c);
      }
    }
    // Wrap-around: large magnitudes overflow in add/sub/mul.
    for (ElementwiseOp op : {ElementwiseOp::kADD, ElementwiseOp::kMUL, ElementwiseOp::kSUB}) {
      OpCase c;
      c.name = std::string("elementwise_wrap_") + opName(op) + "_" + kiln::dataTypeName(t);
      c.type = LayerType::kELEMENTWISE;
      c.params = ElementwiseParams{op};
      const int64_t big = t == DataType::kINT32 ? (int64_t{1} << 31) - 1 : INT64_MAX;
      c.inputs = {intInput(makeDims({64}), t, -big, big), intInput(makeDims({64}), t, -big, big)};
      c.floatTypes = {DataType::kFLOAT};
      cases.push_back(c);
    }
  }
  for (const auto& [a, b] : {std::pair{makeDims({2, 3, 4}), makeDims({2, 3, 4})},
                             std::pair{makeDims({2, 3, 4}), makeDims({3, 1})},
                             std::pair{makeDims({2, 3, 16}), makeDims({16})}}) {
    OpCase c;
    c.name = "elementwise_equal_bool_" + dimsName(a) + "_" + dimsName(b);
    c.type = LayerType::kELEMENTWISE;
    c.params = ElementwiseParams{ElementwiseOp::kEQUAL};
    c.inputs = {intInput(a, DataType::kBOOL, 0, 2), intInput(b, DataType::kBOOL, 0, 2)};
    c.floatTypes = {DataType::kFLOAT};
    cases.push_back(c);
  }
}

void addActivation(std::vector<OpCase>& cases) {
  struct A {
    const char* name;
    ActivationType type;
    float alpha, beta, lo, hi;
  };
  const A acts[] = {
      {"relu", ActivationType::kRELU, 0, 0, -2, 2},
      {"leaky_relu", ActivationType::kLEAKY_RELU, 0.1f, 0, -2, 2},
      {"sigmoid", ActivationType::kSIGMOID, 0, 0, -6, 6},
      {"tanh", ActivationType::kTANH, 0, 0, -3, 3},
      {"clip", ActivationType::kCLIP, -0.5f, 0.7f, -2, 2},
      {"hard_swish", ActivationType::kHARD_SWISH, 0, 0, -5, 5},
      {"elu", ActivationType::kELU, 1.3f, 0, -3, 3},
      {"selu", ActivationType::kSELU, 1.6732632f, 1.0507010f, -3, 3},
      {"softplus", ActivationType::kSOFTPLUS, 0, 0, -10, 10},
      {"hard_sigmoid", ActivationType::kHARD_SIGMOID, 0.2f, 0.5f, -4, 4},
      {"exp", ActivationType::kEXP, 0, 0, -3, 3},
      {"log", ActivationType::kLOG, 0, 0, 0.05f, 5},
      {"sqrt", ActivationType::kSQRT, 0, 0, 0.f, 5},
      {"neg", ActivationType::kNEG, 0, 0, -2, 2},
      {"abs", ActivationType::kABS, 0, 0, -2, 2},
      {"reciprocal", ActivationType::kRECIPROCAL, 0, 0, 0.25f, 4},
      {"erf", ActivationType::kERF, 0, 0, -3, 3},
      {"gelu", ActivationType::kGELU, 0, 0, -5, 5},
      {"gelu_tanh", ActivationType::kGELU_TANH, 0, 0, -5, 5},
      {"mish", ActivationType::kMISH, 0, 0, -8, 8},
      {"sin", ActivationType::kSIN, 0, 0, -10, 10},
      {"cos", ActivationType::kCOS, 0, 0, -10, 10},
      {"silu", ActivationType::kSILU, 0, 0, -8, 8},
  };
  for (const A& a : acts) {
    // 1 and 7 elements: less than one 16-byte vector (the vectorized tactic's tail only); 210,
    // 17 and 60: vectors and a tail; 2x197x96: many vectors.
    for (const Dims& d : {makeDims({2, 3, 5, 7}), makeDims({17}), makeDims({3, 1, 4, 1, 5}),
                          makeDims({1}), makeDims({7}), makeDims({2, 197, 96})}) {
      OpCase c;
      c.name = std::string("activation_") + a.name + "_" + dimsName(d);
      c.type = LayerType::kACTIVATION;
      c.params = ActivationParams{a.type, a.alpha, a.beta};
      c.inputs = {input(d, a.lo, a.hi)};
      c.floatTypes = kFloats;
      if (d.nbDims == 4) c.formats = kBothFormats;
      cases.push_back(c);
    }
  }
  for (DataType t : {DataType::kINT32, DataType::kINT64}) {
    for (ActivationType at : {ActivationType::kNEG, ActivationType::kABS}) {
      OpCase c;
      c.name = std::string("activation_") + (at == ActivationType::kNEG ? "neg_" : "abs_") +
               kiln::dataTypeName(t);
      c.type = LayerType::kACTIVATION;
      c.params = ActivationParams{at, 0, 0};
      const int64_t big = t == DataType::kINT32 ? (int64_t{1} << 31) - 1 : INT64_MAX;
      c.inputs = {intInput(makeDims({5, 13}), t, -big, big)};
      c.floatTypes = {DataType::kFLOAT};
      cases.push_back(c);
    }
  }
  // A ViT-B/16 MLP's activation at batch 8, too large to emulate in CI.
  for (ActivationType at : {ActivationType::kGELU, ActivationType::kGELU_TANH}) {
    OpCase c;
    c.name = std::string("activation_") + (at == ActivationType::kGELU ? "gelu" : "gelu_tanh") +
             "_8x197x3072";
    c.type = LayerType::kACTIVATION;
    c.params = ActivationParams{at, 0, 0};
    c.inputs = {input(makeDims({8, 197, 3072}), -5, 5)};
    c.floatTypes = kFloats;
    c.emulate = false;
    cases.push_back(c);
  }
  OpCase n;
  n.name = "activation_not_bool";
  n.type = LayerType::kACTIVATION;
  n.params = ActivationParams{ActivationType::kNOT, 0, 0};
  n.inputs = {intInput(makeDims({3, 7, 2}), DataType::kBOOL, 0, 2)};
  n.floatTypes = {DataType::kFLOAT};
  cases.push_back(n);
}

void addSoftmax(std::vector<OpCase>& cases) {
  struct S {
    Dims d;
    int32_t axis;
  };
  const S shapes[] = {
      {makeDims({4, 10}), -1},
      {makeDims({2, 3, 5, 7}), 0},
      {makeDims({2, 3, 5, 7}), 1},
      {makeDims({2, 3, 5, 7}), 2},
      {makeDims({2, 3, 5, 7}), -1},
      {makeDims({5}), 0},
      {makeDims({3, 2000}), 1},
      {makeDims({2, 700, 3}), 1},
      {makeDims({6, 1}), -1},
      {makeDims({2, 37, 3, 3}), 1},
      // Row lengths around warp_rows' 16-byte vectors and its limit (4096; 5000 goes to
      // contiguous_rows), 7 rows (not a multiple of its 4 rows per block).
      {makeDims({7, 7}), -1},
      {makeDims({7, 768}), -1},
      {makeDims({7, 1000}), -1},
      {makeDims({7, 1001}), -1},
      {makeDims({7, 4096}), -1},
      {makeDims({3, 5000}), -1},
  };
  for (bool log : {false, true}) {
    for (const S& s : shapes) {
      OpCase c;
      c.name = std::string(log ? "log_softmax_" : "softmax_") + dimsName(s.d) + "_axis" +
               std::to_string(s.axis < 0 ? s.axis + s.d.nbDims : s.axis);
      c.type = LayerType::kSOFTMAX;
      c.params = SoftmaxParams{s.axis, log};
      c.inputs = {input(s.d, -5.f, 5.f)};
      c.floatTypes = kFloats;
      if (s.d.nbDims == 4) c.formats = kBothFormats;
      cases.push_back(c);
    }
  }
}

void addReduce(std::vector<OpCase>& cases) {
  struct R {
    Dims d;
    uint32_t mask;
  };
  const R shapes[] = {
      {makeDims({2, 3, 5, 7}), 0b1000},
      {makeDims({2, 3, 5, 7}), 0b1100},
      {makeDims({2, 3, 5, 7}), 0b0001},
      {makeDims({2, 3, 5, 7}), 0b0110},
      {makeDims({2, 3, 5, 7}), 0b1111},
      {makeDims({2, 3, 5, 7}), 0b0010},
      {makeDims({2, 3, 5, 7}), 0b1010},
      {makeDims({4, 3000}), 0b10},
      {makeDims({9}), 0b1},
      {makeDims({3, 4, 2, 5, 2}), 0b10101},
  };
  const std::pair<ReduceOp, const char*> ops[] = {
      {ReduceOp::kSUM, "sum"}, {ReduceOp::kMEAN, "mean"}, {ReduceOp::kMAX, "max"}};
  for (const auto& [op, name] : ops) {
    for (const R& r : shapes) {
      for (bool keep : {true, false}) {
        OpCase c;
        c.name = std::string("reduce_") + name + "_" + dimsName(r.d) + "_mask" +
                 std::to_string(r.mask) + (keep ? "_keep" : "_drop");
        c.type = LayerType::kREDUCE;
        c.params = ReduceParams{op, r.mask, keep};
        c.inputs = {input(r.d)};
        c.floatTypes = kFloats;
        if (r.d.nbDims == 4) c.formats = kBothFormats;
        cases.push_back(c);
      }
    }
  }
  // An empty reduced extent: sum 0, mean NaN, max -inf.
  for (const auto& [op, name] : ops) {
    for (uint32_t mask : {0b010u, 0b011u}) {
      OpCase c;
      c.name = std::string("reduce_") + name + "_empty_mask" + std::to_string(mask);
      c.type = LayerType::kREDUCE;
      c.params = ReduceParams{op, mask, mask == 0b010u};
      c.inputs = {input(makeDims({3, 0, 2}))};
      c.floatTypes = kFloats;
      cases.push_back(c);
    }
  }
  // argmax: every axis of a rank-4 tensor, a long row, floats and integers (small ranges give
  // many ties: the first index must win; a wide int64 range checks exact comparison).
  const R argShapes[] = {
      {makeDims({2, 3, 5, 7}), 0b0001}, {makeDims({2, 3, 5, 7}), 0b0010},
      {makeDims({2, 3, 5, 7}), 0b0100}, {makeDims({2, 3, 5, 7}), 0b1000},
      {makeDims({3, 1500}), 0b10},      {makeDims({11}), 0b1},
  };
  for (const R& r : argShapes) {
    for (bool keep : {true, false}) {
      const std::string base =
          dimsName(r.d) + "_mask" + std::to_string(r.mask) + (keep ? "_keep" : "_drop");
      OpCase f;
      f.name = "reduce_argmax_" + base;
      f.type = LayerType::kREDUCE;
      f.params = ReduceParams{ReduceOp::kARGMAX, r.mask, keep};
      f.inputs = {input(r.d)};
      f.floatTypes = kFloats;
      if (r.d.nbDims == 4) f.formats = kBothFormats;
      cases.push_back(f);
      for (DataType t : {DataType::kINT32, DataType::kINT64}) {
        OpCase c = f;
        c.name = "reduce_argmax_" + std::string(kiln::dataTypeName(t)) + "_" + base;
        c.inputs = {intInput(r.d, t, -3, 4)};
        c.floatTypes = {DataType::kFLOAT};
        c.formats = {TensorFormat::kLINEAR};
        cases.push_back(c);
      }
    }
  }
  OpCase wide;
  wide.name = "reduce_argmax_int64_wide";
  wide.type = LayerType::kREDUCE;
  wide.params = ReduceParams{ReduceOp::kARGMAX, 0b10, false};
  wide.inputs = {
      intInput(makeDims({6, 40}), DataType::kINT64, (int64_t{1} << 60), (int64_t{1} << 60) + 64)};
  wide.floatTypes = {DataType::kFLOAT};
  cases.push_back(wide);
}

void addNormalization(std::vector<OpCase>& cases) {
  for (const Dims& d : {makeDims({2, 3, 5, 7}), makeDims({1, 4, 10}), makeDims({2, 5, 1000}),
                        makeDims({3, 2}), makeDims({2, 3, 2, 3, 2})}) {
    for (float eps : {1e-5f, 1e-2f}) {
      OpCase c;
      c.name = "instance_norm_" + dimsName(d) + (eps > 1e-3f ? "_eps1e-2" : "_eps1e-5");
      c.type = LayerType::kNORMALIZATION;
      c.params = NormalizationParams{eps};
      OpInput scale = input(makeDims({d.d[1]}), 0.5f, 2.f);
      OpInput bias = input(makeDims({d.d[1]}));
      scale.constant = bias.constant = true;
      c.inputs = {input(d, -2.f, 3.f), scale, bias};
      c.floatTypes = kFloats;
      if (d.nbDims == 4) c.formats = kBothFormats;
      cases.push_back(c);
    }
  }
  for (const Dims& d : {makeDims({2, 7, 4, 5}), makeDims({2, 6, 9}), makeDims({1, 3})}) {
    for (int32_t size : {1, 3, 4, 5}) {
      OpCase c;
      c.name = "lrn_" + dimsName(d) + "_size" + std::to_string(size);
      c.type = LayerType::kLRN;
      c.params = LRNParams{size, size == 3 ? 0.5f : 1e-4f, 0.75f, size == 4 ? 2.f : 1.f};
      c.inputs = {input(d, -2.f, 2.f)};
      c.floatTypes = kFloats;
      if (d.nbDims == 4) c.formats = kBothFormats;
      cases.push_back(c);
    }
  }
}

void addLayerNormalization(std::vector<OpCase>& cases) {
  struct L {
    Dims x;
    int32_t axis;
    Dims scale;
    bool hasBias;
    Dims bias;
    float lo, hi;
  };
  const L shapes[] = {
      {makeDims({4, 16}), -1, makeDims({16}), true, makeDims({16}), -2.f, 3.f},
      {makeDims({2, 3, 5, 7}), 1, makeDims({3, 5, 7}), true, makeDims({3, 5, 7}), -2.f, 3.f},
      {makeDims({2, 3, 5, 7}), -2, makeDims({1, 7}), true, makeDims({5, 1}), -2.f, 3.f},
      {makeDims({2, 3, 5, 7}), 0, makeDims({1}), false, {}, -2.f, 3.f},
      {makeDims({3, 2000}), -1, makeDims({2000}), true, makeDims({2000}), -2.f, 3.f},
      {makeDims({6, 1}), -1, makeDims({1}), true, makeDims({1}), -2.f, 3.f},
      {makeDims({2, 0, 4}), 1, makeDims({0, 4}), false, {}, -2.f, 3.f},
      // Large activations with a small spread (transformer residual streams).
      {makeDims({5, 96}), -1, makeDims({96}), true, makeDims({96}), 40.f, 60.f},
      // Row lengths around warp_per_row's vectors and limit (4096; 5000 is block_per_row's),
      // 7 rows (not a multiple of the warp kernel's 4 rows per block).
      {makeDims({7, 1}), -1, makeDims({1}), false, {}, -2.f, 3.f},
      {makeDims({7, 7}), -1, makeDims({7}), true, makeDims({7}), -2.f, 3.f},
      {makeDims({7, 768}), -1, makeDims({768}), true, makeDims({768}), -2.f, 3.f},
      {makeDims({7, 768}), -1, makeDims({768}), false, {}, -2.f, 3.f},  // vector Scale, no B
      {makeDims({7, 1000}), -1, makeDims({1000}), true, makeDims({1000}), -2.f, 3.f},
      {makeDims({7, 1001}), -1, makeDims({1001}), true, makeDims({1001}), -2.f, 3.f},
      {makeDims({7, 4096}), -1, makeDims({4096}), true, makeDims({4096}), -2.f, 3.f},
      {makeDims({3, 5000}), -1, makeDims({5000}), true, makeDims({5000}), -2.f, 3.f},
      // One Scale value for the row (stride 0), a 2-D Scale and B over 2 x 384.
      {makeDims({5, 768}), -1, makeDims({1}), true, makeDims({768}), -2.f, 3.f},
      {makeDims({5, 2, 384}), 1, makeDims({2, 384}), true, makeDims({1, 384}), -2.f, 3.f},
      // Values ~200, whose fp16 sum of squares would overflow without fp32 accumulation.
      {makeDims({6, 768}), -1, makeDims({768}), true, makeDims({768}), 190.f, 230.f},
      {makeDims({3, 4096}), -1, makeDims({4096}), true, makeDims({4096}), 190.f, 230.f},
  };
  for (const L& l : shapes) {
    OpCase c;
    c.name = "layer_norm_" + dimsName(l.x) + "_axis" +
             std::to_string(l.axis < 0 ? l.axis + l.x.nbDims : l.axis) + "_scale" +
             dimsName(l.scale) + (l.hasBias ? "_bias" + dimsName(l.bias) : "_nobias") +
             (l.lo > 0 ? "_offset" : "");
    c.type = LayerType::kLAYER_NORMALIZATION;
    c.params = LayerNormalizationParams{l.axis, 1e-5f};
    OpInput scale = input(l.scale, 0.5f, 2.f);
    scale.constant = true;
    c.inputs = {input(l.x, l.lo, l.hi), scale};
    if (l.hasBias) c.inputs.push_back(input(l.bias));  // B as a tensor, not a constant
    c.floatTypes = kFloats;
    cases.push_back(c);
  }
  // ViT-B/16 at batch 64: 12608 rows of 768, too large to emulate in CI.
  OpCase vit;
  vit.name = "layer_norm_vit_64x197x768";
  vit.type = LayerType::kLAYER_NORMALIZATION;
  vit.params = LayerNormalizationParams{-1, 1e-6f};
  OpInput scale = input(makeDims({768}), 0.5f, 2.f);
  scale.constant = true;
  OpInput bias = input(makeDims({768}));
  bias.constant = true;
  vit.inputs = {input(makeDims({64, 197, 768}), -3.f, 3.f), scale, bias};
  vit.floatTypes = kFloats;
  vit.emulate = false;
  cases.push_back(vit);
}

void addRmsNormalization(std::vector<OpCase>& cases) {
  struct R {
    Dims x;
    int32_t axis;
    Dims scale;
    float lo, hi;
  };
  const R shapes[] = {
      {makeDims({4, 16}), -1, makeDims({16}), -2.f, 3.f},
      {makeDims({2, 3, 5, 7}), 1, makeDims({3, 5, 7}), -2.f, 3.f},
      {makeDims({2, 3, 5, 7}), -2, makeDims({5, 1}), -2.f, 3.f},
      {makeDims({2, 3, 5, 7}), 0, makeDims({1}), -2.f, 3.f},
      {makeDims({3, 2000}), -1, makeDims({2000}), -2.f, 3.f},
      {makeDims({6, 1}), -1, makeDims({1}), -2.f, 3.f},
      {makeDims({2, 0, 4}), 1, makeDims({0, 4}), -2.f, 3.f},
      // Large activations: their squares overflow fp16.
      {makeDims({5, 96}), -1, makeDims({96}), 200.f, 400.f},
      {makeDims({6, 768}), -1, makeDims({768}), 200.f, 400.f},
      {makeDims({3, 4096}), -1, makeDims({4096}), 200.f, 400.f},
      // Row lengths around warp_per_row's vectors and limit.
      {makeDims({7, 1}), -1, makeDims({1}), -2.f, 3.f},
      {makeDims({7, 7}), -1, makeDims({7}), -2.f, 3.f},
      {makeDims({7, 768}), -1, makeDims({768}), -2.f, 3.f},
      {makeDims({7, 1000}), -1, makeDims({1000}), -2.f, 3.f},
      {makeDims({7, 1001}), -1, makeDims({1001}), -2.f, 3.f},
      {makeDims({7, 4096}), -1, makeDims({4096}), -2.f, 3.f},
      {makeDims({3, 5000}), -1, makeDims({5000}), -2.f, 3.f},
  };
  for (const R& r : shapes) {
    OpCase c;
    c.name = "rms_norm_" + dimsName(r.x) + "_axis" +
             std::to_string(r.axis < 0 ? r.axis + r.x.nbDims : r.axis) + "_scale" +
             dimsName(r.scale) + (r.lo > 0 ? "_large" : "");
    c.type = LayerType::kRMS_NORMALIZATION;
    c.params = RMSNormalizationParams{r.axis, 1e-5f};
    c.inputs = {input(r.x, r.lo, r.hi), input(r.scale, 0.5f, 2.f)};  // Scale as a tensor
    c.floatTypes = kFloats;
    cases.push_back(c);
  }
}

void addGroupNormalization(std::vector<OpCase>& cases) {
  struct G {
    Dims x;
    int32_t groups;
    float lo, hi;
  };
  const G shapes[] = {
      {makeDims({2, 6, 5, 7}), 3, -2.f, 3.f},
      {makeDims({2, 6, 5, 7}), 1, -2.f, 3.f},
      {makeDims({2, 6, 5, 7}), 6, -2.f, 3.f},
      {makeDims({1, 32, 64}), 8, -2.f, 3.f},
      {makeDims({3, 4}), 2, -2.f, 3.f},
      {makeDims({2, 4, 0, 3}), 2, -2.f, 3.f},
      {makeDims({2, 8, 3, 2, 2}), 4, -2.f, 3.f},
      // Large activations with a small spread.
      {makeDims({2, 4, 96}), 2, 40.f, 60.f},
      // Rows of 2 x 784 (warp_per_row) and 8 x 784 (past its limit: block_per_row).
      {makeDims({2, 64, 28, 28}), 32, -2.f, 3.f},
      {makeDims({1, 64, 28, 28}), 8, -2.f, 3.f},
      {makeDims({2, 16, 96}), 4, 190.f, 230.f},
  };
  for (const G& g : shapes) {
    OpCase c;
    c.name = "group_norm_" + dimsName(g.x) + "_groups" + std::to_string(g.groups) +
             (g.lo > 0 ? "_offset" : "");
    c.type = LayerType::kGROUP_NORMALIZATION;
    c.params = GroupNormalizationParams{g.groups, 1e-5f};
    OpInput scale = input(makeDims({g.x.d[1]}), 0.5f, 2.f);
    scale.constant = true;
    c.inputs = {input(g.x, g.lo, g.hi), scale, input(makeDims({g.x.d[1]}))};
    c.floatTypes = kFloats;
    cases.push_back(c);
  }
}

// ElementwiseChain (elementwise_chain_fusion's layer): x + r -> SiLU -> v / d -> 3 - v -> clip,
// with two operand inputs, on a rank-4 map in both formats and a transformer-sized row block.
void addElementwiseChain(std::vector<OpCase>& cases) {
  ElementwiseChainParams p;
  const auto step = [&p](ElementwiseChainStep kind, int32_t code, float alpha, float beta,
                         int32_t in, bool operandFirst) {
    kiln::appendChainStep(p, kind, code, alpha, beta, in, operandFirst);
  };
  const auto op = [](ElementwiseOp o) { return static_cast<int32_t>(o); };
  const auto act = [](ActivationType a) { return static_cast<int32_t>(a); };
  step(ElementwiseChainStep::kINPUT, op(ElementwiseOp::kADD), 0, 0, 1, false);
  step(ElementwiseChainStep::kACTIVATION, act(ActivationType::kSILU), 0, 0, 0, false);
  step(ElementwiseChainStep::kINPUT, op(ElementwiseOp::kDIV), 0, 0, 2, false);
  step(ElementwiseChainStep::kSCALAR, op(ElementwiseOp::kSUB), 3.f, 0, 0, true);
  step(ElementwiseChainStep::kACTIVATION, act(ActivationType::kCLIP), -1.f, 2.f, 0, false);
  for (const Dims& d : {makeDims({2, 3, 5, 7}), makeDims({2, 197, 96})}) {
    OpCase c;
    c.name = "elementwise_chain_" + dimsName(d);
    c.type = LayerType::kELEMENTWISE_CHAIN;
    c.params = p;
    OpInput divisor = input(d);
    divisor.floatLo = 0.5f;  // not near 0
    divisor.floatHi = 2.f;
    c.inputs = {input(d), input(d), divisor};
    c.floatTypes = kFloats;
    if (hasRank4(c.inputs)) c.formats = kBothFormats;
    cases.push_back(c);
  }
}

std::vector<OpCase> mathCases() {
  std::vector<OpCase> cases;
  addElementwise(cases);
  addElementwiseChain(cases);
  addActivation(cases);
  addSoftmax(cases);
  addReduce(cases);
  addNormalization(cases);
  addLayerNormalization(cases);
  addRmsNormalization(cases);
  addGroupNormalization(cases);
  return cases;
}

// ---- direct checks of tactics, host only (named *Emulated* for the emulated ctest) ----

using kiln::DeviceKind;
using kiln::Kernel;
using kiln::KernelConfig;
using kiln::KernelPtr;
using kiln::RunContext;
using kiln::Status;
using kiln::StatusCode;
using kiln::Tactic;

const Tactic* findTactic(LayerType type, const std::string& name) {
  for (const Tactic& t : kiln::ops::cudaTactics(type))
    if (name == t.name) return &t;
  return nullptr;
}

kiln::PluginTensorDesc desc(Dims d, DataType t) {
  return {d, t, TensorFormat::kLINEAR, DeviceKind::kCUDA};
}

// A row normalisation of X [rows, len] (GroupNormalization: [1, len, 1] in one group).
KernelConfig rowConfig(LayerType type, int64_t rows, int64_t len, DataType t) {
  KernelConfig c;
  c.type = type;
  if (type == LayerType::kLAYER_NORMALIZATION) {
    c.params = LayerNormalizationParams{-1, 1e-5f};
    c.inputs = {desc(makeDims({rows, len}), t), desc(makeDims({len}), t), desc(makeDims({len}), t)};
    c.outputs = {desc(makeDims({rows, len}), t)};
  } else if (type == LayerType::kRMS_NORMALIZATION) {
    c.params = RMSNormalizationParams{-1, 1e-5f};
    c.inputs = {desc(makeDims({rows, len}), t), desc(makeDims({len}), t)};
    c.outputs = {desc(makeDims({rows, len}), t)};
  } else {
    c.params = GroupNormalizationParams{1, 1e-5f};
    c.inputs = {desc(makeDims({rows, len, 1}), t), desc(makeDims({len}), t),
                desc(makeDims({len}), t)};
    c.outputs = {desc(makeDims({rows, len, 1}), t)};
  }
  c.constantInputs.assign(c.inputs.size(), nullptr);
  return c;
}

// warp_per_row takes rows up to 4096 elements and says why it declines longer ones; it has no
// host emulation (kUnsupported, as block_per_row). block_per_row takes the long rows.
TEST(RowNormalizationTacticsEmulated, WarpPerRowLimits) {
  for (LayerType type : {LayerType::kLAYER_NORMALIZATION, LayerType::kRMS_NORMALIZATION,
                         LayerType::kGROUP_NORMALIZATION}) {
    const Tactic* warp = findTactic(type, "warp_per_row");
    const Tactic* block = findTactic(type, "block_per_row");
    ASSERT_NE(warp, nullptr);
    ASSERT_NE(block, nullptr);
    EXPECT_STREQ(kiln::ops::cudaTactics(type).front().name, "warp_per_row");
    for (DataType t : kFloats) {
      for (int64_t len : {1, 7, 768, 4096}) {
        std::string why;
        KernelPtr k = warp->create(rowConfig(type, 3, len, t), &why);
        ASSERT_NE(k, nullptr) << len << ": " << why;
        std::vector<uint8_t> buf(3 * len * 4 + 64);
        const void* in[] = {buf.data(), buf.data(), buf.data()};
        void* out[] = {buf.data()};
        RunContext ctx;
        ctx.emulate = true;
        const Status s = k->run(in, out, nullptr, ctx);
        EXPECT_EQ(s.code(), StatusCode::kUnsupported);
        EXPECT_NE(s.message().find("warp_per_row"), std::string::npos) << s.message();
      }
      std::string why;
      EXPECT_EQ(warp->create(rowConfig(type, 3, 4097, t), &why), nullptr);
      EXPECT_NE(why.find("4097"), std::string::npos) << why;
      EXPECT_NE(why.find("block_per_row"), std::string::npos) << why;
      why.clear();
      EXPECT_NE(block->create(rowConfig(type, 3, 4097, t), &why), nullptr) << why;
    }
  }
}

// softmax warp_rows takes contiguous rows up to 4096 elements, declines longer ones (and a
// strided axis) saying why, and has no host emulation.
TEST(SoftmaxTacticsEmulated, WarpRowsLimits) {
  const Tactic* warp = findTactic(LayerType::kSOFTMAX, "warp_rows");
  ASSERT_NE(warp, nullptr);
  EXPECT_STREQ(kiln::ops::cudaTactics(LayerType::kSOFTMAX).front().name, "warp_rows");
  auto config = [](Dims d, int32_t axis, DataType t) {
    KernelConfig c;
    c.type = LayerType::kSOFTMAX;
    c.params = SoftmaxParams{axis, false};
    c.inputs = {desc(d, t)};
    c.outputs = {desc(d, t)};
    c.constantInputs = {nullptr};
    return c;
  };
  for (DataType t : kFloats) {
    for (int64_t len : {1, 7, 768, 4096}) {
      std::string why;
      KernelPtr k = warp->create(config(makeDims({3, len}), -1, t), &why);
      ASSERT_NE(k, nullptr) << why;
      std::vector<uint8_t> buf(3 * len * 4);
      const void* in[] = {buf.data()};
      void* out[] = {buf.data()};
      RunContext ctx;
      ctx.emulate = true;
      EXPECT_EQ(k->run(in, out, nullptr, ctx).code(), StatusCode::kUnsupported);
    }
    std::string why;
    EXPECT_EQ(warp->create(config(makeDims({3, 4097}), -1, t), &why), nullptr);
    EXPECT_NE(why.find("4097"), std::string::npos) << why;
    why.clear();
    EXPECT_EQ(warp->create(config(makeDims({3, 8}), 0, t), &why), nullptr);
    EXPECT_NE(why.find("not contiguous"), std::string::npos) << why;
  }
}

// The elements of a and b whose bits differ, where NaN equals any NaN: IEEE 754 leaves a NaN's
// sign and payload to the implementation, and the host compiler's choice of operand order for a
// commutative product decides which input NaN an x86 result carries (GPUs return one canonical
// NaN).
std::string bitDifferences(const void* a, const void* b, int64_t count, DataType t) {
  std::string diff;
  const size_t size = kiln::dataTypeSize(t);
  for (int64_t e = 0; e < count; ++e) {
    uint32_t x = 0, y = 0;
    std::memcpy(&x, static_cast<const uint8_t*>(a) + e * size, size);
    std::memcpy(&y, static_cast<const uint8_t*>(b) + e * size, size);
    if (x == y) continue;
    auto isNan = [t](uint32_t v) {
      if (t == DataType::kFLOAT) return (v & 0x7fffffffu) > 0x7f800000u;
      if (t == DataType::kHALF) return (v & 0x7fffu) > 0x7c00u;
      return (v & 0x7fffu) > 0x7f80u;
    };
    if (isNan(x) && isNan(y)) continue;
    diff += " [" + std::to_string(e) + "] " + std::to_string(x) + " vs " + std::to_string(y);
  }
  return diff;
}

// The vectorized activation gives the reference's bytes for every activation and float type,
// on aligned buffers (pairs of 16-byte vectors and a tail) and on buffers one element off alignment
// (every element on the scalar path), out of place and in place.
TEST(ActivationVectorizedEmulated, BitIdenticalToReference) {
  const Tactic* vec = findTactic(LayerType::kACTIVATION, "vectorized");
  const Tactic* ref = findTactic(LayerType::kACTIVATION, "reference");
  ASSERT_NE(vec, nullptr);
  ASSERT_NE(ref, nullptr);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-8.f, 8.f);
  const float specials[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, 70000.f, 89.f, -104.f, 1e-30f};
  const int64_t count = 203;  // 12 fp16 vector pairs + 11, 25 fp32 vector pairs + 3
  for (int a = 0; a < enumCount(ActivationType{}); ++a) {
    const auto at = static_cast<ActivationType>(a);
    if (at == ActivationType::kNOT) continue;
    for (DataType t : kFloats) {
      KernelConfig c;
      c.type = LayerType::kACTIVATION;
      c.params = ActivationParams{at, 0.3f, 0.8f};
      c.inputs = {desc(makeDims({count}), t)};
      c.outputs = {desc(makeDims({count}), t)};
      c.constantInputs = {nullptr};
      std::string why;
      KernelPtr kv = vec->create(c, &why);
      ASSERT_NE(kv, nullptr) << why;
      KernelPtr kr = ref->create(c, &why);
      ASSERT_NE(kr, nullptr) << why;
      const size_t size = kiln::dataTypeSize(t);
      // 16-byte aligned storage with room for a one-element offset.
      std::vector<uint64_t> xs((count + 1) * size / 8 + 2), yv(xs.size()), yr(xs.size());
      auto* xb = reinterpret_cast<uint8_t*>(xs.data());
      for (int64_t e = 0; e < count + 1; ++e) {
        const float v = e % 5 == 0 ? specials[(e / 5) % std::size(specials)] : u(rng);
        if (t == DataType::kFLOAT) {
          std::memcpy(xb + e * size, &v, 4);
        } else {
          const uint16_t h = t == DataType::kHALF ? kiln::floatToHalf(v) : kiln::floatToBf16(v);
          std::memcpy(xb + e * size, &h, 2);
        }
      }
      RunContext ctx;
      ctx.emulate = true;
      for (size_t offset : {size_t{0}, size}) {
        const void* in[] = {xb + offset};
        void* outV[] = {reinterpret_cast<uint8_t*>(yv.data()) + offset};
        void* outR[] = {reinterpret_cast<uint8_t*>(yr.data()) + offset};
        ASSERT_TRUE(kv->run(in, outV, nullptr, ctx));
        ASSERT_TRUE(kr->run(in, outR, nullptr, ctx));
        EXPECT_EQ(bitDifferences(outV[0], outR[0], count, t), "")
            << kiln::dataTypeName(t) << " activation " << a << " offset " << offset;
        // In place: Y is X.
        std::vector<uint64_t> inplace = xs;
        void* io[] = {reinterpret_cast<uint8_t*>(inplace.data()) + offset};
        const void* ioIn[] = {io[0]};
        ASSERT_TRUE(kv->run(ioIn, io, nullptr, ctx));
        EXPECT_EQ(bitDifferences(io[0], outR[0], count, t), "")
            << kiln::dataTypeName(t) << " activation " << a << " in place, offset " << offset;
      }
    }
  }
}

}  // namespace

KILN_CUDA_OP_CASES(Math, mathCases);

// same_shape and row_broadcast write exactly the reference's bytes (the same fp32 math rounded
// once on store), in emulation, on random bytes (NaNs and infinities included), with the buffers
// aligned and then one element off (the scalar path), over whole and partial 16-byte groups.
TEST(ElementwiseFastTactics, EmulatedBytesEqualReference) {
  std::mt19937 rng(11);
  auto randomBytes = [&](size_t n) {
    std::vector<uint8_t> b(n);
    for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
    return b;
  };
  const std::pair<Dims, Dims> shapes[] = {{makeDims({2, 3, 37}), makeDims({2, 3, 37})},
                                          {makeDims({2, 3, 64}), makeDims({2, 3, 64})},
                                          {makeDims({4, 5, 8}), makeDims({8})},
                                          {makeDims({1, 5, 8}), makeDims({4, 5, 8})},
                                          {makeDims({3, 7}), makeDims({1, 7})}};
  const ElementwiseOp ops[] = {ElementwiseOp::kADD, ElementwiseOp::kSUB, ElementwiseOp::kMUL,
                               ElementwiseOp::kDIV, ElementwiseOp::kMAX, ElementwiseOp::kMIN,
                               ElementwiseOp::kLESS};
  int ran = 0;
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT32}) {
    const size_t e = kiln::dataTypeSize(t);
    for (ElementwiseOp op : ops) {
      for (const auto& [a, b] : shapes) {
        for (size_t shift : {size_t{0}, e}) {
          SCOPED_TRACE(std::string(kiln::dataTypeName(t)) + " " + opName(op) + " " + dimsName(a) +
                       " " + dimsName(b) + " shifted " + std::to_string(shift));
          const auto c = kiln::testing::linearConfig(LayerType::kELEMENTWISE, ElementwiseParams{op},
                                                     {{a, t}, {b, t}});
          int n = 0;
          EXPECT_EQ(kiln::testing::bytesAgainstReference(
                        c, {randomBytes(kiln::volume(a) * e), randomBytes(kiln::volume(b) * e)},
                        shift, &n),
                    "");
          EXPECT_GT(n, 0);
          ran += n;
        }
      }
    }
  }
  EXPECT_GT(ran, 0);
}
