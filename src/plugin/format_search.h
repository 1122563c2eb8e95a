// Which type/format combinations a plugin accepts: the search the builder runs to choose one
// (builder/plugin_selection.cpp) and the plugin harness runs to check them all
// (plugin_check/plugin_check.cpp), so both ask a plugin exactly the same questions.
#pragma once

#include <functional>
#include <vector>

#include "plugin/plugin_object.h"

namespace kiln {

// What a tensor position may be offered as: a float tensor in fp32, and fp16 and bf16 when
// `reducedPrecision`; any other type as it is; rank-4 tensors linear and channels-last, others
// linear. `logical` gives dims, type and device; fp32/linear comes first.
std::vector<PluginTensorDesc> formatOptions(const PluginTensorDesc& logical, bool reducedPrecision);

// Asks supportsFormatCombination() position by position, as TensorRT does: position p is asked
// with the choices for positions < p fixed, depth first over `options[p]` in order. Calls
// `accepted(descs)` for each combination the plugin takes (inputs then outputs) and stops when it
// returns false; `rejected(position, desc)`, if set, hears each refusal.
void searchFormatCombinations(
    const PluginObject& plugin, const std::vector<std::vector<PluginTensorDesc>>& options,
    int32_t nbInputs, const std::function<bool(const std::vector<PluginTensorDesc>&)>& accepted,
    const std::function<void(size_t, const PluginTensorDesc&)>& rejected = nullptr);

}  // namespace kiln
