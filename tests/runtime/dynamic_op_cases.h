// The cases of dynamic_ops_harness.h: one or more per op family (kiln/ops/<op>.h), each with a
// dynamic batch N and most with a dynamic sequence S, including layers that reduce, concatenate,
// gather or slice along a dynamic axis.
#pragma once

#include <vector>

#include "runtime/dynamic_ops_harness.h"

namespace kiln::testing::dynamic_ops {

inline std::vector<Case> allCases() {
  using T = const std::vector<ITensor*>&;
  const DataType f = DataType::kFLOAT;
  std::vector<Case> c;
  c.push_back({"activation_sigmoid", {{{kN, 3, kS}}}, [](INetworkDefinition& net, T in) {
                 return net.addLayer(ActivationParams{ActivationType::kSIGMOID}, {in[0]});
               }});
  c.push_back({"elementwise_add_broadcast_weight",
               {{{kN, 4, kS}}, {{4, 1}, f, true}},
               [](INetworkDefinition& net, T in) {
                 return net.addElementwise(*in[0], *in[1], ElementwiseOp::kADD);
               }});
  c.push_back(
      {"elementwise_max_two_inputs", {{{kN, kS}}, {{kN, kS}}}, [](INetworkDefinition& net, T in) {
         return net.addElementwise(*in[0], *in[1], ElementwiseOp::kMAX);
       }});
  c.push_back({"convolution_3x3_bias",
               {{{kN, 3, 6, 6}}, {{4, 3, 3, 3}, f, true}, {{4}, f, true}},
               [](INetworkDefinition& net, T in) {
                 ConvolutionParams p;
                 p.outChannels = 4;
                 p.kernelH = p.kernelW = 3;
                 p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
                 return net.addLayer(p, {in[0], in[1], in[2]});
               }});
  c.push_back({"convolution_weights_at_run_time",
               {{{kN, 2, 5, 5}}, {{3, 2, 3, 3}}, {{3}}},
               [](INetworkDefinition& net, T in) {
                 ConvolutionParams p;
                 p.outChannels = 3;
                 p.kernelH = p.kernelW = 3;
                 p.strideH = p.strideW = 2;
                 return net.addLayer(p, {in[0], in[1], in[2]});
               }});
  // One 2x2 stride-2 deconvolution, its weights fed at run time or a constant.
  const auto deconv2x2 = [](INetworkDefinition& net, T in) {
    DeconvolutionParams p;
    p.outChannels = 3;
    p.kernelH = p.kernelW = 2;
    p.strideH = p.strideW = 2;
    return net.addLayer(p, {in[0], in[1]});
  };
  c.push_back({"deconvolution_weights_at_run_time", {{{kN, 2, 3, 3}}, {{2, 3, 2, 2}}}, deconv2x2});
  c.push_back(
      {"deconvolution_2x2_stride_2", {{{kN, 2, 3, 3}}, {{2, 3, 2, 2}, f, true}}, deconv2x2});
  c.push_back({"pooling_average_2x2", {{{kN, 2, 6, 6}}}, [](INetworkDefinition& net, T in) {
                 PoolingParams p;
                 p.type = PoolingType::kAVERAGE;
                 p.kernelH = p.kernelW = 2;
                 p.strideH = p.strideW = 2;
                 return net.addPooling(*in[0], p);
               }});
  c.push_back({"softmax_over_the_sequence", {{{kN, 2, kS}}}, [](INetworkDefinition& net, T in) {
                 return net.addSoftmax(*in[0], SoftmaxParams{-1, false});
               }});
  c.push_back({"matrix_multiply_by_a_weight",
               {{{kN, kS, 8}}, {{8, 5}, f, true}},
               [](INetworkDefinition& net, T in) {
                 return net.addMatrixMultiply(*in[0], *in[1], MatrixMultiplyParams{});
               }});
  c.push_back({"matrix_multiply_batched_scores",
               {{{kN, kS, 4}}, {{kN, kS, 4}}},
               [](INetworkDefinition& net, T in) {
                 return net.addMatrixMultiply(*in[0], *in[1], MatrixMultiplyParams{false, true});
               }});
  c.push_back({"linear_with_bias",
               {{{kN, kS, 8}}, {{8, 6}, f, true}, {{6}, f, true}},
               [](INetworkDefinition& net, T in) {
                 LinearParams p;
                 p.hasBias = true;
                 return net.addLayer(p, {in[0], in[1], in[2]});
               }});
  c.push_back(
      {"gemm", {{{kN, 8}}, {{8, 3}, f, true}, {{3}, f, true}}, [](INetworkDefinition& net, T in) {
         return net.addGemm(*in[0], *in[1], in[2], GemmParams{0.5f, 2.f, false, false});
       }});
  c.push_back({"reduce_mean_over_the_sequence", {{{kN, 3, kS}}}, [](INetworkDefinition& net, T in) {
                 return net.addReduce(*in[0], ReduceParams{ReduceOp::kMEAN, 1u << 2, true});
               }});
  c.push_back({"reduce_sum_over_the_batch", {{{kN, 3, kS}}}, [](INetworkDefinition& net, T in) {
                 return net.addReduce(*in[0], ReduceParams{ReduceOp::kSUM, 1u << 0, false});
               }});
  c.push_back({"concatenation_along_channels",
               {{{kN, 2, kS}}, {{kN, 3, kS}}},
               [](INetworkDefinition& net, T in) {
                 ITensor* both[] = {in[0], in[1]};
                 return net.addConcatenation(both, 2, ConcatenationParams{1});
               }});
  c.push_back(
      {"concatenation_along_the_batch", {{{kN, 2}}, {{kN, 2}}}, [](INetworkDefinition& net, T in) {
         ITensor* both[] = {in[0], in[1]};
         return net.addConcatenation(both, 2, ConcatenationParams{0});
       }});
  c.push_back({"shuffle_transpose", {{{kN, kS, 3}}}, [](INetworkDefinition& net, T in) {
                 ShuffleParams p;
                 p.hasFirstTranspose = true;
                 p.firstTranspose[0] = 0;
                 p.firstTranspose[1] = 2;
                 p.firstTranspose[2] = 1;
                 return net.addShuffle(*in[0], p);
               }});
  c.push_back({"shuffle_flatten", {{{kN, kS, 3}}}, [](INetworkDefinition& net, T in) {
                 ShuffleParams p;
                 p.hasReshape = true;
                 p.reshapeDims = makeDims({0, -1});
                 return net.addShuffle(*in[0], p);
               }});
  c.push_back({"slice_to_the_end", {{{kN, kS, 4}}}, [](INetworkDefinition& net, T in) {
                 SliceParams p;
                 p.starts = makeDims({0, 1, 1});
                 p.steps = makeDims({1, 1, 2});
                 p.outputDims = makeDims({-1, -1, 2});
                 return net.addSlice(*in[0], p);
               }});
  // x[:, :-1]: the sequence less one (S >= 2 in the profile).
  c.push_back({"slice_stopping_before_the_end", {{{kN, kS, 4}}}, [](INetworkDefinition& net, T in) {
                 SliceParams p;
                 p.starts = makeDims({0, 0, 0});
                 p.steps = makeDims({1, 1, 1});
                 p.outputDims = makeDims({-1, -1, 4});
                 p.beforeEnd[1] = 1;
                 return net.addSlice(*in[0], p);
               }});
  // x[:, -2:] and x[:, ::-1]: starts counted from the end of the sequence (clamped at 0).
  c.push_back({"slice_the_last_two", {{{kN, kS, 4}}}, [](INetworkDefinition& net, T in) {
                 SliceParams p;
                 p.starts = makeDims({0, 0, 0});
                 p.steps = makeDims({1, 1, 1});
                 p.outputDims = makeDims({-1, -1, 4});
                 p.startFromEnd[1] = 2;
                 return net.addSlice(*in[0], p);
               }});
  c.push_back({"slice_reversing_the_sequence", {{{kN, kS, 4}}}, [](INetworkDefinition& net, T in) {
                 SliceParams p;
                 p.starts = makeDims({0, 0, 0});
                 p.steps = makeDims({1, -1, 1});
                 p.outputDims = makeDims({-1, -1, 4});
                 p.startFromEnd[1] = 1;
                 return net.addSlice(*in[0], p);
               }});
  c.push_back({"gather_weight_rows_by_token_ids",
               {{{5, 3}, f, true}, {{kN, kS}, DataType::kINT32, false, 5}},
               [](INetworkDefinition& net, T in) {
                 return net.addGather(*in[0], *in[1], GatherParams{0});
               }});
  c.push_back({"gather_along_the_sequence",
               {{{kN, kS, 3}}, {{2}, DataType::kINT32, true, kMinS}},
               [](INetworkDefinition& net, T in) {
                 return net.addGather(*in[0], *in[1], GatherParams{1});
               }});
  c.push_back({"padding_constant", {{{kN, 2, 4, 4}}}, [](INetworkDefinition& net, T in) {
                 PaddingParams p;
                 p.value = 0.5f;
                 p.before[2] = p.before[3] = 1;
                 p.after[3] = 2;
                 return net.addPadding(*in[0], p);
               }});
  c.push_back({"resize_nearest_by_scales", {{{kN, 2, 3, 3}}}, [](INetworkDefinition& net, T in) {
                 ResizeParams p;
                 p.scales[0] = p.scales[1] = 1.f;
                 p.scales[2] = p.scales[3] = 2.f;
                 p.outputDims = makeDims({-1, -1, -1, -1});
                 return net.addResize(*in[0], p);
               }});
  c.push_back({"tile", {{{kN, 2, 3}}}, [](INetworkDefinition& net, T in) {
                 return net.addTile(*in[0], TileParams{makeDims({2, 1, 3})});
               }});
  c.push_back({"expand", {{{kN, 1, 4}}}, [](INetworkDefinition& net, T in) {
                 return net.addExpand(*in[0], ExpandParams{makeDims({1, 3, 4})});
               }});
  c.push_back({"layer_normalization",
               {{{kN, kS, 8}}, {{8}, f, true}, {{8}, f, true}},
               [](INetworkDefinition& net, T in) {
                 return net.addLayer(LayerNormalizationParams{-1, 1e-5f}, {in[0], in[1], in[2]});
               }});
  c.push_back(
      {"rms_normalization", {{{kN, kS, 8}}, {{8}, f, true}}, [](INetworkDefinition& net, T in) {
         return net.addLayer(RMSNormalizationParams{-1, 1e-5f}, {in[0], in[1]});
       }});
  c.push_back({"group_normalization",
               {{{kN, 4, kS}}, {{4}, f, true}, {{4}, f, true}},
               [](INetworkDefinition& net, T in) {
                 return net.addLayer(GroupNormalizationParams{2, 1e-5f}, {in[0], in[1], in[2]});
               }});
  c.push_back({"instance_normalization",
               {{{kN, 3, kS}}, {{3}, f, true}, {{3}, f, true}},
               [](INetworkDefinition& net, T in) {
                 return net.addNormalization(*in[0], *in[1], *in[2], NormalizationParams{1e-5f});
               }});
  c.push_back({"lrn", {{{kN, 4, 3, 3}}}, [](INetworkDefinition& net, T in) {
                 return net.addLRN(*in[0], LRNParams{3, 1e-3f, 0.75f, 1.f});
               }});
  c.push_back(
      {"select",
       {{{kN, kS}, DataType::kBOOL}, {{kN, kS}}, {{kN, kS}}},
       [](INetworkDefinition& net, T in) { return net.addSelect(*in[0], *in[1], *in[2]); }});
  c.push_back({"trilu_upper", {{{kN, kS, kS}}}, [](INetworkDefinition& net, T in) {
                 return net.addLayer(TriluParams{true, 0}, {in[0]});
               }});
  // Position ids as long as the sequence: the Range's dims source is in0, never read.
  c.push_back({"range_of_the_sequence", {{{kN, kS}}}, [](INetworkDefinition& net, T in) {
                 RangeParams p;
                 p.start = 3;
                 p.delta = -2;
                 p.lengthOf = 2;
                 return net.addLayer(p, {in[0]});
               }});
  // The dims of in0, [N, S], as int64 values (the Shape layer).
  c.push_back({"shape_of_the_input", {{{kN, kS}}}, [](INetworkDefinition& net, T in) {
                 return net.addLayer(ShapeParams{}, {in[0]});
               }});
  // A [16, 4] table's first S rows (GPT-2's mask buffer), S the sequence of in0.
  c.push_back({"slice_rows_of_a_table_to_the_sequence",
               {{{kN, kS}}, {{16, 4}, f, true}},
               [](INetworkDefinition& net, T in) {
                 SliceParams p;
                 p.starts = makeDims({0, 0});
                 p.steps = makeDims({1, 1});
                 p.outputDims = makeDims({1, 4});
                 p.outputDimsOf[0] = 2;
                 return net.addLayer(p, {in[1], in[0]});
               }});
  // A [1, 1] weight expanded to [S, S] (a causal mask's ConstantOfShape), S of in0.
  c.push_back({"expand_to_the_sequence_squared",
               {{{kN, kS}}, {{1, 1}, f, true}},
               [](INetworkDefinition& net, T in) {
                 ExpandParams p;
                 p.shape = makeDims({1, 1});
                 p.shapeDimsOf[0] = p.shapeDimsOf[1] = 2;
                 return net.addLayer(p, {in[1], in[0]});
               }});
  c.push_back({"attention",
               {{{kN, 2, kS, 8}}, {{kN, 2, kS, 8}}, {{kN, 2, kS, 8}}},
               [](INetworkDefinition& net, T in) {
                 return net.addLayer(AttentionParams{0.35f, false, false}, {in[0], in[1], in[2]});
               }});
  // With a run-time mask [N, 1, S, S] broadcast over the heads, as decoders compute theirs, and
  // K given transposed ([N, 2, 8, S]: the right operand of Q K^T as exporters write it).
  c.push_back(
      {"attention_with_a_run_time_mask",
       {{{kN, 2, kS, 8}}, {{kN, 2, 8, kS}}, {{kN, 2, kS, 8}}, {{kN, 1, kS, kS}}},
       [](INetworkDefinition& net, T in) {
         return net.addLayer(AttentionParams{0.25f, true, false}, {in[0], in[1], in[2], in[3]});
       }});
  return c;
}

}  // namespace kiln::testing::dynamic_ops
