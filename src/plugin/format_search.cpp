#include "plugin/format_search.h"

namespace kiln {

std::vector<PluginTensorDesc> formatOptions(const PluginTensorDesc& logical,
                                            bool reducedPrecision) {
  std::vector<DataType> types{logical.type};
  if (isFloatType(logical.type)) {
    types = {DataType::kFLOAT};
    if (reducedPrecision) types.insert(types.end(), {DataType::kHALF, DataType::kBF16});
  }
  std::vector<PluginTensorDesc> options;
  for (DataType t : types) {
    PluginTensorDesc d = logical;
    d.type = t;
    d.format = TensorFormat::kLINEAR;
    options.push_back(d);
    if (d.dims.nbDims == 4) {
      d.format = TensorFormat::kCHANNELS_LAST;
      options.push_back(d);
    }
  }
  return options;
}

void searchFormatCombinations(
    const PluginObject& plugin, const std::vector<std::vector<PluginTensorDesc>>& options,
    int32_t nbInputs, const std::function<bool(const std::vector<PluginTensorDesc>&)>& accepted,
    const std::function<void(size_t, const PluginTensorDesc&)>& rejected) {
  std::vector<PluginTensorDesc> current;
  for (const auto& o : options) {
    if (o.empty()) return;  // a position nothing can fill: no combination
    current.push_back(o.front());
  }
  bool more = true;
  auto search = [&](auto&& self, size_t p) -> void {
    if (!more) return;
    if (p == options.size()) {
      more = accepted(current);
      return;
    }
    for (const PluginTensorDesc& option : options[p]) {
      if (!more) return;
      current[p] = option;
      if (plugin.supportsFormatCombination(static_cast<int32_t>(p), current, nbInputs)) {
        self(self, p + 1);
      } else if (rejected) {
        rejected(p, option);
      }
    }
  };
  search(search, 0);
}

}  // namespace kiln
