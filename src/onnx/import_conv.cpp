// Conv, ConvTranspose, BatchNormalization, InstanceNormalization, LayerNormalization,
// RMSNormalization, GroupNormalization and LRN, as plain layers: a BatchNormalization after a Conv
// is the builder's to fold (src/builder/passes/affine_folding.cpp).
#include <cmath>

#include "onnx/import_context.h"
#include "onnx/window.h"

namespace kiln::onnx_import {
namespace {

Status weights(NodeContext& n, int32_t i, const ConstTensor*& w) {
  KILN_RETURN_IF_ERROR(n.constant(i, w));
  if (!w->isFloat()) return n.error("input " + std::to_string(i) + " must be floating point");
  return Status::ok();
}

// scale = gamma / sqrt(var + eps), shift = beta - mean * scale, for a BN node's constants.
Status batchNormScaleShift(ImportContext& ctx, const onnx::NodeProto& bn, int64_t channels,
                           std::vector<float>& scale, std::vector<float>& shift, NodeContext& n) {
  float eps = 1e-5f;
  for (const auto& a : bn.attribute())
    if (a.name() == "epsilon") eps = a.f();
  const ConstTensor* p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = ctx.values[bn.input(k + 1)].constant.get();
    if (!p[k] || !p[k]->isFloat() || p[k]->count() != channels)
      return n.error("BatchNormalization parameter " + std::to_string(k + 1) +
                     " must be a constant of " + std::to_string(channels) + " floats");
  }
  scale.resize(size_t(channels));
  shift.resize(size_t(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double s = double(p[0]->f[size_t(c)]) / std::sqrt(double(p[3]->f[size_t(c)]) + eps);
    scale[size_t(c)] = float(s);
    shift[size_t(c)] = float(double(p[1]->f[size_t(c)]) - double(p[2]->f[size_t(c)]) * s);
  }
  return Status::ok();
}

// What Conv and ConvTranspose start from: input 0 (a 1-D one seen as [N, C, 1, L]), its dims,
// the weights (input 1) and their dims as 4-D: a constant (`w`), or a tensor known only at run
// time (`wTensor`, a graph input as the ONNX node tests feed it; TensorRT takes such weights too).
struct ConvInputs {
  ITensor* in = nullptr;
  bool oneD = false;
  Dims x;
  const ConstTensor* w = nullptr;
  ITensor* wTensor = nullptr;
  Dims wd;
};

Status convInputs(NodeContext& n, ConvInputs& c) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 3));
  KILN_RETURN_IF_ERROR(windowInput(n, c.in, c.oneD));
  c.x = c.in->getDimensions();
  if (n.isConstant(1)) {
    KILN_RETURN_IF_ERROR(weights(n, 1, c.w));
    c.wd = c.w->dims;
  } else {
    if (n.type(1) != DataType::kFLOAT) return n.error("input 1 must be floating point");
    KILN_RETURN_IF_ERROR(n.tensor(1, c.wTensor));
    c.wd = n.dims(1);
  }
  if (c.oneD && c.wd.nbDims == 3) {
    c.wd = makeDims({c.wd.d[0], c.wd.d[1], 1, c.wd.d[2]});
    if (c.wTensor) {
      ILayer* r = nullptr;
      KILN_RETURN_IF_ERROR(n.reshape(*c.wTensor, c.wd, r));
      c.wTensor = r->getOutput(0);
    }
  }
  if (c.wd.nbDims != 4) return n.unsupportedError("weights must be 3-D or 4-D");
  return Status::ok();
}

// A layer with run-time weights: the built-in layer with W (and the bias, constant or not) as
// inputs, in the order its op header documents (x, W[, bias]).
template <class Params>
Status runTimeWeightsLayer(NodeContext& n, const ConvInputs& c, const Params& p, ILayer*& layer) {
  ITensor* bias = nullptr;
  if (n.hasInput(2)) {
    if (n.type(2) != DataType::kFLOAT) return n.error("input 2 must be floating point");
    if (volume(n.dims(2)) != p.outChannels)
      return n.error("bias must have one value per output channel");
    KILN_RETURN_IF_ERROR(n.tensor(2, bias));
  }
  layer =
      bias ? n.net().addLayer(p, {c.in, c.wTensor, bias}) : n.net().addLayer(p, {c.in, c.wTensor});
  return Status::ok();
}

// kernel_shape, which must match the weights, and the window over the input.
Status convWindow(NodeContext& n, const ConvInputs& c, bool transposed, std::vector<int64_t>& ks,
                  Window& win) {
  ks = n.attrInts("kernel_shape", {c.wd.d[2], c.wd.d[3]});
  if (c.oneD && ks.size() == 1) ks = {1, ks[0]};
  if (ks.size() != 2 || ks[0] != c.wd.d[2] || ks[1] != c.wd.d[3])
    return n.error("kernel_shape does not match the weights");
  return readWindow(n, c.x, ks, win, transposed, c.oneD);
}

// The window fields ConvolutionParams and DeconvolutionParams share.
template <class P>
void setWindowParams(const std::vector<int64_t>& ks, const Window& win, P& p) {
  p.kernelH = int32_t(ks[0]), p.kernelW = int32_t(ks[1]);
  p.strideH = int32_t(win.stride[0]), p.strideW = int32_t(win.stride[1]);
  p.dilationH = int32_t(win.dilation[0]), p.dilationW = int32_t(win.dilation[1]);
  p.padTop = int32_t(win.padBegin[0]), p.padLeft = int32_t(win.padBegin[1]);
  p.padBottom = int32_t(win.padEnd[0]), p.padRight = int32_t(win.padEnd[1]);
}

Status importConv(NodeContext& n) {
  ConvInputs c;
  KILN_RETURN_IF_ERROR(convInputs(n, c));
  std::vector<int64_t> ks;
  Window win;
  KILN_RETURN_IF_ERROR(convWindow(n, c, false, ks, win));
  ConvolutionParams p;
  p.outChannels = int32_t(c.wd.d[0]);
  setWindowParams(ks, win, p);
  p.groups = int32_t(n.attrInt("group", 1));
  if (c.wTensor) {
    ILayer* layer = nullptr;
    KILN_RETURN_IF_ERROR(runTimeWeightsLayer(n, c, p, layer));
    return setWindowOutput(n, layer, c.oneD);
  }
  std::vector<float> bias;
  if (n.hasInput(2)) {
    const ConstTensor* b = nullptr;
    KILN_RETURN_IF_ERROR(weights(n, 2, b));
    if (b->count() != p.outChannels) return n.error("bias must have one value per output channel");
    bias = b->f;
  }
  Weights kw{DataType::kFLOAT, c.w->f.data(), c.w->count()};
  Weights bw{DataType::kFLOAT, bias.data(), int64_t(bias.size())};
  return setWindowOutput(n, n.net().addConvolution(*c.in, p, kw, bw), c.oneD);
}

Status importConvTranspose(NodeContext& n) {
  ConvInputs c;
  KILN_RETURN_IF_ERROR(convInputs(n, c));
  const int64_t groups = n.attrInt("group", 1);
  std::vector<int64_t> ks;
  Window win;
  KILN_RETURN_IF_ERROR(convWindow(n, c, true, ks, win));
  auto outPad =
      n.attrInts("output_padding", c.oneD ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 0});
  auto outShape = n.attrInts("output_shape");
  if (c.oneD) {
    if (outPad.size() != 1) return n.error("output_padding must have 1 value");
    outPad = {0, outPad[0]};
    if (outShape.size() == 1) outShape = {1, outShape[0]};
    if (outShape.size() == 3) outShape = {1, outShape[2]};
  }
  if (outPad.size() != 2) return n.error("output_padding must have 2 values");
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (outShape.size() == 4) outShape = {outShape[2], outShape[3]};
    if (outShape.empty()) outShape = {c.x.d[2] * win.stride[0], c.x.d[3] * win.stride[1]};
    if (outShape.size() != 2) return n.error("output_shape must have 2 (or 4) values");
    for (int k = 0; k < 2; ++k) {
      const int64_t total = win.stride[k] * (c.x.d[2 + k] - 1) + outPad[k] +
                            (win.kernel[k] - 1) * win.dilation[k] + 1 - outShape[k];
      if (total < 0) {
        // Larger than the natural size: the extra goes to output_padding.
        outPad[k] -= total;
        win.padBegin[k] = win.padEnd[k] = 0;
        continue;
      }
      // The ONNX spec: SAME_UPPER puts the smaller half in front, otherwise the larger.
      const int64_t half = total / 2;
      win.padBegin[k] = autoPad == "SAME_UPPER" ? half : total - half;
      win.padEnd[k] = total - win.padBegin[k];
    }
  }
  DeconvolutionParams p;
  p.outChannels = int32_t(c.wd.d[1] * groups);
  setWindowParams(ks, win, p);
  p.groups = int32_t(groups);
  p.outputPaddingH = int32_t(outPad[0]), p.outputPaddingW = int32_t(outPad[1]);
  if (c.wTensor) {
    ILayer* layer = nullptr;
    KILN_RETURN_IF_ERROR(runTimeWeightsLayer(n, c, p, layer));
    return setWindowOutput(n, layer, c.oneD);
  }
  std::vector<float> bias;
  if (n.hasInput(2)) {
    const ConstTensor* b = nullptr;
    KILN_RETURN_IF_ERROR(weights(n, 2, b));
    bias = b->f;
  }
  Weights kw{DataType::kFLOAT, c.w->f.data(), c.w->count()};
  Weights bw{DataType::kFLOAT, bias.data(), int64_t(bias.size())};
  return setWindowOutput(n, n.net().addDeconvolution(*c.in, p, kw, bw), c.oneD);
}

// A [C] vector as a constant shaped [1, C, 1, ...] for broadcasting against an NC... tensor.
Status channelConstant(NodeContext& n, const std::vector<float>& v, int32_t rank,
                       const std::string& suffix, ITensor*& out) {
  ConstTensor c;
  c.type = DataType::kFLOAT;
  c.dims.nbDims = rank;
  for (int32_t k = 0; k < rank; ++k) c.dims.d[k] = 1;
  c.dims.d[1] = int64_t(v.size());
  c.f = v;
  Value val;
  val.constant = std::make_shared<const ConstTensor>(std::move(c));
  return constantTensor(n.ctx, val, n.node.output(0) + suffix, out);
}

// BatchNormalization whose parameters are known only at run time (graph inputs): the same
// arithmetic as layers, each [C] parameter seen as [1, C, 1, ...]:
// y = x * k + (bias - mean * k), k = scale / sqrt(var + epsilon).
Status batchNormAtRunTime(NodeContext& n, ITensor& x) {
  const Dims xd = x.getDimensions();
  Dims perChannel;
  perChannel.nbDims = xd.nbDims;
  for (int32_t k = 0; k < xd.nbDims; ++k) perChannel.d[k] = k == 1 ? xd.d[1] : 1;
  ITensor* p[4] = {};  // scale, bias, mean, var
  for (int k = 1; k < 5; ++k) {
    if (n.type(k) != DataType::kFLOAT || volume(n.dims(k)) != xd.d[1])
      return n.error("BatchNormalization parameter " + std::to_string(k) + " must be " +
                     std::to_string(xd.d[1]) + " floats");
    ITensor* t = nullptr;
    KILN_RETURN_IF_ERROR(n.tensor(k, t));
    ILayer* r = nullptr;
    KILN_RETURN_IF_ERROR(n.reshape(*t, perChannel, r));
    p[k - 1] = r->getOutput(0);
  }
  float eps = n.attrFloat("epsilon", 1e-5f);
  ILayer* epsLayer = n.net().addConstant(makeDims({1}), Weights{DataType::kFLOAT, &eps, 1});
  if (!epsLayer) return n.layerError();
  auto binary = [&](ITensor* a, ITensor* b, ElementwiseOp op) -> ITensor* {
    ILayer* l = a && b ? n.net().addElementwise(*a, *b, op) : nullptr;
    return l ? l->getOutput(0) : nullptr;
  };
  ILayer* root = nullptr;
  if (ITensor* v = binary(p[3], epsLayer->getOutput(0), ElementwiseOp::kADD))
    root = n.net().addActivation(*v, ActivationParams{ActivationType::kSQRT});
  ITensor* k = root ? binary(p[0], root->getOutput(0), ElementwiseOp::kDIV) : nullptr;
  ITensor* shift = binary(p[1], binary(p[2], k, ElementwiseOp::kMUL), ElementwiseOp::kSUB);
  ITensor* y = binary(binary(&x, k, ElementwiseOp::kMUL), shift, ElementwiseOp::kADD);
  if (!y) return n.layerError();
  return n.setOutput(0, y);
}

Status importBatchNorm(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(5, 5));
  for (int k = 1; k < n.node.output_size(); ++k)
    if (n.outputUsed(k)) return n.unsupportedError("training-mode outputs are not supported");
  if (n.attrInt("training_mode", 0) != 0)
    return n.unsupportedError("training_mode is not supported");
  if (n.attrInt("spatial", 1) != 1) return n.unsupportedError("spatial=0 is not supported");
  if (n.attr("is_test") && n.attrInt("is_test", 1) == 0)
    return n.unsupportedError("training mode (is_test=0) is not supported");
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  const Dims x = in->getDimensions();
  if (x.nbDims < 2) return n.error("input must have at least 2 dims");
  bool allConstant = true;
  for (int k = 1; k < 5; ++k) allConstant = allConstant && n.isConstant(k);
  if (!allConstant) return batchNormAtRunTime(n, *in);
  for (int k = 1; k < 5; ++k) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(weights(n, k, c));
  }
  std::vector<float> scale, shift;
  KILN_RETURN_IF_ERROR(batchNormScaleShift(n.ctx, n.node, x.d[1], scale, shift, n));
  ITensor *s = nullptr, *b = nullptr;
  KILN_RETURN_IF_ERROR(channelConstant(n, scale, x.nbDims, "_bn_scale", s));
  KILN_RETURN_IF_ERROR(channelConstant(n, shift, x.nbDims, "_bn_shift", b));
  ILayer* mul = n.net().addElementwise(*in, *s, ElementwiseOp::kMUL);
  if (!mul) return n.layerError();
  return n.setLayerOutputs(n.net().addElementwise(*mul->getOutput(0), *b, ElementwiseOp::kADD));
}

Status importInstanceNorm(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(3, 3));
  ITensor *in, *scale, *bias;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  KILN_RETURN_IF_ERROR(n.tensor(1, scale));
  KILN_RETURN_IF_ERROR(n.tensor(2, bias));
  NormalizationParams p;
  p.epsilon = n.attrFloat("epsilon", 1e-5f);
  return n.setLayerOutputs(n.net().addNormalization(*in, *scale, *bias, p));
}

// LayerNormalization's optional outputs Mean and InvStdDev (X.shape[:axis] followed by ones,
// FP32): what training saves for the backward pass; ONNX's own tests ask for them. They are not
// the layer's (it has the one output Y): they are built, only when used, from X cast to FP32 as
// reduce_mean(X) and 1 / sqrt(reduce_mean((X - mean)^2) + epsilon), the layer's own two passes.
Status layerNormStatistics(NodeContext& n, ITensor& x, int32_t axis, float epsilon) {
  const int32_t rank = x.getDimensions().nbDims;
  ITensor* xf = &x;
  if (x.getType() != DataType::kFLOAT) {
    ILayer* cast = n.net().addCast(x, DataType::kFLOAT);
    if (!cast) return n.layerError();
    xf = cast->getOutput(0);
  }
  ReduceParams mean{ReduceOp::kMEAN, 0u, true};
  for (int32_t i = axis; i < rank; ++i) mean.axesMask |= 1u << i;
  ILayer* m = n.net().addReduce(*xf, mean);
  if (!m) return n.layerError();
  if (n.outputUsed(1)) KILN_RETURN_IF_ERROR(n.setOutput(1, m->getOutput(0)));
  if (!n.outputUsed(2)) return Status::ok();
  ILayer* d = n.net().addElementwise(*xf, *m->getOutput(0), ElementwiseOp::kSUB);
  if (!d) return n.layerError();
  ILayer* sq = n.net().addElementwise(*d->getOutput(0), *d->getOutput(0), ElementwiseOp::kMUL);
  if (!sq) return n.layerError();
  ILayer* var = n.net().addReduce(*sq->getOutput(0), mean);
  if (!var) return n.layerError();
  ConstTensor c;
  c.type = DataType::kFLOAT;
  c.f = {epsilon};  // a scalar (rank 0), broadcast by the addition
  Value val;
  val.constant = std::make_shared<const ConstTensor>(std::move(c));
  ITensor* eps = nullptr;
  KILN_RETURN_IF_ERROR(constantTensor(n.ctx, val, n.node.output(0) + "_ln_epsilon", eps));
  ILayer* shifted = n.net().addElementwise(*var->getOutput(0), *eps, ElementwiseOp::kADD);
  if (!shifted) return n.layerError();
  ILayer* root = n.net().addActivation(*shifted->getOutput(0), {ActivationType::kSQRT, 0.f, 0.f});
  if (!root) return n.layerError();
  ILayer* inv = n.net().addActivation(*root->getOutput(0), {ActivationType::kRECIPROCAL, 0.f, 0.f});
  if (!inv) return n.layerError();
  return n.setOutput(2, inv->getOutput(0));
}

// LayerNormalization (opset 17): attributes axis (default -1), epsilon (1e-5) and stash_type,
// the type of the statistics, of which kiln has only 1 (float: the layer's statistics are always
// FP32). Scale and the optional B may be tensors or constants.
Status importLayerNorm(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 3));
  const int64_t stash = n.attrInt("stash_type", 1);
  if (stash != 1)
    return n.unsupportedError("stash_type " + std::to_string(stash) +
                              " is not supported: kiln computes the statistics in float "
                              "(stash_type 1) whatever the input type");
  ITensor *x = nullptr, *scale = nullptr, *bias = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  KILN_RETURN_IF_ERROR(n.tensor(1, scale));
  if (n.hasInput(2)) KILN_RETURN_IF_ERROR(n.tensor(2, bias));
  LayerNormalizationParams p;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", -1), x->getDimensions().nbDims, p.axis));
  p.epsilon = n.attrFloat("epsilon", 1e-5f);
  ILayer* y = bias ? n.net().addLayer(p, {x, scale, bias}) : n.net().addLayer(p, {x, scale});
  KILN_RETURN_IF_ERROR(n.setLayerOutputs(y));
  if (!n.outputUsed(1) && !n.outputUsed(2)) return Status::ok();
  return layerNormStatistics(n, *x, p.axis, p.epsilon);
}

// RMSNormalization (opset 23): inputs X and scale, attributes axis (default -1), epsilon (1e-5)
// and stash_type (1 only, as for LayerNormalization). kiln imports it at any opset it parses, as
// it does every op whose form never changed: a model asks for the op, and there is one meaning.
Status importRmsNorm(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  const int64_t stash = n.attrInt("stash_type", 1);
  if (stash != 1)
    return n.unsupportedError("stash_type " + std::to_string(stash) +
                              " is not supported: kiln computes the statistics in float "
                              "(stash_type 1) whatever the input type");
  ITensor *x = nullptr, *scale = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  KILN_RETURN_IF_ERROR(n.tensor(1, scale));
  RMSNormalizationParams p;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", -1), x->getDimensions().nbDims, p.axis));
  p.epsilon = n.attrFloat("epsilon", 1e-5f);
  return n.setLayerOutputs(n.net().addLayer(p, {x, scale}));
}

// GroupNormalization's Scale or B (input i) as the layer's per-channel [C]. Opset 21 gives them per
// channel; opset 18 gave one value per group ([G], which ONNX deprecated as a mistake), each then
// repeated for the group's C / G channels: folded when constant, else reshape [G, 1], expand to
// [G, C / G] and reshape to [C]. A model below opset 18 (kiln imports the op at any opset) is
// read as opset 18.
Status groupNormParam(NodeContext& n, int32_t i, int64_t channels, int64_t groups, ITensor*& out) {
  const char* what = i == 1 ? "scale" : "bias";
  const Dims d = n.dims(i);
  const bool perChannel = n.opset() >= 21;
  const int64_t want = perChannel ? channels : groups;
  if (d.nbDims != 1 || d.d[0] != want) {
    std::string message = std::string(what) + " is " + dimsText(d) + ", expected [" +
                          std::to_string(want) + "] (one per " +
                          (perChannel ? "channel" : "group") + " at opset " +
                          std::to_string(n.opset()) + ")";
    if (!perChannel && d.nbDims == 1 && d.d[0] == channels)
      message += "; one per channel is opset 21's form, and this model imports opset " +
                 std::to_string(n.opset());
    return n.error(message);
  }
  if (perChannel || groups == channels) return n.tensor(i, out);
  const int64_t perGroup = channels / groups;
  if (n.isConstant(i)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(i, c));
    ConstTensor wide = ConstTensor::make(c->type, makeDims({channels}));
    for (int64_t k = 0; k < channels; ++k) wide.set(k, c->at(k / perGroup));
    Value v;
    v.constant = std::make_shared<const ConstTensor>(std::move(wide));
    return constantTensor(n.ctx, v, n.node.output(0) + "_gn_" + what, out);
  }
  ITensor* p = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(i, p));
  ILayer* column = addReshape(n.net(), *p, makeDims({groups, 1}));
  if (!column) return n.layerError();
  ILayer* wide =
      n.net().addExpand(*column->getOutput(0), ExpandParams{makeDims({groups, perGroup})});
  if (!wide) return n.layerError();
  ILayer* flat = addReshape(n.net(), *wide->getOutput(0), makeDims({channels}));
  if (!flat) return n.layerError();
  out = flat->getOutput(0);
  return Status::ok();
}

// GroupNormalization (opsets 18 and 21): attributes num_groups (required), epsilon (1e-5) and,
// from opset 21, stash_type (1 only, as for LayerNormalization).
Status importGroupNorm(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(3, 3));
  if (!n.attr("num_groups")) return n.error("attribute 'num_groups' is required");
  const int64_t groups = n.attrInt("num_groups", 1);
  const int64_t stash = n.attrInt("stash_type", 1);
  if (stash != 1)
    return n.unsupportedError("stash_type " + std::to_string(stash) +
                              " is not supported: kiln computes the statistics in float "
                              "(stash_type 1) whatever the input type");
  ITensor* x = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  const Dims xd = x->getDimensions();
  if (xd.nbDims < 2) return n.error("X must be [N, C, ...], got " + dimsText(xd));
  const int64_t channels = xd.d[1];
  if (groups < 1 || groups > channels || channels % groups != 0)
    return n.error("num_groups " + std::to_string(groups) + " does not divide the " +
                   std::to_string(channels) + " channels of X " + dimsText(xd));
  ITensor *scale = nullptr, *bias = nullptr;
  KILN_RETURN_IF_ERROR(groupNormParam(n, 1, channels, groups, scale));
  KILN_RETURN_IF_ERROR(groupNormParam(n, 2, channels, groups, bias));
  GroupNormalizationParams p;
  p.numGroups = int32_t(groups);
  p.epsilon = n.attrFloat("epsilon", 1e-5f);
  return n.setLayerOutputs(n.net().addLayer(p, {x, scale, bias}));
}

Status importLrn(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  LRNParams p;
  const auto* size = n.attr("size");
  if (!size) return n.error("attribute 'size' is required");
  p.size = int32_t(n.attrInt("size", 1));
  p.alpha = n.attrFloat("alpha", 1e-4f);
  p.beta = n.attrFloat("beta", 0.75f);
  p.bias = n.attrFloat("bias", 1.f);
  return n.setLayerOutputs(n.net().addLRN(*in, p));
}

}  // namespace

void addConvImporters(ImporterTable& t) {
  t.push_back({"Conv", importConv, {1, 2}});
  t.push_back({"ConvTranspose", importConvTranspose, {1, 2}});
  t.push_back({"BatchNormalization", importBatchNorm, {1, 2, 3, 4}});
  t.push_back({"InstanceNormalization", importInstanceNorm});
  t.push_back({"LayerNormalization", importLayerNorm});
  t.push_back({"RMSNormalization", importRmsNorm});
  t.push_back({"GroupNormalization", importGroupNorm});
  t.push_back({"LRN", importLrn});
}

}  // namespace kiln::onnx_import
