// Parameters of the built-in Activation layer (one-input element-wise functions;
// src/ops/activation/).
#pragma once

#include <cstdint>

namespace kiln {

enum class ActivationType : int32_t {
  kRELU = 0,
  kLEAKY_RELU = 1,  // x < 0 ? alpha * x : x
  kSIGMOID = 2,
  kTANH = 3,
  kCLIP = 4,          // min(max(x, alpha), beta)
  kHARD_SWISH = 5,    // x * min(max(x + 3, 0), 6) / 6
  kELU = 6,           // x < 0 ? alpha * (exp(x) - 1) : x
  kSELU = 7,          // beta * (x <= 0 ? alpha * (exp(x) - 1) : x)   (beta is ONNX gamma)
  kSOFTPLUS = 8,      // log(1 + exp(x))
  kHARD_SIGMOID = 9,  // max(0, min(1, alpha * x + beta))
  kEXP = 10,
  kLOG = 11,
  kSQRT = 12,
  kNEG = 13,
  kABS = 14,
  kRECIPROCAL = 15,
  kERF = 16,
  kNOT = 17,        // logical not, kBOOL in and out
  kGELU = 18,       // x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2)))   (ONNX Gelu, "none")
  kGELU_TANH = 19,  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))   ("tanh")
  kMISH = 20,       // x * tanh(softplus(x))   (ONNX Mish, opset 18)
  kSIN = 21,        // the rotary position embeddings of Llama-style decoders
  kCOS = 22,
  kSILU = 23,  // x * sigmoid(x)   (nn.SiLU, which exporters write as Sigmoid then Mul)
};
constexpr int32_t enumCount(ActivationType) { return 24; }

struct ActivationParams {
  ActivationType type = ActivationType::kRELU;
  float alpha = 0.f;
  float beta = 0.f;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("type", p.type);
    v("alpha", p.alpha);
    v("beta", p.beta);
  }
};

}  // namespace kiln
