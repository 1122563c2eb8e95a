// The value rule of ElementwiseChain, shared by the CPU tactic (elementwise_chain_cpu.cpp) and the
// CUDA kernel (elementwise_chain_cuda.cu): each step as the Activation or Elementwise layer it
// replaces computes it (activation_semantics.h, elementwise_semantics.h), in FP32, with the value
// so far rounded only once, on store after the last step (the unfused layers round after each).
#pragma once

#include "core/host_device.h"
#include "kiln/ops/elementwise_chain.h"
#include "ops/activation/activation_semantics.h"
#include "ops/elementwise/elementwise_semantics.h"

namespace kiln::ops::elementwise_chain {

// The elementwise ops a step may apply: those with a float result on float inputs.
KILN_HOST_DEVICE constexpr bool isChainOp(ElementwiseOp op) {
  return !elementwise::isComparison(op) && !elementwise::isLogical(op) &&
         !elementwise::isIntegerOnly(op);
}

// Step s applied to the value v so far; `operand` is the step's input element (kINPUT steps).
KILN_HOST_DEVICE inline float applyStep(const ElementwiseChainParams& p, int32_t s, float v,
                                        float operand) {
  const auto kind = static_cast<ElementwiseChainStep>(p.kind[s]);
  if (kind == ElementwiseChainStep::kACTIVATION)
    return activation::activateByType(static_cast<ActivationType>(p.code[s]), v, p.alpha[s],
                                      p.beta[s]);
  const float other = kind == ElementwiseChainStep::kSCALAR ? p.alpha[s] : operand;
  const auto op = static_cast<ElementwiseOp>(p.code[s]);
  return p.operandFirst[s] ? elementwise::applyArithmetic(op, other, v)
                           : elementwise::applyArithmetic(op, v, other);
}

}  // namespace kiln::ops::elementwise_chain
