// One built-in op as the rest of kiln sees it: Op<LayerType::kSOFTMAX> (alias ops::Softmax) gathers
// the op's parameter type, its name, its shape and type rule and its tactic lists. The op's unit,
// src/ops/<op>/, defines these members; this header declares them for every op on the list
// (kiln/op_list.h), so an op that forgets one fails to link.
//
//   inputs       how many inputs the op takes (and their names, for messages).
//   shapeRule    the shape and type rule: output shapes from the parameters and input shapes,
//                given as many inputs as `inputs` allows, each of a valid type, rank and size.
//   infer        what everyone calls (generated, op_table.cpp): the input count and every input
//                shape checked, then shapeRule; an error says what is wrong (the caller names
//                the layer). Every backend's tactics check their configuration against it, and
//                the plan reader re-runs it on every step.
//   computeTypes the type rule: given the types the inputs have, the types its kernels compute
//                in, per input (floats in fp32 for most ops; types kept where the op is exact on
//                them: data movers, integer arithmetic, indices), or false with a reason. The
//                builder converts the inputs to them (and BuilderConfig::builtinHalf then asks for
//                fp16 instead of fp32 where the target has a kernel).
//   cpuTactics   the CPU backend's implementations, fastest first, the plain reference last.
//   cudaTactics  the CUDA backend's (defined in the unit's *_cuda.* files, built with CUDA only).
//
// A unit ends each backend's file with its tactic table and the accessor, defined by its
// qualified name (no namespace to reopen):
//   constexpr Tactic kTactics[] = {{"fast", &createFast}, {"reference", &createReference}};
//   }  // namespace
//   }  // namespace kiln::cpu
//   std::span<const kiln::Tactic> kiln::ops::Softmax::cpuTactics() { return cpu::kTactics; }
// Plans and timing caches record tactics by name: a name, once used, never changes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "backends/kernel.h"
#include "core/tensor_shape.h"
#include "kiln/layers.h"
#include "kiln/status.h"

namespace kiln::ops {

// How many inputs an op takes: [min, max], max -1 for any number; `names` for messages
// ("x, W[, bias]").
struct InputCount {
  int32_t min;
  int32_t max;
  const char* names;
};

// The shapes a shape rule takes (one per input) and gives (one per output).
using Shapes = std::vector<TensorShape>;

template <LayerType T>
struct Op;

#define KILN_DECLARE_OP(ENUM, VALUE, NAME)                                                \
  template <>                                                                             \
  struct Op<LayerType::k##ENUM> {                                                         \
    using Params = NAME##Params;                                                          \
    static constexpr LayerType type = LayerType::k##ENUM;                                 \
    static constexpr const char* name = #NAME;                                            \
    static const InputCount inputs;                                                       \
    static Status shapeRule(const Params& params, const Shapes& inputs, Shapes& outputs); \
    static Status infer(const Params& params, const Shapes& inputs, Shapes& outputs);     \
    static bool computeTypes(const Params& params, std::vector<DataType>& types,          \
                             std::string& why);                                           \
    static std::span<const Tactic> cpuTactics();                                          \
    static std::span<const Tactic> cudaTactics();                                         \
  };                                                                                      \
  using NAME = Op<LayerType::k##ENUM>;
KILN_BUILTIN_OPS(KILN_DECLARE_OP)
#undef KILN_DECLARE_OP

// f(Op{}) with Op the ops::Op<T> that `type` names (its members are static: the argument only
// carries the type), or otherwise() for kCONSTANT, kPLUGIN and invalid values: the one switch
// over the op list that each dispatch by LayerType goes through (op_table.cpp).
template <class F, class Otherwise>
auto withOp(LayerType type, F&& f, Otherwise&& otherwise) {
  switch (type) {
#define KILN_WITH_OP_CASE(ENUM, VALUE, NAME) \
  case LayerType::k##ENUM:                   \
    return f(NAME{});
    KILN_BUILTIN_OPS(KILN_WITH_OP_CASE)
#undef KILN_WITH_OP_CASE
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  return otherwise();
}

}  // namespace kiln::ops
