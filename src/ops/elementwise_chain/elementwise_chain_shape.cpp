// The shape and type rule of ElementwiseChain (see ops/op.h): float inputs of one type and exactly
// the first input's shape (no broadcasting), output as the first input; every step checked, so
// kernels and plans can trust the parameters.
#include <string>
#include <vector>

#include "ops/elementwise_chain/elementwise_chain_semantics.h"
#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount ElementwiseChain::inputs = {1, 1 + kMaxElementwiseChainSteps,
                                             "x, then the operands of its input steps"};

namespace {

Status badStep(int32_t s, const std::string& what) {
  return invalidArgument("elementwise_chain: step " + std::to_string(s) + ": " + what);
}

}  // namespace

Status ElementwiseChain::shapeRule(const ElementwiseChainParams& p, const Shapes& in, Shapes& out) {
  if (p.steps < 1 || p.steps > kMaxElementwiseChainSteps)
    return invalidArgument("elementwise_chain: needs 1 to " +
                           std::to_string(kMaxElementwiseChainSteps) + " steps, got " +
                           std::to_string(p.steps));
  const DataType type = in[0].type;
  if (!isFloatType(type))
    return invalidArgument(std::string("elementwise_chain: needs floating-point inputs, got ") +
                           dataTypeName(type));
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].type != type || in[i].dims != in[0].dims)
      return invalidArgument("elementwise_chain: input " + std::to_string(i) + " is " +
                             dataTypeName(in[i].type) + " " + dimsString(in[i].dims) +
                             ", not x's " + dataTypeName(type) + " " + dimsString(in[0].dims));
  std::vector<bool> read(in.size(), false);
  for (int32_t s = 0; s < kMaxElementwiseChainSteps; ++s) {
    if (s >= p.steps) {
      if (p.kind[s] || p.code[s] || p.alpha[s] || p.beta[s] || p.input[s] || p.operandFirst[s])
        return badStep(s, "beyond the " + std::to_string(p.steps) + " steps, must be all 0");
      continue;
    }
    if (p.kind[s] < 0 || p.kind[s] >= enumCount(ElementwiseChainStep{}))
      return badStep(s, "unknown kind " + std::to_string(p.kind[s]));
    if (p.operandFirst[s] != 0 && p.operandFirst[s] != 1)
      return badStep(s, "operandFirst must be 0 or 1");
    const auto kind = static_cast<ElementwiseChainStep>(p.kind[s]);
    if (kind == ElementwiseChainStep::kACTIVATION) {
      if (p.code[s] < 0 || p.code[s] >= enumCount(ActivationType{}) ||
          static_cast<ActivationType>(p.code[s]) == ActivationType::kNOT)
        return badStep(s, "no float activation " + std::to_string(p.code[s]));
      if (p.input[s] != 0 || p.operandFirst[s] != 0)
        return badStep(s, "an activation has no operand");
      continue;
    }
    if (p.code[s] < 0 || p.code[s] >= enumCount(ElementwiseOp{}) ||
        !elementwise_chain::isChainOp(static_cast<ElementwiseOp>(p.code[s])))
      return badStep(s, "no float elementwise op " + std::to_string(p.code[s]));
    if (kind == ElementwiseChainStep::kSCALAR) {
      if (p.input[s] != 0 || p.beta[s] != 0) return badStep(s, "a scalar step reads no input");
      continue;
    }
    if (p.input[s] < 1 || p.input[s] >= static_cast<int32_t>(in.size()))
      return badStep(s, "operand input " + std::to_string(p.input[s]) +
                            " is not one of inputs 1.." + std::to_string(in.size() - 1));
    if (p.alpha[s] != 0 || p.beta[s] != 0) return badStep(s, "an input step has no scalar");
    read[static_cast<size_t>(p.input[s])] = true;
  }
  for (size_t i = 1; i < in.size(); ++i)
    if (!read[i])
      return invalidArgument("elementwise_chain: no step reads input " + std::to_string(i));
  out.assign(1, in[0]);
  return Status::ok();
}

bool ElementwiseChain::computeTypes(const ElementwiseChainParams&, std::vector<DataType>& types,
                                    std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
