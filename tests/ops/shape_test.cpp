// Shape: its shape rule (start and end clamped to the rank, an int64 output; negative bounds
// refused) and its CPU reference, which writes the input's dims and never reads its data.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

ShapeParams shapeParams(int32_t start, int32_t end) {
  ShapeParams p;
  p.start = start;
  p.end = end;
  return p;
}

TEST(DataInfer, Shape) {
  TensorShape o = inferOk(&ops::Shape::infer, ShapeParams{}, {shape({2, 3, 5}, DataType::kHALF)});
  EXPECT_EQ(o.dims, makeDims({3}));
  EXPECT_EQ(o.type, DataType::kINT64);
  EXPECT_EQ(inferOk(&ops::Shape::infer, shapeParams(1, 2), {shape({2, 3, 5})}).dims, makeDims({1}));
  EXPECT_EQ(inferOk(&ops::Shape::infer, shapeParams(2, 9), {shape({2, 3, 5})}).dims,
            makeDims({1}));  // end clamped to the rank
  EXPECT_EQ(inferOk(&ops::Shape::infer, shapeParams(3, 1), {shape({2, 3, 5})}).dims,
            makeDims({0}));  // nothing between
  EXPECT_EQ(inferOk(&ops::Shape::infer, ShapeParams{}, {shape({})}).dims, makeDims({0}));
  inferFails(&ops::Shape::infer, shapeParams(-1, 3), {shape({2, 3})}, "must not be negative");
  inferFails(&ops::Shape::infer, ShapeParams{}, {}, "expects 1 input");
}

TEST(Shape, TheReferenceWritesTheDimsItIsMadeFor) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 30; ++iter) {
    const Dims in = rng.dims(int32_t(rng.uniformInt(0, 6)), 40);
    const int32_t start = int32_t(rng.uniformInt(0, 3)), end = int32_t(rng.uniformInt(0, 8));
    const ShapeParams p = shapeParams(start, end);
    const std::vector<uint8_t> data = rng.bytes(volume(in) + 1);  // never read
    Dims outDims;
    Status st;
    const auto out =
        runReferenceBytes(LayerType::kSHAPE, ops::Shape::cpuTactics(), &ops::Shape::infer, p,
                          {desc(in, DataType::kINT8)}, {data.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    std::vector<int64_t> want;
    for (int32_t k = start; k < std::min(end, in.nbDims); ++k) want.push_back(in.d[k]);
    ASSERT_EQ(outDims, makeDims({int64_t(want.size())})) << dimsString(in);
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_EQ(readElement(out.data(), DataType::kINT64, int64_t(k)), double(want[k]))
          << dimsString(in) << " element " << k;
  }
}

}  // namespace
}  // namespace kiln::testing
