// Shape and type inference for built-in layers (plugins infer through their own API).
#pragma once

#include <vector>

#include "core/graph.h"
#include "kiln/status.h"

namespace kiln {

// Computes the outputs of a built-in layer from its inputs, or an error saying what is wrong
// (the caller adds the layer name). Inputs are in the order the network API documents.
Status inferLayerOutputs(LayerType type, const LayerParams& params,
                         const std::vector<TensorShape>& inputs, std::vector<TensorShape>& outputs);

// Per-layer functions behind inferLayerOutputs, one per layer type.
Status inferConvolution(const ConvolutionParams& p, const std::vector<TensorShape>& in,
                        std::vector<TensorShape>& out);
Status inferPooling(const PoolingParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out);
Status inferMatrixMultiply(const MatrixMultiplyParams& p, const std::vector<TensorShape>& in,
                           std::vector<TensorShape>& out);
Status inferGemm(const GemmParams& p, const std::vector<TensorShape>& in,
                 std::vector<TensorShape>& out);
Status inferElementwise(const ElementwiseParams& p, const std::vector<TensorShape>& in,
                        std::vector<TensorShape>& out);
Status inferActivation(const ActivationParams& p, const std::vector<TensorShape>& in,
                       std::vector<TensorShape>& out);
Status inferSoftmax(const SoftmaxParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out);
Status inferConcatenation(const ConcatenationParams& p, const std::vector<TensorShape>& in,
                          std::vector<TensorShape>& out);
Status inferShuffle(const ShuffleParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out);
Status inferReduce(const ReduceParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out);
Status inferReformat(const ReformatParams& p, const std::vector<TensorShape>& in,
                     std::vector<TensorShape>& out);
Status inferSelect(const SelectParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out);
Status inferGather(const GatherParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out);
Status inferSlice(const SliceParams& p, const std::vector<TensorShape>& in,
                  std::vector<TensorShape>& out);
Status inferPadding(const PaddingParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out);
Status inferResize(const ResizeParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out);
Status inferTile(const TileParams& p, const std::vector<TensorShape>& in,
                 std::vector<TensorShape>& out);
Status inferExpand(const ExpandParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out);
Status inferDeconvolution(const DeconvolutionParams& p, const std::vector<TensorShape>& in,
                          std::vector<TensorShape>& out);
Status inferNormalization(const NormalizationParams& p, const std::vector<TensorShape>& in,
                          std::vector<TensorShape>& out);
Status inferLrn(const LrnParams& p, const std::vector<TensorShape>& in,
                std::vector<TensorShape>& out);
Status inferRoiAlign(const RoiAlignParams& p, const std::vector<TensorShape>& in,
                     std::vector<TensorShape>& out);

}  // namespace kiln
