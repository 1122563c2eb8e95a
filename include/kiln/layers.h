// kiln's layer types and the parameters of its built-in layers. Each parameter struct
// (kiln/ops/<op>.h) is what the network API takes when a layer is added, what the builder and
// kernels read, and what the plan file stores; kiln/op_list.h is the list of them.
#pragma once

#include <cstdint>

#include "kiln/op_list.h"
#include "kiln/types.h"

namespace kiln {

// Enum values are part of the plan format: never reorder, only append (in kiln/op_list.h).
enum class LayerType : int32_t {
  kCONSTANT = 0,  // a network constant (weights): data, no kernel
  kPLUGIN = 11,   // a custom layer, run by its plugin
#define KILN_LAYER_TYPE_VALUE(ENUM, VALUE, NAME) k##ENUM = VALUE,
  KILN_BUILTIN_OPS(KILN_LAYER_TYPE_VALUE)
#undef KILN_LAYER_TYPE_VALUE
};
// Every value in [0, kLayerTypeCount) is a layer type (the built-in ops plus kCONSTANT and
// kPLUGIN) or one of op_list.h's reserved values, which isLayerTypeValue() tells apart.
constexpr int32_t kLayerTypeCount = KILN_BUILTIN_OP_COUNT + 2 + KILN_RESERVED_OP_COUNT;
// Whether `value` is reserved for an op that has not landed (kiln/op_list.h).
constexpr bool isReservedLayerTypeValue(int32_t value) {
#define KILN_RESERVED_OP_TEST(VALUE) \
  if (value == VALUE) return true;
  KILN_RESERVED_OP_VALUES(KILN_RESERVED_OP_TEST)
#undef KILN_RESERVED_OP_TEST
  return false;
}
// Whether `value` is a layer type: in range and not reserved.
constexpr bool isLayerTypeValue(int32_t value) {
  return value >= 0 && value < kLayerTypeCount && !isReservedLayerTypeValue(value);
}
// "Convolution", "Softmax", ...; "Invalid" for a value that is not a layer type.
const char* layerTypeName(LayerType type);

// The layer type whose parameters are P: LayerTypeOf<SoftmaxParams>::value == kSOFTMAX.
template <class P>
struct LayerTypeOf;
#define KILN_LAYER_TYPE_OF(ENUM, VALUE, NAME)              \
  template <>                                              \
  struct LayerTypeOf<NAME##Params> {                       \
    static constexpr LayerType value = LayerType::k##ENUM; \
  };
KILN_BUILTIN_OPS(KILN_LAYER_TYPE_OF)
#undef KILN_LAYER_TYPE_OF

namespace op_list_checks {
// The list is closed and its values are a permutation of [0, kLayerTypeCount) together with
// kCONSTANT and kPLUGIN: checked here, so a bad line in op_list.h fails every build.
constexpr int32_t kValues[] = {
#define KILN_LAYER_TYPE_INT(ENUM, VALUE, NAME) VALUE,
    KILN_BUILTIN_OPS(KILN_LAYER_TYPE_INT)
#undef KILN_LAYER_TYPE_INT
};
static_assert(sizeof(kValues) / sizeof(kValues[0]) == KILN_BUILTIN_OP_COUNT,
              "KILN_BUILTIN_OP_COUNT must equal the number of lines in KILN_BUILTIN_OPS");
constexpr bool valuesArePermutation() {
  bool seen[kLayerTypeCount] = {};
  seen[static_cast<int32_t>(LayerType::kCONSTANT)] = true;
  seen[static_cast<int32_t>(LayerType::kPLUGIN)] = true;
#define KILN_RESERVED_OP_SEEN(VALUE)                                      \
  if (VALUE < 0 || VALUE >= kLayerTypeCount || seen[VALUE]) return false; \
  seen[VALUE] = true;
  KILN_RESERVED_OP_VALUES(KILN_RESERVED_OP_SEEN)
#undef KILN_RESERVED_OP_SEEN
  for (int32_t v : kValues) {
    if (v < 0 || v >= kLayerTypeCount || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}
static_assert(valuesArePermutation(),
              "op_list.h: every op needs its own value in [0, kLayerTypeCount), not 0, 11 or a "
              "reserved one");
}  // namespace op_list_checks

}  // namespace kiln
