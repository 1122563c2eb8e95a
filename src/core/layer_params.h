// A layer's parameters as one value: the variant of every built-in op's parameter struct,
// generated from kiln/op_list.h. The alternative matches the LayerType; constants and plugins
// (whose data lives elsewhere) carry std::monostate.
#pragma once

#include <cstddef>
#include <variant>

#include "kiln/layers.h"

namespace kiln {

using LayerParams = std::variant<std::monostate
#define KILN_LAYER_PARAMS_ALTERNATIVE(ENUM, VALUE, NAME) , NAME##Params
                                     KILN_BUILTIN_OPS(KILN_LAYER_PARAMS_ALTERNATIVE)
#undef KILN_LAYER_PARAMS_ALTERNATIVE
                                 >;
static_assert(std::variant_size_v<LayerParams> == KILN_BUILTIN_OP_COUNT + 1,
              "one LayerParams alternative per op, plus monostate");

// The LayerParams alternative (variant index) a layer of this type carries: 0 (monostate) for
// constants and plugins, std::variant_npos for a value that is no layer type.
size_t paramsIndexFor(LayerType type);

// The parameters of a layer of `type` from a pointer to its parameter struct (the network API's
// untyped addBuiltinLayer); false when `type` is no built-in op or `bytes` is not that struct's
// size.
bool layerParamsFromStruct(LayerType type, const void* params, size_t bytes, LayerParams& out);

// Whether `type` is one of the built-in ops (not kCONSTANT, not kPLUGIN, not out of range).
bool isBuiltinOp(LayerType type);

}  // namespace kiln
