// Tactic lists of the CUDA data-movement family, and the validation every tactic of the family
// shares. Per layer: faster tactics first, kiln's plain per-element kernel ("reference") last.
#include <string>

#include "backends/cuda/data_movement.h"

namespace kiln::cuda {
namespace dm {

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims && i < Dims::kMaxDims; ++i) {
    if (i) s += ",";
    s += std::to_string(d.d[i]);
  }
  return s + "]";
}

bool validateCommon(const KernelConfig& c, const char* layer, int nbInputs, bool linearOnly,
                    std::string* whyNot) {
  const std::string name(layer);
  if (nbInputs >= 0 && c.inputs.size() != static_cast<size_t>(nbInputs)) {
    setWhyNot(whyNot, name + ": expects " + std::to_string(nbInputs) + " input(s), got " +
                          std::to_string(c.inputs.size()));
    return false;
  }
  if (c.outputs.size() != 1) {
    setWhyNot(whyNot, name + ": expects 1 output, got " + std::to_string(c.outputs.size()));
    return false;
  }
  if (!c.constantInputs.empty() && c.constantInputs.size() != c.inputs.size()) {
    setWhyNot(whyNot, name + ": constantInputs does not match the inputs");
    return false;
  }
  auto descOk = [&](const PluginTensorDesc& d) {
    if (d.device != DeviceKind::kCUDA) {
      setWhyNot(whyNot, name + ": the CUDA backend needs tensors in device memory");
      return false;
    }
    if (d.format != TensorFormat::kLINEAR && d.format != TensorFormat::kCHANNELS_LAST) {
      setWhyNot(whyNot,
                name + ": invalid tensor format " + std::to_string(static_cast<int32_t>(d.format)));
      return false;
    }
    if (d.format == TensorFormat::kCHANNELS_LAST && d.dims.nbDims != 4) {
      setWhyNot(whyNot, name + ": channels_last needs rank 4, got dims " + dimsText(d.dims));
      return false;
    }
    if (d.format == TensorFormat::kCHANNELS_LAST && linearOnly) {
      setWhyNot(whyNot, name +
                            ": this kernel moves linear tensors only (got channels_last; the "
                            "builder reformats around it)");
      return false;
    }
    return true;
  };
  for (const auto& d : c.inputs)
    if (!descOk(d)) return false;
  if (!descOk(c.outputs[0])) return false;
  std::vector<TensorShape> in;
  for (const auto& x : c.inputs) in.push_back(TensorShape{x.dims, x.type});
  std::vector<TensorShape> expected;
  const Status st = inferLayerOutputs(c.type, c.params, in, expected);
  if (!st.isOk()) {
    setWhyNot(whyNot, st.message());
    return false;
  }
  if (expected.size() != 1 || expected[0].dims != c.outputs[0].dims ||
      expected[0].type != c.outputs[0].type) {
    setWhyNot(whyNot, name + ": output is " + dataTypeName(c.outputs[0].type) + " " +
                          dimsText(c.outputs[0].dims) + " but the inputs give " +
                          (expected.empty() ? std::string("nothing")
                                            : std::string(dataTypeName(expected[0].type)) + " " +
                                                  dimsText(expected[0].dims)));
    return false;
  }
  return true;
}

namespace {

constexpr Tactic kShuffle[] = {{"reference", &createShuffle}};
constexpr Tactic kConcat[] = {{"copy2d", &createConcatCopy2D}, {"reference", &createConcat}};
constexpr Tactic kSlice[] = {{"reference", &createSlice}};
constexpr Tactic kPadding[] = {{"reference", &createPadding}};
constexpr Tactic kTile[] = {{"reference", &createTile}};
constexpr Tactic kExpand[] = {{"reference", &createExpand}};
constexpr Tactic kGather[] = {{"reference", &createGather}};
constexpr Tactic kSelect[] = {{"reference", &createSelect}};
constexpr Tactic kReformat[] = {{"reference", &createReformat}};
constexpr Tactic kResize[] = {{"reference", &createResize}};
constexpr Tactic kRoiAlign[] = {{"reference", &createRoiAlign}};

}  // namespace
}  // namespace dm

std::span<const Tactic> dataMovementTactics(LayerType type) {
  switch (type) {
    case LayerType::kSHUFFLE:
      return dm::kShuffle;
    case LayerType::kCONCATENATION:
      return dm::kConcat;
    case LayerType::kSLICE:
      return dm::kSlice;
    case LayerType::kPADDING:
      return dm::kPadding;
    case LayerType::kTILE:
      return dm::kTile;
    case LayerType::kEXPAND:
      return dm::kExpand;
    case LayerType::kGATHER:
      return dm::kGather;
    case LayerType::kSELECT:
      return dm::kSelect;
    case LayerType::kREFORMAT:
      return dm::kReformat;
    case LayerType::kRESIZE:
      return dm::kResize;
    case LayerType::kROI_ALIGN:
      return dm::kRoiAlign;
    default:
      return {};
  }
}

}  // namespace kiln::cuda
