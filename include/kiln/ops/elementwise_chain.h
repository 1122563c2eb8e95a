// Parameters of the built-in ElementwiseChain layer (src/ops/elementwise_chain/): up to
// kMaxElementwiseChainSteps per-element steps applied in order to the layer's first input, each an
// activation or a float elementwise op whose other operand is a scalar or another input of
// exactly the output's shape. What elementwise_chain_fusion makes of a run of Elementwise and
// Activation layers, so that it reads its inputs once and writes once.
#pragma once

#include <cstdint>

namespace kiln {

enum class ElementwiseChainStep : int32_t {
  kACTIVATION = 0,  // code: an ActivationType with a float form; alpha, beta: its parameters
  kSCALAR = 1,      // code: an ElementwiseOp; the other operand is alpha
  kINPUT = 2,       // code: an ElementwiseOp; the other operand is input `input`
};
constexpr int32_t enumCount(ElementwiseChainStep) { return 3; }

constexpr int32_t kMaxElementwiseChainSteps = 8;

struct ElementwiseChainParams {
  int32_t steps = 0;  // 1 .. kMaxElementwiseChainSteps
  // Per step (entries from `steps` on are unused and stay 0). Kinds and codes are int32_t
  // (ElementwiseChainStep, ActivationType or ElementwiseOp values); the shape rule checks them.
  int32_t kind[kMaxElementwiseChainSteps] = {};
  int32_t code[kMaxElementwiseChainSteps] = {};
  float alpha[kMaxElementwiseChainSteps] = {};
  float beta[kMaxElementwiseChainSteps] = {};
  int32_t input[kMaxElementwiseChainSteps] = {};  // kINPUT: the operand's input index, 1 on
  // 1: the operand is the op's first argument (c - v, c / v); 0: the value so far is.
  int32_t operandFirst[kMaxElementwiseChainSteps] = {};

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("steps", p.steps);
    v("kind", p.kind);
    v("code", p.code);
    v("alpha", p.alpha);
    v("beta", p.beta);
    v("input", p.input);
    v("operandFirst", p.operandFirst);
  }
};

// Appends a step to p (the shape rule checks it); false, and p unchanged, when p has all
// kMaxElementwiseChainSteps already.
inline bool appendChainStep(ElementwiseChainParams& p, ElementwiseChainStep kind, int32_t code,
                            float alpha = 0.f, float beta = 0.f, int32_t input = 0,
                            bool operandFirst = false) {
  if (p.steps < 0 || p.steps >= kMaxElementwiseChainSteps) return false;
  const int32_t s = p.steps++;
  p.kind[s] = static_cast<int32_t>(kind);
  p.code[s] = code;
  p.alpha[s] = alpha;
  p.beta[s] = beta;
  p.input[s] = input;
  p.operandFirst[s] = operandFirst ? 1 : 0;
  return true;
}

}  // namespace kiln
