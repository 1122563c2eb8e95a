// Shape and type inference of the light layers: results and refusals (with useful messages).
#include <gtest/gtest.h>

#include "ops/infer_test_util.h"
#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln {
namespace {

TEST(InferElementwise, BroadcastsLikeNumpy) {
  ElementwiseParams p;
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2, 1, 4}), shape({3, 1})}).dims,
            makeDims({2, 3, 4}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({}), shape({5})}).dims, makeDims({5}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({0, 3}), shape({1, 3})}).dims,
            makeDims({0, 3}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({1}), shape({0})}).dims, makeDims({0}));
  const TensorShape s = inferOk(ops::Elementwise::infer, p,
                                {shape({4}, DataType::kINT64), shape({1, 4}, DataType::kINT64)});
  EXPECT_EQ(s.dims, makeDims({1, 4}));
  EXPECT_EQ(s.type, DataType::kINT64);
}

TEST(InferElementwise, Refusals) {
  ElementwiseParams p;
  inferFails(ops::Elementwise::infer, p, {shape({2, 3}), shape({4, 3})}, "do not broadcast");
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2}, DataType::kINT32)},
             "different types");
  inferFails(ops::Elementwise::infer, p, {shape({2}, DataType::kBOOL), shape({2}, DataType::kBOOL)},
             "bool");
  inferFails(ops::Elementwise::infer, p, {shape({2})}, "expects 2 input");
  inferFails(ops::Elementwise::infer, p, {shape({2, -1}), shape({2, 1})}, "negative dim");
  TensorShape bad = shape({2});
  bad.dims.nbDims = 9;
  inferFails(ops::Elementwise::infer, p, {bad, shape({2})}, "rank 9");
  bad = shape({2});
  bad.type = static_cast<DataType>(42);
  inferFails(ops::Elementwise::infer, p, {bad, bad}, "invalid data type");
  p.op = static_cast<ElementwiseOp>(99);
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2})}, "unknown op 99");
  p.op = ElementwiseOp::kADD;
  // The output must stay addressable.
  inferFails(ops::Elementwise::infer, p, {shape({int64_t{1} << 31, 1}), shape({int64_t{1} << 31})},
             "too large");
}

TEST(InferActivation, SameShapeFloatOnly) {
  ActivationParams p;
  p.type = ActivationType::kTANH;
  const TensorShape s = inferOk(ops::Activation::infer, p, {shape({3, 4}, DataType::kHALF)});
  EXPECT_EQ(s.dims, makeDims({3, 4}));
  EXPECT_EQ(s.type, DataType::kHALF);
  inferFails(ops::Activation::infer, p, {shape({3}, DataType::kINT32)}, "floating-point");
  inferFails(ops::Activation::infer, p, {shape({3}), shape({3})}, "expects 1 input");
  p.type = static_cast<ActivationType>(18);
  inferFails(ops::Activation::infer, p, {shape({3})}, "unknown activation type 18");
}

TEST(InferSoftmax, AxisChecks) {
  SoftmaxParams p;
  p.axis = -1;
  EXPECT_EQ(inferOk(ops::Softmax::infer, p, {shape({2, 3, 4})}).dims, makeDims({2, 3, 4}));
  p.axis = -3;
  EXPECT_EQ(inferOk(ops::Softmax::infer, p, {shape({2, 3, 4})}).dims, makeDims({2, 3, 4}));
  p.axis = 3;
  inferFails(ops::Softmax::infer, p, {shape({2, 3, 4})}, "axis 3 is outside [-3, 3)");
  p.axis = -4;
  inferFails(ops::Softmax::infer, p, {shape({2, 3, 4})}, "axis -4");
  p.axis = 0;
  inferFails(ops::Softmax::infer, p, {shape({})}, "rank >= 1");
  inferFails(ops::Softmax::infer, p, {shape({3}, DataType::kINT64)}, "floating-point");
}

TEST(InferConcatenation, SumsTheAxis) {
  ConcatenationParams p;
  p.axis = -2;
  EXPECT_EQ(
      inferOk(ops::Concatenation::infer, p, {shape({2, 3, 4}), shape({2, 5, 4}), shape({2, 0, 4})})
          .dims,
      makeDims({2, 8, 4}));
  p.axis = 0;
  EXPECT_EQ(inferOk(ops::Concatenation::infer, p, {shape({7}, DataType::kBOOL)}).type,
            DataType::kBOOL);
}

TEST(InferConcatenation, Refusals) {
  ConcatenationParams p;
  p.axis = 1;
  inferFails(ops::Concatenation::infer, p, {shape({2, 3}), shape({3, 3})}, "differ from input 0");
  inferFails(ops::Concatenation::infer, p, {shape({2, 3}), shape({2, 3, 1})}, "different rank");
  inferFails(ops::Concatenation::infer, p, {shape({2, 3}), shape({2, 3}, DataType::kHALF)}, "fp16");
  inferFails(ops::Concatenation::infer, p, {}, "at least 1 input");
  inferFails(ops::Concatenation::infer, p, {shape({})}, "rank >= 1");
  p.axis = 2;
  inferFails(ops::Concatenation::infer, p, {shape({2, 3}), shape({2, 3})}, "axis 2");
}

TEST(InferShuffle, TransposeReshapeTranspose) {
  ShuffleParams p;
  p.hasFirstTranspose = true;
  const int32_t perm[] = {2, 0, 1};
  std::copy(std::begin(perm), std::end(perm), p.firstTranspose);
  EXPECT_EQ(inferOk(ops::Shuffle::infer, p, {shape({2, 3, 4})}).dims, makeDims({4, 2, 3}));

  p.hasReshape = true;
  p.reshapeDims = makeDims({0, -1});  // 0 copies dim 0 of the transposed tensor
  EXPECT_EQ(inferOk(ops::Shuffle::infer, p, {shape({2, 3, 4})}).dims, makeDims({4, 6}));

  p.hasSecondTranspose = true;
  p.secondTranspose[0] = 1;
  p.secondTranspose[1] = 0;
  const TensorShape s = inferOk(ops::Shuffle::infer, p, {shape({2, 3, 4}, DataType::kINT8)});
  EXPECT_EQ(s.dims, makeDims({6, 4}));
  EXPECT_EQ(s.type, DataType::kINT8);

  ShuffleParams flat;
  flat.hasReshape = true;
  flat.reshapeDims = makeDims({});
  EXPECT_EQ(inferOk(ops::Shuffle::infer, flat, {shape({1, 1})}).dims, makeDims({}));
  flat.reshapeDims = makeDims({6, 0});  // empty tensors reshape too
  EXPECT_EQ(inferOk(ops::Shuffle::infer, flat, {shape({3, 0})}).dims, makeDims({6, 0}));
}

TEST(InferShuffle, Refusals) {
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = makeDims({5, 5});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "volume 24) to [5,5] (volume 25)");
  p.reshapeDims = makeDims({5, -1});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "not a multiple of 5");
  p.reshapeDims = makeDims({-1, -1});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "more than one -1");
  p.reshapeDims = makeDims({-2, 12});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "only -1 may be negative");
  p.reshapeDims = makeDims({2, 3, 2, 0});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "has no dim 3");
  p.reshapeDims = makeDims({0, -1});
  inferFails(ops::Shuffle::infer, p, {shape({0, 3})}, "cannot infer the -1");

  ShuffleParams t;
  t.hasFirstTranspose = true;
  const int32_t dup[] = {0, 0, 1};
  std::copy(std::begin(dup), std::end(dup), t.firstTranspose);
  inferFails(ops::Shuffle::infer, t, {shape({2, 3, 4})}, "axis 0 appears twice");
  const int32_t far[] = {0, 3, 1};
  std::copy(std::begin(far), std::end(far), t.firstTranspose);
  inferFails(ops::Shuffle::infer, t, {shape({2, 3, 4})}, "entry 1 is 3");

  ShuffleParams second;  // the second transpose is checked against the reshaped rank
  second.hasReshape = true;
  second.reshapeDims = makeDims({6, 4});
  second.hasSecondTranspose = true;
  second.secondTranspose[0] = 2;
  second.secondTranspose[1] = 0;
  inferFails(ops::Shuffle::infer, second, {shape({2, 3, 4})}, "second transpose");
}

TEST(InferReduce, KeepAndDropDims) {
  ReduceParams p;
  p.axesMask = 0b101;
  p.keepDims = true;
  EXPECT_EQ(inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})}).dims, makeDims({1, 3, 1}));
  p.keepDims = false;
  EXPECT_EQ(inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})}).dims, makeDims({3}));
  p.axesMask = 0b111;
  EXPECT_EQ(inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})}).dims, makeDims({}));
}

TEST(InferReduce, Refusals) {
  ReduceParams p;
  p.axesMask = 0;
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "no axis");
  p.axesMask = 0b100;
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "names axis 2");
  p.axesMask = 0x80000000u;
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "names axis 31");
  p.axesMask = 1;
  inferFails(ops::Reduce::infer, p, {shape({2, 3}, DataType::kINT32)}, "floating-point");
  p.op = static_cast<ReduceOp>(5);
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "unknown op 5");
}

TEST(InferReformat, TypesAndFormats) {
  ReformatParams p;
  p.outputType = DataType::kHALF;
  p.outputFormat = TensorFormat::kCHANNELS_LAST;
  const TensorShape s = inferOk(ops::Reformat::infer, p, {shape({1, 2, 3, 4})});
  EXPECT_EQ(s.dims, makeDims({1, 2, 3, 4}));
  EXPECT_EQ(s.type, DataType::kHALF);
  inferFails(ops::Reformat::infer, p, {shape({2, 3, 4})}, "channels_last needs a rank-4");

  p.outputFormat = TensorFormat::kLINEAR;
  const DataType all[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kINT8,
                          DataType::kINT32, DataType::kINT64, DataType::kBOOL};
  auto allowed = [](DataType a, DataType b) {
    auto isF = [](DataType t) {
      return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
    };
    if (a == b || (isF(a) && isF(b)) || (!isF(a) && !isF(b))) return true;
    const DataType other = a == DataType::kFLOAT ? b : a;
    return (a == DataType::kFLOAT || b == DataType::kFLOAT) && other != DataType::kINT8 &&
           !isF(other);
  };
  for (DataType from : all)
    for (DataType to : all) {
      p.outputType = to;
      std::vector<TensorShape> out;
      const Status st = ops::Reformat::infer(p, {shape({3}, from)}, out);
      EXPECT_EQ(st.isOk(), allowed(from, to))
          << dataTypeName(from) << " -> " << dataTypeName(to) << ": " << st.toString();
      if (!st.isOk()) {
        EXPECT_EQ(st.code(), StatusCode::kUnsupported);
        EXPECT_NE(st.message().find(dataTypeName(from)), std::string::npos) << st.message();
      }
    }
  p.outputType = DataType::kFLOAT;
  inferFails(ops::Reformat::infer, p, {shape({3}, DataType::kINT8)}, "quantization");
  p.outputType = static_cast<DataType>(9);
  inferFails(ops::Reformat::infer, p, {shape({3})}, "invalid output type");
  p.outputType = DataType::kFLOAT;
  p.outputFormat = static_cast<TensorFormat>(5);
  inferFails(ops::Reformat::infer, p, {shape({1, 2, 3, 4})}, "invalid output format");
}

}  // namespace
}  // namespace kiln
