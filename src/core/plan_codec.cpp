#include "core/plan_codec.h"

#include <iterator>
#include <string>
#include <variant>

#include "core/param_fields.h"
#include "kiln/layers.h"

namespace kiln::plan {

const char* sectionName(uint32_t tag) {
  // Tags count from 1 (kTENSORS).
  static constexpr const char* kNames[] = {"tensors", "steps",  "weights", "plugins",
                                           "io",      "memory", "profiles"};
  static_assert(std::size(kNames) == kSectionCount);
  return tag >= 1 && tag <= kSectionCount ? kNames[tag - 1] : "unknown";
}

std::string quotedName(const std::string& s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const char c = s[i];
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (s.size() > 80) out += "...";
  return out + "'";
}

Status writeLayerParams(ByteWriter& w, LayerType type, const LayerParams& params) {
  const size_t expected = paramsIndexFor(type);
  if (expected == std::variant_npos)
    return invalidArgument("invalid layer type " + std::to_string(static_cast<int32_t>(type)));
  if (params.index() != expected)
    return invalidArgument(std::string("the parameters of a ") + layerTypeName(type) +
                           " step hold alternative " + std::to_string(params.index()) +
                           " of LayerParams, expected " + std::to_string(expected));
  param_fields::encode(params, w);
  return Status::ok();
}

Status readLayerParams(ByteReader& r, LayerType type, LayerParams& params) {
  return param_fields::decode(r, type, params);
}

}  // namespace kiln::plan
