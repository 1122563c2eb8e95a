// The format decision (builder/format_choice.h): linear everywhere on the CPU; on CUDA a
// half-precision convolution prefers channels-last with its weights channels-last, then with them
// linear; other layers follow a computed channels-last input and leave constants linear; every
// list ends all linear.
#include "builder/format_choice.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

constexpr TensorFormat L = TensorFormat::kLINEAR, CL = TensorFormat::kCHANNELS_LAST;

// A convolution x [2,8,5,5], W [16,8,3,3], bias [16] -> [2,16,5,5], x made in `xFormat`.
FormatQuery convolution(DeviceKind device, DataType type, TensorFormat xFormat) {
  FormatQuery q;
  q.type = LayerType::kCONVOLUTION;
  q.device = device;
  q.inputTypes = {type, type, type};
  q.inputDims = {makeDims({2, 8, 5, 5}), makeDims({16, 8, 3, 3}), makeDims({16})};
  q.inputConstant = {false, true, true};
  q.inputFormats = {xFormat, L, L};
  q.outputTypes = {type};
  q.outputDims = {makeDims({2, 16, 5, 5})};
  return q;
}

// An elementwise add of a computed [2,16,5,5] made in `aFormat` and a constant [1,16,1,1].
FormatQuery addOfConstant(TensorFormat aFormat) {
  FormatQuery q;
  q.type = LayerType::kELEMENTWISE;
  q.device = DeviceKind::kCUDA;
  q.inputTypes = {DataType::kHALF, DataType::kHALF};
  q.inputDims = {makeDims({2, 16, 5, 5}), makeDims({1, 16, 1, 1})};
  q.inputConstant = {false, true};
  q.inputFormats = {aFormat, L};
  q.outputTypes = {DataType::kHALF};
  q.outputDims = {makeDims({2, 16, 5, 5})};
  return q;
}

void expectAllLinear(const FormatCandidate& c) {
  for (TensorFormat f : c.inputs) EXPECT_EQ(f, L);
  for (TensorFormat f : c.outputs) EXPECT_EQ(f, L);
}

TEST(FormatChoice, CpuIsLinearOnly) {
  const auto list = formatCandidates(convolution(DeviceKind::kCPU, DataType::kFLOAT, L));
  ASSERT_EQ(list.size(), 1u);
  expectAllLinear(list[0]);
}

TEST(FormatChoice, HalfConvolutionOnCudaPrefersChannelsLastWeightsFirst) {
  const auto list = formatCandidates(convolution(DeviceKind::kCUDA, DataType::kHALF, L));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].inputs, (std::vector<TensorFormat>{CL, CL, L}));
  EXPECT_EQ(list[0].outputs, (std::vector<TensorFormat>{CL}));
  EXPECT_EQ(list[1].inputs, (std::vector<TensorFormat>{CL, L, L}));
  EXPECT_EQ(list[1].outputs, (std::vector<TensorFormat>{CL}));
  expectAllLinear(list[2]);
}

TEST(FormatChoice, Fp32ConvolutionStaysLinearUnlessItsInputIsChannelsLast) {
  const auto linear = formatCandidates(convolution(DeviceKind::kCUDA, DataType::kFLOAT, L));
  ASSERT_EQ(linear.size(), 1u);
  expectAllLinear(linear[0]);
  const auto follows = formatCandidates(convolution(DeviceKind::kCUDA, DataType::kFLOAT, CL));
  ASSERT_EQ(follows.size(), 3u);
  EXPECT_EQ(follows[0].inputs[0], CL);
}

TEST(FormatChoice, OtherLayersFollowAComputedInputAndLeaveConstantsLinear) {
  const auto follows = formatCandidates(addOfConstant(CL));
  ASSERT_EQ(follows.size(), 2u);
  EXPECT_EQ(follows[0].inputs, (std::vector<TensorFormat>{CL, L}));
  EXPECT_EQ(follows[0].outputs, (std::vector<TensorFormat>{CL}));
  expectAllLinear(follows[1]);
  const auto linear = formatCandidates(addOfConstant(L));
  ASSERT_EQ(linear.size(), 1u);
  expectAllLinear(linear[0]);
}

TEST(FormatChoice, OutputsOfOtherRanksStayLinear) {
  FormatQuery q = addOfConstant(CL);
  q.type = LayerType::kREDUCE;
  q.inputTypes = {DataType::kHALF};
  q.inputDims = {makeDims({2, 16, 5, 5})};
  q.inputConstant = {false};
  q.inputFormats = {CL};
  q.outputDims = {makeDims({2, 16})};
  const auto list = formatCandidates(q);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].inputs, (std::vector<TensorFormat>{CL}));
  EXPECT_EQ(list[0].outputs, (std::vector<TensorFormat>{L}));
}

// A Shuffle of a channels-last map may also write a linear rank-4 output (a permute to
// [N, H, W, C] read in the map's memory order); one of another rank has that candidate already.
TEST(FormatChoice, AShuffleOfAChannelsLastMapMayWriteLinear) {
  FormatQuery q = addOfConstant(CL);
  q.type = LayerType::kSHUFFLE;
  q.inputTypes = {DataType::kHALF};
  q.inputDims = {makeDims({2, 16, 5, 5})};
  q.inputConstant = {false};
  q.inputFormats = {CL};
  q.outputDims = {makeDims({2, 5, 5, 16})};
  const auto rank4 = formatCandidates(q);
  ASSERT_EQ(rank4.size(), 3u);
  EXPECT_EQ(rank4[0].outputs, (std::vector<TensorFormat>{CL}));
  EXPECT_EQ(rank4[1].inputs, (std::vector<TensorFormat>{CL}));
  EXPECT_EQ(rank4[1].outputs, (std::vector<TensorFormat>{L}));
  expectAllLinear(rank4[2]);
  q.outputDims = {makeDims({2, 25, 16})};
  const auto tokens = formatCandidates(q);
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].inputs, (std::vector<TensorFormat>{CL}));
  EXPECT_EQ(tokens[0].outputs, (std::vector<TensorFormat>{L}));
}

}  // namespace
}  // namespace kiln
