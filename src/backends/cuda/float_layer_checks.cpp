// See float_layer_checks.h.
#include "backends/cuda/float_layer_checks.h"

#include <string>
#include <vector>

#include "ops/op_table.h"
#include "ops/shape_checks.h"

namespace kiln::cuda {
namespace {

bool fail(std::string* whyNot, const char* tactic, const std::string& message) {
  if (whyNot) *whyNot = std::string(tactic) + ": " + message;
  return false;
}

}  // namespace

bool checkFloatLayer(const KernelConfig& c, LayerType type, const char* layer, const char* tactic,
                     bool spatial, std::string* whyNot, bool weightsMayBeChannelsLast) {
  if (c.inputs.empty() || c.outputs.size() != 1)
    return fail(whyNot, tactic,
                std::string(layer) + " has inputs and 1 output; the configuration has " +
                    std::to_string(c.inputs.size()) + " and " + std::to_string(c.outputs.size()));
  const DataType t = c.inputs[0].type;
  if (t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kBF16)
    return fail(whyNot, tactic,
                std::string("input 0 is ") + dataTypeName(t) + "; fp32, fp16 or bf16 only");
  for (size_t i = 0; i <= c.inputs.size(); ++i) {
    const bool isOut = i == c.inputs.size();
    const PluginTensorDesc& d = isOut ? c.outputs[0] : c.inputs[i];
    const std::string what = isOut ? std::string("output 0") : "input " + std::to_string(i);
    if (d.device != DeviceKind::kCUDA)
      return fail(whyNot, tactic, what + " is not in CUDA device memory");
    if (d.type != t)
      return fail(whyNot, tactic,
                  what + " is " + dataTypeName(d.type) + ", input 0 is " + dataTypeName(t) +
                      "; all tensors must share one float type");
    const bool likeOutput = !isOut && i >= 2 && d.dims == c.outputs[0].dims;  // a residual
    if (spatial && likeOutput && d.format != c.outputs[0].format)
      return fail(whyNot, tactic,
                  what + " has the output's dims but is " + formatName(d.format) +
                      " and the output " + formatName(c.outputs[0].format));
    const bool mayBeChannelsLast =
        spatial && (isOut || i == 0 || likeOutput || (i == 1 && weightsMayBeChannelsLast));
    if (d.format == TensorFormat::kLINEAR) continue;
    if (d.format == TensorFormat::kCHANNELS_LAST && mayBeChannelsLast && d.dims.nbDims == 4)
      continue;
    return fail(whyNot, tactic,
                what + " is " + formatName(d.format) + " " + dimsString(d.dims) + "; " +
                    (mayBeChannelsLast ? "linear or rank-4 channels_last only" : "linear only"));
  }
  if (spatial && c.inputs[0].format != c.outputs[0].format)
    return fail(whyNot, tactic,
                std::string("input 0 is ") + formatName(c.inputs[0].format) +
                    " but the output is " + formatName(c.outputs[0].format));
  std::vector<TensorShape> in, out;
  for (const PluginTensorDesc& d : c.inputs) in.push_back({d.dims, d.type});
  const Status s = inferLayerOutputs(type, c.params, in, out);
  if (!s) return fail(whyNot, tactic, s.message());
  if (out.size() != 1 || out[0].dims != c.outputs[0].dims || out[0].type != c.outputs[0].type)
    return fail(
        whyNot, tactic,
        "output is " + std::string(dataTypeName(c.outputs[0].type)) + " " +
            dimsString(c.outputs[0].dims) + " but the inputs give " +
            (out.empty() ? std::string("nothing")
                         : std::string(dataTypeName(out[0].type)) + " " + dimsString(out[0].dims)));
  return true;
}

}  // namespace kiln::cuda
