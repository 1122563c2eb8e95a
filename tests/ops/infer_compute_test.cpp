// Shape inference of convolution, pooling, matrix multiply and gemm, including the errors.
#include <gtest/gtest.h>

#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln {
namespace {

TensorShape f32(std::initializer_list<int64_t> d) { return {makeDims(d), DataType::kFLOAT}; }

// The error message must mention `needle` so a user can tell what is wrong.
void expectError(const Status& s, const std::string& needle) {
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(needle), std::string::npos) << "message: " << s.message();
}

ConvolutionParams conv(int32_t k, int32_t kh, int32_t kw) {
  ConvolutionParams p;
  p.outChannels = k;
  p.kernelH = kh;
  p.kernelW = kw;
  return p;
}

TEST(InferConvolution, OutputShape) {
  ConvolutionParams p = conv(8, 3, 3);
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  std::vector<TensorShape> out;
  ASSERT_TRUE(
      ops::Convolution::infer(p, {f32({2, 4, 10, 12}), f32({8, 4, 3, 3}), f32({8})}, out).isOk());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims, makeDims({2, 8, 10, 12}));
  EXPECT_EQ(out[0].type, DataType::kFLOAT);
}

TEST(InferConvolution, StrideDilationAsymmetricPadsGroups) {
  ConvolutionParams p = conv(6, 3, 2);
  p.strideH = 2;
  p.strideW = 3;
  p.dilationH = 2;
  p.padTop = 1;
  p.padBottom = 0;
  p.padLeft = 0;
  p.padRight = 2;
  p.groups = 3;
  std::vector<TensorShape> out;
  // H: (11 + 1 - 5) / 2 + 1 = 4; W: (7 + 2 - 2) / 3 + 1 = 3.
  ASSERT_TRUE(ops::Convolution::infer(p, {f32({1, 9, 11, 7}), f32({6, 3, 3, 2})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({1, 6, 4, 3}));
}

TEST(InferConvolution, OutputTypeFollowsInput) {
  std::vector<TensorShape> out;
  TensorShape x = f32({1, 2, 3, 3});
  x.type = DataType::kHALF;
  ASSERT_TRUE(ops::Convolution::infer(conv(1, 1, 1), {x, f32({1, 2, 1, 1})}, out).isOk());
  EXPECT_EQ(out[0].type, DataType::kHALF);
}

TEST(InferConvolution, Errors) {
  std::vector<TensorShape> out;
  const ConvolutionParams p = conv(4, 3, 3);
  const TensorShape x = f32({1, 2, 5, 5}), w = f32({4, 2, 3, 3});
  expectError(ops::Convolution::infer(p, {x}, out), "2 or 3 inputs");
  expectError(ops::Convolution::infer(p, {f32({2, 5, 5}), w}, out), "rank 4");
  expectError(ops::Convolution::infer(p, {x, f32({4, 2, 9})}, out), "rank 4");
  expectError(ops::Convolution::infer(p, {x, f32({4, 3, 3, 3})}, out),
              "weights");  // channel mismatch
  expectError(ops::Convolution::infer(p, {x, f32({5, 2, 3, 3})}, out), "weights");  // K mismatch
  expectError(ops::Convolution::infer(p, {x, f32({4, 2, 2, 3})}, out),
              "weights");  // kernel mismatch
  expectError(ops::Convolution::infer(p, {x, w, f32({3})}, out), "bias");
  expectError(ops::Convolution::infer(p, {x, w, f32({1, 4})}, out), "bias");
  ConvolutionParams g = p;
  g.groups = 3;
  expectError(ops::Convolution::infer(g, {f32({1, 4, 5, 5}), f32({4, 1, 3, 3})}, out), "groups");
  g.outChannels = 5;
  g.groups = 2;
  expectError(ops::Convolution::infer(g, {x, f32({5, 1, 3, 3})}, out), "outChannels");
  expectError(ops::Convolution::infer(p, {f32({1, 2, 2, 5}), w}, out),
              "larger than the padded input");
  ConvolutionParams d = p;
  d.dilationW = 3;  // extent 7 > 5
  expectError(ops::Convolution::infer(d, {x, w}, out), "larger than the padded input");
  ConvolutionParams bad = p;
  bad.strideH = 0;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "strideH");
  bad = p;
  bad.padLeft = -1;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "padding");
  bad = p;
  bad.dilationH = 0;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "dilation");
  bad = p;
  bad.groups = 0;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "groups");
  TensorShape xi = x;
  xi.type = DataType::kINT32;
  expectError(ops::Convolution::infer(p, {xi, w}, out), "int32");
  expectError(ops::Convolution::infer(p, {f32({1, 2, -5, 5}), w}, out), "negative");
}

TEST(InferPooling, Shapes) {
  PoolingParams p;
  p.kernelH = p.kernelW = 3;
  p.strideH = p.strideW = 2;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({2, 3, 8, 9})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3, 3, 4}));
  p.ceilMode = true;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({2, 3, 8, 9})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3, 4, 4}));
  p.type = PoolingType::kGLOBAL_AVERAGE;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({2, 3, 8, 9})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3, 1, 1}));
}

TEST(InferPooling, CeilModeDropsWindowStartingInEndPadding) {
  PoolingParams p;
  p.kernelH = 2;
  p.strideH = 2;
  p.padTop = p.padBottom = 1;
  p.ceilMode = true;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({1, 1, 3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({1, 1, 2, 4}));  // ceil((3+2-2)/2)+1 = 3, last one dropped
}

TEST(InferPooling, Errors) {
  PoolingParams p;
  p.kernelH = p.kernelW = 3;
  std::vector<TensorShape> out;
  expectError(ops::Pooling::infer(p, {}, out), "1 input");
  expectError(ops::Pooling::infer(p, {f32({1, 3, 8})}, out), "rank 4");
  expectError(ops::Pooling::infer(p, {f32({1, 3, 2, 8})}, out), "larger than the padded input");
  expectError(ops::Pooling::infer(p, {f32({1, 3, 0, 8})}, out), "empty");
  PoolingParams bad = p;
  bad.padTop = 3;
  expectError(ops::Pooling::infer(bad, {f32({1, 3, 8, 8})}, out), "smaller than the kernel");
  bad = p;
  bad.kernelW = 0;
  expectError(ops::Pooling::infer(bad, {f32({1, 3, 8, 8})}, out), "kernelW");
  bad = p;
  bad.type = static_cast<PoolingType>(9);
  expectError(ops::Pooling::infer(bad, {f32({1, 3, 8, 8})}, out), "pooling type");
}

TEST(InferMatrixMultiply, BroadcastAndTransposes) {
  MatrixMultiplyParams p;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::MatrixMultiply::infer(p, {f32({2, 3}), f32({3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 4}));
  ASSERT_TRUE(ops::MatrixMultiply::infer(p, {f32({5, 1, 2, 3}), f32({7, 3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({5, 7, 2, 4}));
  p.transposeA = p.transposeB = true;
  ASSERT_TRUE(ops::MatrixMultiply::infer(p, {f32({6, 3, 2}), f32({4, 3})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({6, 2, 4}));
}

TEST(InferMatrixMultiply, Errors) {
  MatrixMultiplyParams p;
  std::vector<TensorShape> out;
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 3}), f32({4, 4})}, out), "inner");
  expectError(ops::MatrixMultiply::infer(p, {f32({3}), f32({3, 4})}, out), "rank >= 2");
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 2, 3}), f32({3, 3, 4})}, out), "broadcast");
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 3})}, out), "2 input");
  TensorShape b = f32({3, 4});
  b.type = DataType::kINT64;
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 3}), b}, out), "int64");
}

TEST(InferGemm, ShapesAndCBroadcast) {
  GemmParams p;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 4}));
  p.transposeA = p.transposeB = true;
  for (auto c : {f32({}), f32({1}), f32({4}), f32({1, 4}), f32({2, 1}), f32({2, 4})}) {
    ASSERT_TRUE(ops::Gemm::infer(p, {f32({3, 2}), f32({4, 3}), c}, out).isOk());
    EXPECT_EQ(out[0].dims, makeDims({2, 4}));
  }
}

TEST(InferGemm, Errors) {
  GemmParams p;
  std::vector<TensorShape> out;
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({2, 4})}, out), "inner");
  expectError(ops::Gemm::infer(p, {f32({1, 2, 3}), f32({3, 4})}, out), "rank 2");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3})}, out), "rank 2");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4}), f32({3})}, out), "broadcast");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4}), f32({4, 2})}, out), "broadcast");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4}), f32({1, 2, 4})}, out), "broadcast");
  expectError(ops::Gemm::infer(p, {f32({2, 3})}, out), "2 or 3 inputs");
}

}  // namespace
}  // namespace kiln
