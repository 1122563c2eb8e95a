// One-input element-wise ops -> activation layers (folded when the input is a constant).
#include <cmath>
#include <limits>

#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

double evalActivation(const ActivationParams& p, double x) {
  switch (p.type) {
    case ActivationType::kRELU:
      return x > 0 ? x : 0;
    case ActivationType::kLEAKY_RELU:
      return x < 0 ? p.alpha * x : x;
    case ActivationType::kSIGMOID:
      return 1 / (1 + std::exp(-x));
    case ActivationType::kTANH:
      return std::tanh(x);
    case ActivationType::kCLIP:
      return std::min(std::max(x, double(p.alpha)), double(p.beta));
    case ActivationType::kHARD_SWISH:
      return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
    case ActivationType::kELU:
      return x < 0 ? p.alpha * (std::exp(x) - 1) : x;
    case ActivationType::kSELU:
      return p.beta * (x <= 0 ? p.alpha * (std::exp(x) - 1) : x);
    case ActivationType::kSOFTPLUS:
      return std::log1p(std::exp(x));
    case ActivationType::kHARD_SIGMOID:
      return std::max(0.0, std::min(1.0, p.alpha * x + p.beta));
    case ActivationType::kEXP:
      return std::exp(x);
    case ActivationType::kLOG:
      return std::log(x);
    case ActivationType::kSQRT:
      return std::sqrt(x);
    case ActivationType::kNEG:
      return -x;
    case ActivationType::kABS:
      return std::fabs(x);
    case ActivationType::kRECIPROCAL:
      return 1 / x;
    case ActivationType::kERF:
      return std::erf(x);
    case ActivationType::kGELU:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ActivationType::kGELU_TANH:
      return 0.5 * x *
             (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case ActivationType::kMISH:
      return x * std::tanh(std::log1p(std::exp(x)));
    case ActivationType::kSIN:
      return std::sin(x);
    case ActivationType::kCOS:
      return std::cos(x);
    case ActivationType::kSILU:
      return x / (1 + std::exp(-x));
    case ActivationType::kNOT:
      return x == 0;
  }
  return x;
}

bool integerSafe(ActivationType t) {
  return t == ActivationType::kRELU || t == ActivationType::kNEG || t == ActivationType::kABS ||
         t == ActivationType::kNOT || t == ActivationType::kCLIP;
}

Status importActivation(NodeContext& n, ActivationParams p) {
  if (n.nbInputs() < 1 || !n.hasInput(0)) return n.error("input 0 is missing");
  const bool isNot = p.type == ActivationType::kNOT;
  if (isNot && n.type(0) != DataType::kBOOL) return n.error("input must be bool");
  if (!isNot && n.type(0) == DataType::kBOOL) return n.error("input must be numeric, not bool");
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    if (c->isFloat() || integerSafe(p.type)) {
      ConstTensor out = ConstTensor::make(c->type, c->dims);
      for (int64_t k = 0; k < c->count(); ++k) out.set(k, evalActivation(p, c->at(k)));
      return n.setOutput(0, std::move(out));
    }
  }
  const DataType t = n.type(0);
  if (!isNot && t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kBF16)
    return n.unsupportedError(std::string("run-time ") + dataTypeName(t) +
                              " input is not supported (floating point only)");
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  return n.setLayerOutputs(n.net().addActivation(*in, p));
}

Importer simple(ActivationType type, float alpha = 0.f, float beta = 0.f) {
  return [=](NodeContext& n) { return importActivation(n, {type, alpha, beta}); };
}

// Clip with a bound known only at run time (a graph input): Min(Max(x, min), max), each bound a
// scalar broadcast over x. A min above max gives max everywhere, as ONNX specifies.
Status importClipByTensors(NodeContext& n) {
  ITensor* x = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  for (int32_t i = 1; i <= 2; ++i) {
    if (!n.hasInput(i)) continue;
    if (volume(n.dims(i)) != 1)
      return n.error(i == 1 ? "min must be a scalar" : "max must be a scalar");
    ITensor* bound = nullptr;
    KILN_RETURN_IF_ERROR(n.tensor(i, bound));
    ILayer* layer =
        n.net().addElementwise(*x, *bound, i == 1 ? ElementwiseOp::kMAX : ElementwiseOp::kMIN);
    if (!layer) return n.layerError();
    x = layer->getOutput(0);
  }
  return n.setOutput(0, x);
}

Status importClip(NodeContext& n) {
  ActivationParams p{ActivationType::kCLIP, -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::infinity()};
  if (n.opset() < 11) {
    p.alpha = n.attrFloat("min", p.alpha);
    p.beta = n.attrFloat("max", p.beta);
  } else if ((n.hasInput(1) && !n.isConstant(1)) || (n.hasInput(2) && !n.isConstant(2))) {
    return importClipByTensors(n);
  } else {
    for (int32_t i = 1; i <= 2; ++i) {
      if (!n.hasInput(i)) continue;
      const ConstTensor* c = nullptr;
      KILN_RETURN_IF_ERROR(n.constant(i, c));
      if (c->count() != 1) return n.error(i == 1 ? "min must be a scalar" : "max must be a scalar");
      (i == 1 ? p.alpha : p.beta) = float(c->at(0));
    }
  }
  return importActivation(n, p);
}

// IsNaN(x) as Not(Equal(x, x)): NaN is the one value unequal to itself, in every float type.
// (PyTorch's scaled_dot_product_attention exports guard the softmax with it.)
Status importIsNaN(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  const DataType t = n.type(0);
  if (t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kBF16)
    return n.error(std::string("input must be floating point, got ") + dataTypeName(t));
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    ConstTensor out = ConstTensor::make(DataType::kBOOL, c->dims);
    for (int64_t k = 0; k < c->count(); ++k) out.set(k, std::isnan(c->f[size_t(k)]) ? 1 : 0);
    return n.setOutput(0, std::move(out));
  }
  ITensor* x = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  ILayer* same = n.net().addElementwise(*x, *x, ElementwiseOp::kEQUAL);
  if (!same) return n.layerError();
  return n.setLayerOutputs(n.net().addActivation(*same->getOutput(0), {ActivationType::kNOT}));
}

}  // namespace

void addActivationImporters(ImporterTable& t) {
  using A = ActivationType;
  t.push_back({"Relu", simple(A::kRELU)});
  t.push_back({"LeakyRelu", [](NodeContext& n) {
                 return importActivation(n, {A::kLEAKY_RELU, n.attrFloat("alpha", 0.01f), 0.f});
               }});
  t.push_back({"Sigmoid", simple(A::kSIGMOID)});
  t.push_back({"Tanh", simple(A::kTANH)});
  t.push_back({"Clip", importClip, {1, 2}});
  t.push_back({"HardSigmoid", [](NodeContext& n) {
                 return importActivation(
                     n, {A::kHARD_SIGMOID, n.attrFloat("alpha", 0.2f), n.attrFloat("beta", 0.5f)});
               }});
  t.push_back({"HardSwish", simple(A::kHARD_SWISH)});
  t.push_back({"Elu", [](NodeContext& n) {
                 return importActivation(n, {A::kELU, n.attrFloat("alpha", 1.f), 0.f});
               }});
  t.push_back({"Selu", [](NodeContext& n) {
                 return importActivation(
                     n, {A::kSELU, n.attrFloat("alpha", 1.67326319217681884765625f),
                         n.attrFloat("gamma", 1.05070102214813232421875f)});
               }});
  t.push_back({"Softplus", simple(A::kSOFTPLUS)});
  // Mish (opset 18; like every op whose form never changed, imported whatever the model's opset).
  t.push_back({"Mish", simple(A::kMISH)});
  t.push_back({"Sin", simple(A::kSIN)});
  t.push_back({"Cos", simple(A::kCOS)});
  t.push_back({"Erf", simple(A::kERF)});
  t.push_back({"Exp", simple(A::kEXP)});
  t.push_back({"Log", simple(A::kLOG)});
  t.push_back({"Sqrt", simple(A::kSQRT)});
  t.push_back({"Neg", simple(A::kNEG)});
  t.push_back({"Abs", simple(A::kABS)});
  t.push_back({"Reciprocal", simple(A::kRECIPROCAL)});
  t.push_back({"Not", simple(A::kNOT)});
  t.push_back({"IsNaN", importIsNaN});
  // Gelu (opset 20; the exporters of earlier opsets write it out, and the builder's gelu_fusion
  // pass puts it back together).
  t.push_back(
      {"Gelu", [](NodeContext& n) {
         const std::string approximate = n.attrString("approximate", "none");
         if (approximate != "none" && approximate != "tanh")
           return n.error("approximate must be 'none' or 'tanh', got '" + approximate + "'");
         return importActivation(n, {approximate == "tanh" ? A::kGELU_TANH : A::kGELU, 0.f, 0.f});
       }});
}

}  // namespace kiln::onnx_import
