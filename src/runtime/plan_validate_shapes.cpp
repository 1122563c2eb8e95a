// Shape agreement between each built-in step and its tensors: what lets a kernel trust the dims
// it is handed, even in a plan whose checksum someone recomputed.
#include <string>
#include <vector>

#include "core/plan_codec.h"
#include "runtime/plan_validate.h"
#include "ops/op_table.h"

namespace kiln::plan {
namespace {

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims && i < Dims::kMaxDims; ++i)
    s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

}  // namespace

Status validatePlanShapes(const Plan& plan) {
  std::vector<TensorShape> in, out;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    // Plugins answer for their own shapes (checked when the engine deserializes them); constant
    // steps compute nothing.
    if (s.type == LayerType::kPLUGIN || s.type == LayerType::kCONSTANT) continue;
    const auto where = [&] {
      return "section 'steps': step " + std::to_string(i) + " (" + quotedName(s.layerName) + ", " +
             layerTypeName(s.type) + ")";
    };
    in.clear();
    out.clear();
    for (int32_t t : s.inputs) in.push_back({plan.tensors[t].dims, plan.tensors[t].type});
    const Status inferred = inferLayerOutputs(s.type, s.params, in, out);
    if (!inferred.isOk())
      return corruptData(where() +
                         ": its parameters do not fit its input tensors: " + inferred.message());
    if (out.size() != s.outputs.size())
      return corruptData(where() + " has " + std::to_string(s.outputs.size()) +
                         " output tensors, its layer makes " + std::to_string(out.size()));
    for (size_t k = 0; k < out.size(); ++k) {
      const Tensor& t = plan.tensors[s.outputs[k]];
      if (t.dims != out[k].dims || t.type != out[k].type)
        return corruptData(where() + ": output " + std::to_string(k) + " " + quotedName(t.name) +
                           " is " + dimsText(t.dims) + " " + dataTypeName(t.type) +
                           " but the layer makes " + dimsText(out[k].dims) + " " +
                           dataTypeName(out[k].type));
    }
    if (const auto* p = std::get_if<ReformatParams>(&s.params)) {
      if (s.outputs.size() == 1 && plan.tensors[s.outputs[0]].format != p->outputFormat)
        return corruptData(where() + ": the output tensor is " +
                           formatName(plan.tensors[s.outputs[0]].format) +
                           " but the reformat makes " + formatName(p->outputFormat));
    }
  }
  return Status::ok();
}

}  // namespace kiln::plan
