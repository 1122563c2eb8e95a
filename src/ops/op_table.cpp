#include "ops/op_table.h"

#include <string>

#include "ops/convolution/convolution_semantics.h"
#include "ops/linear/linear_semantics.h"
#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln {
namespace {

template <class OpT>
Status inferAs(const LayerParams& params, const std::vector<TensorShape>& in,
               std::vector<TensorShape>& out) {
  const auto* p = std::get_if<typename OpT::Params>(&params);
  if (!p) {
    return invalidArgument(std::string(OpT::name) +
                           " layer carries parameters of another layer type");
  }
  out.clear();
  return OpT::infer(*p, in, out);
}

}  // namespace

Status inferLayerOutputs(LayerType type, const LayerParams& params,
                         const std::vector<TensorShape>& in, std::vector<TensorShape>& out) {
  return ops::withOp(
      type, [&](auto op) { return inferAs<decltype(op)>(params, in, out); },
      [&] {
        return invalidArgument(std::string(layerTypeName(type)) +
                               " layers have no built-in shape inference");
      });
}

namespace ops {

#define KILN_DEFINE_INFER(ENUM, VALUE, NAME)                                                  \
  Status NAME::infer(const Params& params, const Shapes& in, Shapes& out) {                   \
    KILN_RETURN_IF_ERROR(shape::checkInputs(name, inputs.min, inputs.max, inputs.names, in)); \
    return shapeRule(params, in, out);                                                        \
  }
KILN_BUILTIN_OPS(KILN_DEFINE_INFER)
#undef KILN_DEFINE_INFER

bool computeTypes(LayerType type, const LayerParams& params, std::vector<DataType>& types,
                  std::string& why) {
  switch (type) {
#define KILN_COMPUTE_TYPES_CASE(ENUM, VALUE, NAME)          \
  case LayerType::k##ENUM:                                  \
    if (const auto* p = std::get_if<NAME##Params>(&params)) \
      return NAME::computeTypes(*p, types, why);            \
    break;
    KILN_BUILTIN_OPS(KILN_COMPUTE_TYPES_CASE)
#undef KILN_COMPUTE_TYPES_CASE
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  why = std::string(layerTypeName(type)) + " layers have no built-in type rule";
  return false;
}

int32_t residualInput(LayerType type, const LayerParams& params, size_t nbInputs) {
  if (type == LayerType::kCONVOLUTION)
    if (const auto* p = std::get_if<ConvolutionParams>(&params))
      return convolution::InputSlots(*p, int64_t(nbInputs)).residual;
  if (type == LayerType::kLINEAR)
    if (const auto* p = std::get_if<LinearParams>(&params)) return linear::InputSlots(*p).residual;
  return -1;
}

std::span<const Tactic> cpuTactics(LayerType type) {
  return withOp(
      type, [](auto op) { return decltype(op)::cpuTactics(); },
      [] { return std::span<const Tactic>(); });
}

const Tactic* findTactic(std::span<const Tactic> tactics, std::string_view name) {
  for (const Tactic& tactic : tactics)
    if (name == tactic.name) return &tactic;
  return nullptr;
}

}  // namespace ops
}  // namespace kiln
