// Shape and type inference of the ONNX-coverage additions: new activations, comparisons, prelu,
// argmax and select. Results and refusals (with useful messages).
#include <gtest/gtest.h>

#include "ops/infer_test_util.h"
#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln {
namespace {

TEST(InferOnnxActivation, TypesPerActivation) {
  ActivationParams p;
  for (int t = static_cast<int>(ActivationType::kELU); t <= static_cast<int>(ActivationType::kERF);
       ++t) {
    p.type = static_cast<ActivationType>(t);
    const TensorShape s = inferOk(ops::Activation::infer, p, {shape({2, 5}, DataType::kHALF)});
    EXPECT_EQ(s.dims, makeDims({2, 5}));
    EXPECT_EQ(s.type, DataType::kHALF);
    inferFails(ops::Activation::infer, p, {shape({3}, DataType::kBOOL)}, "bool");
  }
  for (ActivationType t : {ActivationType::kNEG, ActivationType::kABS}) {
    p.type = t;
    EXPECT_EQ(inferOk(ops::Activation::infer, p, {shape({3}, DataType::kINT32)}).type,
              DataType::kINT32);
    EXPECT_EQ(inferOk(ops::Activation::infer, p, {shape({3}, DataType::kINT64)}).type,
              DataType::kINT64);
    inferFails(ops::Activation::infer, p, {shape({3}, DataType::kINT8)}, "int8");
  }
  p.type = ActivationType::kEXP;
  inferFails(ops::Activation::infer, p, {shape({3}, DataType::kINT32)}, "floating-point");
  p.type = ActivationType::kNOT;
  const TensorShape b = inferOk(ops::Activation::infer, p, {shape({4, 1}, DataType::kBOOL)});
  EXPECT_EQ(b.type, DataType::kBOOL);
  EXPECT_EQ(b.dims, makeDims({4, 1}));
  inferFails(ops::Activation::infer, p, {shape({3})}, "not needs a bool input, got fp32");
}

TEST(InferOnnxElementwise, ComparisonsGiveBool) {
  ElementwiseParams p;
  for (ElementwiseOp op : {ElementwiseOp::kEQUAL, ElementwiseOp::kLESS, ElementwiseOp::kGREATER}) {
    p.op = op;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT32, DataType::kINT64}) {
      const TensorShape s =
          inferOk(ops::Elementwise::infer, p, {shape({2, 1, 3}, t), shape({4, 1}, t)});
      EXPECT_EQ(s.type, DataType::kBOOL);
      EXPECT_EQ(s.dims, makeDims({2, 4, 3}));
    }
    inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2}, DataType::kINT32)},
               "different types");
  }
  p.op = ElementwiseOp::kEQUAL;
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p,
                    {shape({3}, DataType::kBOOL), shape({1}, DataType::kBOOL)})
                .type,
            DataType::kBOOL);
  p.op = ElementwiseOp::kLESS;
  inferFails(ops::Elementwise::infer, p, {shape({3}, DataType::kBOOL), shape({3}, DataType::kBOOL)},
             "not defined on bool");
}

TEST(InferOnnxElementwise, PreluBroadcastsSlopeToInputOnly) {
  ElementwiseParams p{ElementwiseOp::kPRELU};
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2, 3, 4, 5}), shape({3, 1, 1})}).dims,
            makeDims({2, 3, 4, 5}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2, 3}), shape({})}).type, DataType::kFLOAT);
  inferFails(ops::Elementwise::infer, p, {shape({3, 1}), shape({3, 4})},
             "do not broadcast to the input");
  inferFails(ops::Elementwise::infer, p, {shape({3}), shape({2, 3})},
             "do not broadcast to the input");
  inferFails(ops::Elementwise::infer, p,
             {shape({3}, DataType::kINT32), shape({3}, DataType::kINT32)}, "floating-point");
  p.op = static_cast<ElementwiseOp>(11);
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2})}, "unknown op 11");
}

TEST(InferOnnxReduce, ArgMax) {
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 0b010;
  p.keepDims = true;
  TensorShape s = inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})});
  EXPECT_EQ(s.dims, makeDims({2, 1, 4}));
  EXPECT_EQ(s.type, DataType::kINT64);
  p.keepDims = false;
  s = inferOk(ops::Reduce::infer, p, {shape({2, 3, 4}, DataType::kINT32)});
  EXPECT_EQ(s.dims, makeDims({2, 4}));
  EXPECT_EQ(s.type, DataType::kINT64);
  p.axesMask = 0b011;
  inferFails(ops::Reduce::infer, p, {shape({2, 3, 4})}, "exactly one axis");
  p.axesMask = 0;
  inferFails(ops::Reduce::infer, p, {shape({2, 3, 4})}, "no axis");
  p.axesMask = 0b1000;
  inferFails(ops::Reduce::infer, p, {shape({2, 3, 4})}, "names axis 3");
  p.axesMask = 0b10;
  inferFails(ops::Reduce::infer, p, {shape({2, 0, 4})}, "size 0");
  inferFails(ops::Reduce::infer, p, {shape({2, 3}, DataType::kBOOL)}, "int32 or int64");
  // The other reductions still refuse integers.
  p.op = ReduceOp::kMAX;
  inferFails(ops::Reduce::infer, p, {shape({2, 3}, DataType::kINT32)}, "floating-point");
  p.op = static_cast<ReduceOp>(4);
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "unknown op 4");
}

TEST(InferOnnxSelect, BroadcastsAllThree) {
  SelectParams p;
  TensorShape s = inferOk(ops::Select::infer, p,
                          {shape({3, 1, 1}, DataType::kBOOL), shape({1, 4, 1}), shape({5})});
  EXPECT_EQ(s.dims, makeDims({3, 4, 5}));
  EXPECT_EQ(s.type, DataType::kFLOAT);
  s = inferOk(
      ops::Select::infer, p,
      {shape({}, DataType::kBOOL), shape({2}, DataType::kINT64), shape({}, DataType::kINT64)});
  EXPECT_EQ(s.dims, makeDims({2}));
  EXPECT_EQ(s.type, DataType::kINT64);
  // A 0 dim wins over 1, as in numpy.
  EXPECT_EQ(
      inferOk(ops::Select::infer, p, {shape({0, 1}, DataType::kBOOL), shape({1, 3}), shape({1})})
          .dims,
      makeDims({0, 3}));
}

TEST(InferOnnxSelect, Refusals) {
  SelectParams p;
  inferFails(ops::Select::infer, p, {shape({2}), shape({2}), shape({2})},
             "condition (input 0) must be bool");
  inferFails(ops::Select::infer, p,
             {shape({2}, DataType::kBOOL), shape({2}), shape({2}, DataType::kHALF)},
             "different types");
  inferFails(ops::Select::infer, p, {shape({2}, DataType::kBOOL), shape({3}), shape({2})},
             "do not broadcast");
  inferFails(ops::Select::infer, p, {shape({2, 1}, DataType::kBOOL), shape({1, 3}), shape({4, 1})},
             "do not broadcast");
  inferFails(ops::Select::infer, p, {shape({2}, DataType::kBOOL), shape({2})}, "expects 3 input");
  TensorShape bad = shape({2});
  bad.dims.d[0] = -1;
  inferFails(ops::Select::infer, p, {shape({2}, DataType::kBOOL), bad, shape({2})}, "negative dim");
  inferFails(ops::Select::infer, p,
             {shape({int64_t{1} << 31, 1}, DataType::kBOOL), shape({int64_t{1} << 31}), shape({1})},
             "too large");
}

}  // namespace
}  // namespace kiln
