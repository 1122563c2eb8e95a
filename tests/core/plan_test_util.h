// A rich synthetic plan for the plan-format tests: every layer type with non-default parameters,
// shapes that agree with shape inference, plugins with binary data, weights and candidates. The
// names, floats, candidates, bytes and arena gaps are random; the structure is fixed.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "core/plan.h"
#include "core/plan_codec.h"

namespace kiln::testing {

// The plan structure (core/plan.h) the fixture builds.
using plan::Candidate;
using plan::kArenaAlignment;
using plan::Plan;
using plan::PluginRecord;
using plan::Step;
using plan::Tensor;
using plan::tensorBytes;
using plan::TensorKind;

inline uint64_t freshSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

class PlanMaker {
 public:
  explicit PlanMaker(uint64_t seed) : rng_(seed) {}

  std::string randomText(size_t maxLen, bool printable) {
    const size_t n = std::uniform_int_distribution<size_t>(1, maxLen)(rng_);
    std::string s;
    for (size_t i = 0; i < n; ++i)
      s += printable ? static_cast<char>(std::uniform_int_distribution<int>(0x21, 0x7e)(rng_))
                     : static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng_));
    return s;
  }
  float randomFloat() { return std::uniform_real_distribution<float>(-10.f, 10.f)(rng_); }
  std::vector<uint8_t> randomBytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(std::uniform_int_distribution<int>(1, 255)(rng_));
    return v;
  }

  int32_t addTensor(const std::string& name, Dims dims, TensorKind kind,
                    DataType type = DataType::kFLOAT, TensorFormat format = TensorFormat::kLINEAR) {
    Tensor t;
    // Random suffixes (with arbitrary bytes for internal tensors) keep names unique and odd.
    t.name = name + "_" + randomText(6, kind == TensorKind::kINPUT || kind == TensorKind::kOUTPUT);
    t.dims = dims;
    t.type = type;
    t.format = format;
    t.kind = kind;
    if (kind == TensorKind::kCONSTANT) {
      t.weightIndex = static_cast<int32_t>(plan_.weights.size());
      plan_.weights.push_back(std::make_shared<const std::vector<uint8_t>>(
          randomBytes(static_cast<size_t>(tensorBytes(dims, type)))));
    }
    if (kind == TensorKind::kACTIVATION) {
      // Random gaps, aligned: the arena need not be packed.
      nextOffset_ += kArenaAlignment * std::uniform_int_distribution<uint64_t>(0, 3)(rng_);
      t.arenaOffset = nextOffset_;
      const uint64_t bytes = static_cast<uint64_t>(tensorBytes(dims, type));
      nextOffset_ += (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
      plan_.naiveActivationBytes += bytes;
    }
    if (kind == TensorKind::kINPUT) plan_.inputs.push_back(plan_.tensors.size());
    if (kind == TensorKind::kOUTPUT) plan_.outputs.push_back(plan_.tensors.size());
    plan_.tensors.push_back(t);
    return static_cast<int32_t>(plan_.tensors.size() - 1);
  }

  void addStep(const std::string& name, LayerType type, LayerParams params,
               std::vector<int32_t> inputs, std::vector<int32_t> outputs,
               int32_t pluginIndex = -1) {
    Step s;
    s.layerName = name + "/" + randomText(8, false);
    s.type = type;
    s.params = params;
    s.inputs = std::move(inputs);
    s.outputs = std::move(outputs);
    s.tactic = type == LayerType::kPLUGIN ? "plugin" : "tactic_" + randomText(10, true);
    s.medianMs = std::uniform_real_distribution<double>(0.001, 5.0)(rng_);
    s.workspaceBytes = std::uniform_int_distribution<uint64_t>(0, 1 << 20)(rng_);
    plan_.maxWorkspaceBytes = std::max(plan_.maxWorkspaceBytes, s.workspaceBytes);
    s.pluginIndex = pluginIndex;
    const int nCandidates = std::uniform_int_distribution<int>(0, 3)(rng_);
    for (int c = 0; c < nCandidates; ++c) {
      Candidate cand;
      cand.name = randomText(12, true);
      const bool rejected = std::uniform_int_distribution<int>(0, 1)(rng_);
      cand.medianMs = rejected ? -1 : std::uniform_real_distribution<double>(0.01, 9.0)(rng_);
      if (rejected) cand.rejectedBecause = randomText(40, false);
      s.candidates.push_back(cand);
    }
    plan_.steps.push_back(std::move(s));
  }

  int32_t addPlugin(size_t dataBytes, bool fromLibrary) {
    PluginRecord r;
    r.name = "Probe" + randomText(5, true);
    r.version = std::to_string(std::uniform_int_distribution<int>(1, 9)(rng_));
    r.pluginNamespace = fromLibrary ? "ns_" + randomText(4, true) : "";
    r.data = randomBytes(dataBytes);
    if (fromLibrary) {
      r.libraryName = "libprobe_" + randomText(6, true) + ".so";
      r.libraryHash = randomText(64, true);
    }
    plan_.plugins.push_back(std::move(r));
    return static_cast<int32_t>(plan_.plugins.size() - 1);
  }

  Plan make() {
    plan_ = Plan{};
    nextOffset_ = 0;
    plan_.kilnVersion = "0.1.0-" + randomText(5, true);
    plan_.target = std::uniform_int_distribution<int>(0, 1)(rng_) ? "cpu" : "cuda:sm_90";
    const auto A = TensorKind::kACTIVATION, C = TensorKind::kCONSTANT;

    const int32_t x = addTensor("x", makeDims({2, 4, 8, 8}), TensorKind::kINPUT);

    // Convolution: groups 2, asymmetric padding, stride and dilation differ per axis.
    // OH = (8 + 1 + 0 - 1*2 - 1)/2 + 1 = 4, OW = (8 + 2 + 1 - 2*2 - 1)/1 + 1 = 7.
    ConvolutionParams conv;
    conv.outChannels = 6;
    conv.kernelH = 3, conv.kernelW = 3;
    conv.strideH = 2, conv.strideW = 1;
    conv.padTop = 1, conv.padLeft = 2, conv.padBottom = 0, conv.padRight = 1;
    conv.dilationH = 1, conv.dilationW = 2;
    conv.groups = 2;
    const int32_t w = addTensor("conv_w", makeDims({6, 2, 3, 3}), C);
    const int32_t b = addTensor("conv_b", makeDims({6}), C);
    const int32_t convOut = addTensor("conv_out", makeDims({2, 6, 4, 7}), A);
    addStep("conv", LayerType::kCONVOLUTION, conv, {x, w, b}, {convOut});

    // Average pooling, count_include_pad and ceil mode, sizes that divide exactly (so floor and
    // ceil agree): OH = (4 + 1 + 0 - 2)/1 + 1 = 4, OW = (7 - 3)/2 + 1 = 3.
    PoolingParams pool;
    pool.type = PoolingType::kAVERAGE;
    pool.kernelH = 2, pool.kernelW = 3;
    pool.strideH = 1, pool.strideW = 2;
    pool.padTop = 1;
    pool.countIncludePad = true;
    pool.ceilMode = true;
    const int32_t poolOut = addTensor("pool_out", makeDims({2, 6, 4, 3}), A);
    addStep("pool", LayerType::kPOOLING, pool, {convOut}, {poolOut});

    ActivationParams act;
    act.type = ActivationType::kLEAKY_RELU;
    act.alpha = randomFloat();
    act.beta = randomFloat();
    const int32_t actOut = addTensor("act_out", makeDims({2, 6, 4, 3}), A);
    addStep("act", LayerType::kACTIVATION, act, {poolOut}, {actOut});

    const int32_t eltC = addTensor("elt_c", makeDims({6, 1, 1}), C);
    const int32_t eltOut = addTensor("elt_out", makeDims({2, 6, 4, 3}), A);
    addStep("max", LayerType::kELEMENTWISE, ElementwiseParams{ElementwiseOp::kMAX}, {actOut, eltC},
            {eltOut});

    // A reformat to fp16 channels-last, as a network output.
    ReformatParams ref{DataType::kHALF, TensorFormat::kCHANNELS_LAST};
    const int32_t nhwc = addTensor("nhwc", makeDims({2, 6, 4, 3}), TensorKind::kOUTPUT,
                                   DataType::kHALF, TensorFormat::kCHANNELS_LAST);
    addStep("to_nhwc", LayerType::kREFORMAT, ref, {eltOut}, {nhwc});

    // Shuffle: [2,6,4,3] -(0,2,3,1)-> [2,4,3,6] -reshape(0,12,-1)-> [2,12,6] -(0,2,1)-> [2,6,12].
    // The unused permutation tails hold non-zero values, which must survive the round trip.
    ShuffleParams sh;
    sh.hasFirstTranspose = true;
    const int32_t first[8] = {0, 2, 3, 1, 4, 5, 6, 7};
    const int32_t second[8] = {0, 2, 1, 3, 4, 5, 6, 7};
    std::copy(first, first + 8, sh.firstTranspose);
    sh.hasReshape = true;
    sh.reshapeDims = makeDims({0, 12, -1});
    sh.hasSecondTranspose = true;
    std::copy(second, second + 8, sh.secondTranspose);
    const int32_t shOut = addTensor("shuffle_out", makeDims({2, 6, 12}), A);
    addStep("shuffle", LayerType::kSHUFFLE, sh, {eltOut}, {shOut});

    // [2,6,12] x [5,12]^T -> [2,6,5]
    const int32_t mmB = addTensor("mm_b", makeDims({5, 12}), C);
    const int32_t mmOut = addTensor("mm_out", makeDims({2, 6, 5}), A);
    addStep("matmul", LayerType::kMATRIX_MULTIPLY, MatrixMultiplyParams{false, true}, {shOut, mmB},
            {mmOut});

    const int32_t smOut = addTensor("softmax_out", makeDims({2, 6, 5}), A);
    addStep("softmax", LayerType::kSOFTMAX, SoftmaxParams{-2}, {mmOut}, {smOut});

    ReduceParams red{ReduceOp::kMEAN, 0b100u, false};
    const int32_t redOut = addTensor("reduce_out", makeDims({2, 6}), A);
    addStep("reduce", LayerType::kREDUCE, red, {smOut}, {redOut});

    // Gemm: [2,6] x [4,6]^T + C[4] -> [2,4]
    GemmParams gemm;
    gemm.alpha = randomFloat();
    gemm.beta = randomFloat();
    gemm.transposeA = false;
    gemm.transposeB = true;
    const int32_t gB = addTensor("gemm_b", makeDims({4, 6}), C);
    const int32_t gC = addTensor("gemm_c", makeDims({4}), C);
    const int32_t gOut = addTensor("gemm_out", makeDims({2, 4}), A);
    addStep("gemm", LayerType::kGEMM, gemm, {redOut, gB, gC}, {gOut});

    const int32_t catC = addTensor("cat_c", makeDims({2, 3}), C);
    const int32_t catOut = addTensor("cat_out", makeDims({2, 7}), A);
    addStep("concat", LayerType::kCONCATENATION, ConcatenationParams{-1}, {gOut, catC}, {catOut});

    // Two plugins: one registered in code with empty data, one from a library with binary data.
    const int32_t p0 = addPlugin(0, false);
    const int32_t p1 = addPlugin(std::uniform_int_distribution<size_t>(1, 300)(rng_), true);
    const int32_t out = addTensor("y", makeDims({2, 7}), TensorKind::kOUTPUT);
    addStep("probe", LayerType::kPLUGIN, std::monostate{}, {catOut}, {out}, p1);
    const int32_t side = addTensor("side", makeDims({2, 6, 4, 3}), A);
    addStep("probe2", LayerType::kPLUGIN, std::monostate{}, {actOut, x}, {side}, p0);

    // The ONNX-era layers, each on a side branch from x [2,4,8,8].
    const int32_t cond = addTensor("cond", makeDims({1, 1, 8, 8}), C, DataType::kBOOL);
    addStep("select", LayerType::kSELECT, SelectParams{}, {cond, x, x},
            {addTensor("select_out", makeDims({2, 4, 8, 8}), A)});
    const int32_t idx = addTensor("gather_idx", makeDims({3}), C, DataType::kINT64);
    addStep("gather", LayerType::kGATHER, GatherParams{1}, {x, idx},
            {addTensor("gather_out", makeDims({2, 3, 8, 8}), A)});
    SliceParams slice{makeDims({0, 1, 0, 7}), makeDims({1, 1, 2, -1}), makeDims({2, 3, 4, 8})};
    addStep("slice", LayerType::kSLICE, slice, {x},
            {addTensor("slice_out", makeDims({2, 3, 4, 8}), A)});
    PaddingParams pad;
    pad.mode = PaddingMode::kREFLECT;
    pad.value = randomFloat();
    pad.before[2] = 1, pad.before[3] = 2, pad.after[2] = 3;
    addStep("pad", LayerType::kPADDING, pad, {x},
            {addTensor("pad_out", makeDims({2, 4, 12, 10}), A)});
    ResizeParams resize;
    resize.mode = ResizeMode::kLINEAR;
    resize.coordinates = ResizeCoordinates::kALIGN_CORNERS;
    resize.rounding = ResizeRounding::kCEIL;
    const float scales[8] = {1, 1, 2, 0.5f, 0, 0, 0, 0};
    std::copy(scales, scales + 8, resize.scales);
    resize.outputDims = makeDims({2, 4, 16, 4});
    addStep("resize", LayerType::kRESIZE, resize, {x},
            {addTensor("resize_out", makeDims({2, 4, 16, 4}), A)});
    addStep("tile", LayerType::kTILE, TileParams{makeDims({1, 2, 1, 1})}, {x},
            {addTensor("tile_out", makeDims({2, 8, 8, 8}), A)});
    const int32_t small = addTensor("expand_in", makeDims({4, 1, 1}), C);
    addStep("expand", LayerType::kEXPAND, ExpandParams{makeDims({2, 4, 8, 8})}, {small},
            {addTensor("expand_out", makeDims({2, 4, 8, 8}), A)});
    // OH = 2*(8-1) + 1 + 1*(3-1) + 1 - 1 - 1 = 16, OW = 14 + 0 + 2 + 1 - 2 = 15.
    DeconvolutionParams deconv;
    deconv.outChannels = 6;
    deconv.kernelH = deconv.kernelW = 3;
    deconv.strideH = deconv.strideW = 2;
    deconv.padTop = deconv.padLeft = deconv.padBottom = deconv.padRight = 1;
    deconv.groups = 2;
    deconv.outputPaddingH = 1;
    addStep("deconv", LayerType::kDECONVOLUTION, deconv,
            {x, addTensor("deconv_w", makeDims({4, 3, 3, 3}), C)},
            {addTensor("deconv_out", makeDims({2, 6, 16, 15}), A)});
    addStep("instnorm", LayerType::kNORMALIZATION,
            NormalizationParams{std::abs(randomFloat()) + 1e-5f},
            {x, addTensor("in_scale", makeDims({4}), C), addTensor("in_bias", makeDims({4}), C)},
            {addTensor("instnorm_out", makeDims({2, 4, 8, 8}), A)});
    addStep("lrn", LayerType::kLRN, LRNParams{3, randomFloat(), randomFloat(), randomFloat()}, {x},
            {addTensor("lrn_out", makeDims({2, 4, 8, 8}), A)});
    RoiAlignParams roi;
    roi.mode = RoiAlignMode::kMAX;
    roi.outputHeight = 2, roi.outputWidth = 3, roi.samplingRatio = 2;
    roi.spatialScale = randomFloat();
    roi.halfPixel = false;
    addStep("roialign", LayerType::kROI_ALIGN, roi,
            {x, addTensor("rois", makeDims({3, 4}), C),
             addTensor("roi_batch", makeDims({3}), C, DataType::kINT64)},
            {addTensor("roialign_out", makeDims({3, 4, 2, 3}), A)});

    addStep("trilu", LayerType::kTRILU, TriluParams{false, -1}, {x},
            {addTensor("trilu_out", makeDims({2, 4, 8, 8}), A)});
    // x + x -> * scalar -> leaky ReLU, the scalar and slope random.
    ElementwiseChainParams chain;
    appendChainStep(chain, ElementwiseChainStep::kINPUT, static_cast<int32_t>(ElementwiseOp::kADD),
                    0.f, 0.f, 1);
    appendChainStep(chain, ElementwiseChainStep::kSCALAR, static_cast<int32_t>(ElementwiseOp::kMUL),
                    randomFloat(), 0.f, 0, true);
    appendChainStep(chain, ElementwiseChainStep::kACTIVATION,
                    static_cast<int32_t>(ActivationType::kLEAKY_RELU), randomFloat());
    addStep("chain", LayerType::kELEMENTWISE_CHAIN, chain, {x, x},
            {addTensor("chain_out", makeDims({2, 4, 8, 8}), A)});
    // Position ids as long as x's dim 2 (its dims source), from a random start.
    RangeParams range;
    range.start = double(int64_t(randomFloat() * 100));
    range.delta = 3;
    range.lengthOf = 3;
    addStep("range", LayerType::kRANGE, range, {x},
            {addTensor("range_out", makeDims({8}), A, DataType::kINT64)});
    ShapeParams dims;
    dims.start = 1;
    addStep("shape", LayerType::kSHAPE, dims, {x},
            {addTensor("shape_out", makeDims({3}), A, DataType::kINT64)});
    addStep("layernorm", LayerType::kLAYER_NORMALIZATION,
            LayerNormalizationParams{-2, std::abs(randomFloat()) + 1e-5f},
            {x, addTensor("ln_scale", makeDims({8, 8}), C), addTensor("ln_bias", makeDims({8}), C)},
            {addTensor("layernorm_out", makeDims({2, 4, 8, 8}), A)});
    addStep("attention", LayerType::kATTENTION, AttentionParams{randomFloat(), true},
            {x, x, x, addTensor("attention_mask", makeDims({8, 8}), C)},
            {addTensor("attention_out", makeDims({2, 4, 8, 8}), A)});
    addStep("rmsnorm", LayerType::kRMS_NORMALIZATION,
            RMSNormalizationParams{-1, std::abs(randomFloat()) + 1e-5f},
            {x, addTensor("rms_scale", makeDims({1, 8}), C)},
            {addTensor("rmsnorm_out", makeDims({2, 4, 8, 8}), A)});
    addStep("groupnorm", LayerType::kGROUP_NORMALIZATION,
            GroupNormalizationParams{2, std::abs(randomFloat()) + 1e-5f},
            {x, addTensor("gn_scale", makeDims({4}), C), addTensor("gn_bias", makeDims({4}), C)},
            {addTensor("groupnorm_out", makeDims({2, 4, 8, 8}), A)});
    addStep("scatternd", LayerType::kSCATTER_ND, ScatterNDParams{ScatterReduction::kMAX},
            {x, addTensor("scatter_indices", makeDims({3, 2}), C, DataType::kINT64),
             addTensor("scatter_updates", makeDims({3, 8, 8}), C)},
            {addTensor("scatternd_out", makeDims({2, 4, 8, 8}), A)});

    LinearParams linear;
    linear.transposeW = true;
    linear.hasBias = linear.hasResidual = linear.hasActivation = true;
    linear.activation = ActivationType::kLEAKY_RELU;
    linear.activationAlpha = randomFloat();
    addStep("linear", LayerType::kLINEAR, linear,
            {x, addTensor("linear_w", makeDims({5, 8}), C), addTensor("linear_b", makeDims({5}), C),
             addTensor("linear_residual", makeDims({2, 4, 8, 5}), C)},
            {addTensor("linear_out", makeDims({2, 4, 8, 5}), A)});

    // A constant step: computes nothing, carries no parameters.
    addStep("const", LayerType::kCONSTANT, std::monostate{}, {}, {});

    // Room at the end of the arena is allowed.
    plan_.arenaBytes =
        nextOffset_ + kArenaAlignment * std::uniform_int_distribution<uint64_t>(0, 2)(rng_);
    plan_.maxWorkspaceBytes += std::uniform_int_distribution<uint64_t>(0, 100)(rng_);
    return plan_;
  }

 private:
  std::mt19937_64 rng_;
  Plan plan_;
  uint64_t nextOffset_ = 0;
};

inline bool sameFloat(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}
inline bool sameDouble(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// Field by field, floats by their bits.
inline bool sameParams(const LayerParams& x, const LayerParams& y) {
  if (x.index() != y.index()) return false;
  if (const auto* a = std::get_if<ConvolutionParams>(&x)) {
    const auto& b = std::get<ConvolutionParams>(y);
    return a->outChannels == b.outChannels && a->kernelH == b.kernelH && a->kernelW == b.kernelW &&
           a->strideH == b.strideH && a->strideW == b.strideW && a->padTop == b.padTop &&
           a->padLeft == b.padLeft && a->padBottom == b.padBottom && a->padRight == b.padRight &&
           a->dilationH == b.dilationH && a->dilationW == b.dilationW && a->groups == b.groups;
  }
  if (const auto* a = std::get_if<PoolingParams>(&x)) {
    const auto& b = std::get<PoolingParams>(y);
    return a->type == b.type && a->kernelH == b.kernelH && a->kernelW == b.kernelW &&
           a->strideH == b.strideH && a->strideW == b.strideW && a->padTop == b.padTop &&
           a->padLeft == b.padLeft && a->padBottom == b.padBottom && a->padRight == b.padRight &&
           a->countIncludePad == b.countIncludePad && a->ceilMode == b.ceilMode;
  }
  if (const auto* a = std::get_if<ElementwiseParams>(&x))
    return a->op == std::get<ElementwiseParams>(y).op;
  if (const auto* a = std::get_if<ActivationParams>(&x)) {
    const auto& b = std::get<ActivationParams>(y);
    return a->type == b.type && sameFloat(a->alpha, b.alpha) && sameFloat(a->beta, b.beta);
  }
  if (const auto* a = std::get_if<MatrixMultiplyParams>(&x)) {
    const auto& b = std::get<MatrixMultiplyParams>(y);
    return a->transposeA == b.transposeA && a->transposeB == b.transposeB;
  }
  if (const auto* a = std::get_if<GemmParams>(&x)) {
    const auto& b = std::get<GemmParams>(y);
    return sameFloat(a->alpha, b.alpha) && sameFloat(a->beta, b.beta) &&
           a->transposeA == b.transposeA && a->transposeB == b.transposeB;
  }
  if (const auto* a = std::get_if<SoftmaxParams>(&x))
    return a->axis == std::get<SoftmaxParams>(y).axis;
  if (const auto* a = std::get_if<ConcatenationParams>(&x))
    return a->axis == std::get<ConcatenationParams>(y).axis;
  if (const auto* a = std::get_if<ShuffleParams>(&x)) {
    const auto& b = std::get<ShuffleParams>(y);
    for (int i = 0; i < Dims::kMaxDims; ++i)
      if (a->firstTranspose[i] != b.firstTranspose[i] ||
          a->secondTranspose[i] != b.secondTranspose[i])
        return false;
    return a->hasFirstTranspose == b.hasFirstTranspose && a->hasReshape == b.hasReshape &&
           a->reshapeDims == b.reshapeDims && a->hasSecondTranspose == b.hasSecondTranspose;
  }
  if (const auto* a = std::get_if<ReduceParams>(&x)) {
    const auto& b = std::get<ReduceParams>(y);
    return a->op == b.op && a->axesMask == b.axesMask && a->keepDims == b.keepDims;
  }
  if (const auto* a = std::get_if<ReformatParams>(&x)) {
    const auto& b = std::get<ReformatParams>(y);
    return a->outputType == b.outputType && a->outputFormat == b.outputFormat;
  }
  if (const auto* a = std::get_if<LayerNormalizationParams>(&x)) {
    const auto& b = std::get<LayerNormalizationParams>(y);
    return a->axis == b.axis && sameFloat(a->epsilon, b.epsilon);
  }
  if (const auto* a = std::get_if<AttentionParams>(&x)) {
    const auto& b = std::get<AttentionParams>(y);
    return sameFloat(a->scale, b.scale) && a->keyTransposed == b.keyTransposed;
  }
  if (const auto* a = std::get_if<GroupNormalizationParams>(&x)) {
    const auto& b = std::get<GroupNormalizationParams>(y);
    return a->numGroups == b.numGroups && sameFloat(a->epsilon, b.epsilon);
  }
  if (const auto* a = std::get_if<ScatterNDParams>(&x)) {
    return a->reduction == std::get<ScatterNDParams>(y).reduction;
  }
  if (const auto* a = std::get_if<LinearParams>(&x)) {
    const auto& b = std::get<LinearParams>(y);
    return a->transposeW == b.transposeW && a->hasBias == b.hasBias &&
           a->hasResidual == b.hasResidual && a->hasActivation == b.hasActivation &&
           a->activation == b.activation && sameFloat(a->activationAlpha, b.activationAlpha) &&
           sameFloat(a->activationBeta, b.activationBeta);
  }
  if (const auto* a = std::get_if<RMSNormalizationParams>(&x)) {
    const auto& b = std::get<RMSNormalizationParams>(y);
    return a->axis == b.axis && sameFloat(a->epsilon, b.epsilon);
  }
  return true;  // monostate
}

inline void expectSamePlan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.kilnVersion, b.kilnVersion);
  EXPECT_EQ(a.target, b.target);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    SCOPED_TRACE("tensor " + std::to_string(i));
    const Tensor &x = a.tensors[i], &y = b.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_TRUE(x.dims == y.dims);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.format, y.format);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.weightIndex, y.weightIndex);
    EXPECT_EQ(x.arenaOffset, y.arenaOffset);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const Step &x = a.steps[i], &y = b.steps[i];
    EXPECT_EQ(x.layerName, y.layerName);
    EXPECT_EQ(x.type, y.type);
    EXPECT_TRUE(sameParams(x.params, y.params));
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.tactic, y.tactic);
    EXPECT_TRUE(sameDouble(x.medianMs, y.medianMs));
    EXPECT_EQ(x.workspaceBytes, y.workspaceBytes);
    EXPECT_EQ(x.pluginIndex, y.pluginIndex);
    ASSERT_EQ(x.candidates.size(), y.candidates.size());
    for (size_t c = 0; c < x.candidates.size(); ++c) {
      EXPECT_EQ(x.candidates[c].name, y.candidates[c].name);
      EXPECT_TRUE(sameDouble(x.candidates[c].medianMs, y.candidates[c].medianMs));
      EXPECT_EQ(x.candidates[c].rejectedBecause, y.candidates[c].rejectedBecause);
    }
  }
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (size_t i = 0; i < a.weights.size(); ++i) {
    ASSERT_TRUE(a.weights[i] && b.weights[i]);
    EXPECT_EQ(*a.weights[i], *b.weights[i]) << "weights " << i;
  }
  ASSERT_EQ(a.plugins.size(), b.plugins.size());
  for (size_t i = 0; i < a.plugins.size(); ++i) {
    const PluginRecord &x = a.plugins[i], &y = b.plugins[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.version, y.version);
    EXPECT_EQ(x.pluginNamespace, y.pluginNamespace);
    EXPECT_EQ(x.data, y.data);
    EXPECT_EQ(x.libraryName, y.libraryName);
    EXPECT_EQ(x.libraryHash, y.libraryHash);
  }
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  EXPECT_EQ(a.naiveActivationBytes, b.naiveActivationBytes);
  EXPECT_EQ(a.maxWorkspaceBytes, b.maxWorkspaceBytes);
}

}  // namespace kiln::testing
