#include "core/layer_params.h"

namespace kiln {

size_t paramsIndexFor(LayerType type) {
  switch (type) {
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      return 0;
#define KILN_PARAMS_INDEX_CASE(ENUM, VALUE, NAME) \
  case LayerType::k##ENUM:                        \
    return LayerParams(NAME##Params{}).index();
      KILN_BUILTIN_OPS(KILN_PARAMS_INDEX_CASE)
#undef KILN_PARAMS_INDEX_CASE
  }
  return std::variant_npos;
}

bool layerParamsFromStruct(LayerType type, const void* params, size_t bytes, LayerParams& out) {
  if (!params) return false;
  switch (type) {
#define KILN_PARAMS_FROM_STRUCT_CASE(ENUM, VALUE, NAME) \
  case LayerType::k##ENUM:                              \
    if (bytes != sizeof(NAME##Params)) return false;    \
    out = *static_cast<const NAME##Params*>(params);    \
    return true;
    KILN_BUILTIN_OPS(KILN_PARAMS_FROM_STRUCT_CASE)
#undef KILN_PARAMS_FROM_STRUCT_CASE
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  return false;
}

bool isBuiltinOp(LayerType type) {
  switch (type) {
#define KILN_IS_OP_CASE(ENUM, VALUE, NAME) case LayerType::k##ENUM:
    KILN_BUILTIN_OPS(KILN_IS_OP_CASE)
#undef KILN_IS_OP_CASE
    return true;
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  return false;
}

}  // namespace kiln
