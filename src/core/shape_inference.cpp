#include "core/shape_inference.h"

namespace kiln {
namespace {

// Calls `infer` with the params of type P, or reports that the params do not match the layer.
template <typename P, typename F>
Status dispatch(LayerType type, const LayerParams& params, F infer,
                const std::vector<TensorShape>& in, std::vector<TensorShape>& out) {
  const P* p = std::get_if<P>(&params);
  if (!p) {
    return invalidArgument(std::string(layerTypeName(type)) +
                           " layer carries parameters of another layer type");
  }
  out.clear();
  return infer(*p, in, out);
}

}  // namespace

Status inferLayerOutputs(LayerType type, const LayerParams& params,
                         const std::vector<TensorShape>& in, std::vector<TensorShape>& out) {
  switch (type) {
    case LayerType::kCONVOLUTION:
      return dispatch<ConvolutionParams>(type, params, inferConvolution, in, out);
    case LayerType::kPOOLING:
      return dispatch<PoolingParams>(type, params, inferPooling, in, out);
    case LayerType::kELEMENTWISE:
      return dispatch<ElementwiseParams>(type, params, inferElementwise, in, out);
    case LayerType::kACTIVATION:
      return dispatch<ActivationParams>(type, params, inferActivation, in, out);
    case LayerType::kMATRIX_MULTIPLY:
      return dispatch<MatrixMultiplyParams>(type, params, inferMatrixMultiply, in, out);
    case LayerType::kGEMM:
      return dispatch<GemmParams>(type, params, inferGemm, in, out);
    case LayerType::kSOFTMAX:
      return dispatch<SoftmaxParams>(type, params, inferSoftmax, in, out);
    case LayerType::kCONCATENATION:
      return dispatch<ConcatenationParams>(type, params, inferConcatenation, in, out);
    case LayerType::kSHUFFLE:
      return dispatch<ShuffleParams>(type, params, inferShuffle, in, out);
    case LayerType::kREDUCE:
      return dispatch<ReduceParams>(type, params, inferReduce, in, out);
    case LayerType::kREFORMAT:
      return dispatch<ReformatParams>(type, params, inferReformat, in, out);
    case LayerType::kSELECT:
      return dispatch<SelectParams>(type, params, inferSelect, in, out);
    case LayerType::kGATHER:
      return dispatch<GatherParams>(type, params, inferGather, in, out);
    case LayerType::kSLICE:
      return dispatch<SliceParams>(type, params, inferSlice, in, out);
    case LayerType::kPADDING:
      return dispatch<PaddingParams>(type, params, inferPadding, in, out);
    case LayerType::kRESIZE:
      return dispatch<ResizeParams>(type, params, inferResize, in, out);
    case LayerType::kTILE:
      return dispatch<TileParams>(type, params, inferTile, in, out);
    case LayerType::kEXPAND:
      return dispatch<ExpandParams>(type, params, inferExpand, in, out);
    case LayerType::kDECONVOLUTION:
      return dispatch<DeconvolutionParams>(type, params, inferDeconvolution, in, out);
    case LayerType::kNORMALIZATION:
      return dispatch<NormalizationParams>(type, params, inferNormalization, in, out);
    case LayerType::kLRN:
      return dispatch<LrnParams>(type, params, inferLrn, in, out);
    case LayerType::kROI_ALIGN:
      return dispatch<RoiAlignParams>(type, params, inferRoiAlign, in, out);
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  return invalidArgument(std::string(layerTypeName(type)) +
                         " layers have no built-in shape inference");
}

}  // namespace kiln
