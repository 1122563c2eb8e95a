// Slice: its shape rule (starts, steps, reads outside the input) and its CPU reference against a
// direct loop over its definition, for every element type on random shapes; the tactic refuses
// what inference refuses.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

SliceParams slice(std::initializer_list<int64_t> starts, std::initializer_list<int64_t> steps,
                  std::initializer_list<int64_t> outDims) {
  return {makeDims(starts), makeDims(steps), makeDims(outDims)};
}

TEST(DataInfer, Slice) {
  TensorShape o;
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({1, 4}, {2, -2}, {2, 3}),
                    {shape({5, 5}, DataType::kBOOL)}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({2, 3}));
  EXPECT_EQ(o.type, DataType::kBOOL);
  // An empty output axis reads nothing, so its start is not checked.
  EXPECT_TRUE(infer(&ops::Slice::infer, slice({9}, {1}, {0}), {shape({5})}).isOk());
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {0}, {1}), {shape({5})}), "step is 0");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({5}, {1}, {1}), {shape({5})}), "outside [0, 5)");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({-1}, {1}, {1}), {shape({5})}), "outside");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({1}, {2}, {3}), {shape({5})}),
               "outside");  // reads 5
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({3}, {-2}, {3}), {shape({5})}),
               "outside");  // reads -1
  EXPECT_TRUE(infer(&ops::Slice::infer, slice({4}, {-2}, {3}), {shape({5})}).isOk());
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {int64_t{1} << 62}, {2}), {shape({5})}),
               "outside");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({4}, {INT64_MIN}, {2}), {shape({5})}), "outside");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {1}, {-2}), {shape({5})}), "negative");
  // -1: to the end of the axis, whatever its dim.
  ASSERT_TRUE(
      infer(&ops::Slice::infer, slice({1, 0, 2}, {2, 1, 3}, {-1, -1, -1}), {shape({6, 4, 8})}, &o)
          .isOk());
  EXPECT_EQ(o.dims, makeDims({3, 4, 2}));  // reads 1,3,5; all 4; 2,5
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({1}, {2}, {-1}), {shape({7})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({3}));
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({5}, {1}, {-1}), {shape({5})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({0}));  // starts at the end: nothing
  // -1 with a negative step: down to element 0 (x[4::-1], x.flip(0)).
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({4}, {-1}, {-1}), {shape({5})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({5}));
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({4}, {-2}, {-1}), {shape({5})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({3}));  // reads 4, 2, 0
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({0}, {INT64_MIN}, {-1}), {shape({5})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({1}));
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({5}, {-1}, {-1}), {shape({5})}), "start in [0, 5)");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({-1}, {1}, {-1}), {shape({5})}), "start >= 0");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {1}, {1}), {shape({5, 5})}), "rank");
  // To the end less beforeEnd elements (x[1:-2:2]).
  SliceParams trimmed = slice({1}, {2}, {-1});
  trimmed.beforeEnd[0] = 2;
  ASSERT_TRUE(infer(&ops::Slice::infer, trimmed, {shape({9})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({3}));  // reads 1, 3, 5 of the first 7
  ASSERT_TRUE(infer(&ops::Slice::infer, trimmed, {shape({2})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({0}));  // nothing is left
  trimmed.beforeEnd[0] = -1;
  EXPECT_ERROR(infer(&ops::Slice::infer, trimmed, {shape({9})}), "must not be negative");
  SliceParams fixedTrim = slice({0}, {1}, {3});
  fixedTrim.beforeEnd[0] = 1;
  EXPECT_ERROR(infer(&ops::Slice::infer, fixedTrim, {shape({9})}), "needs output dim -1");
  SliceParams backTrim = slice({4}, {-1}, {-1});
  backTrim.beforeEnd[0] = 1;
  EXPECT_ERROR(infer(&ops::Slice::infer, backTrim, {shape({9})}), "a step > 0");
}

TEST(DataInfer, SliceStartsCountedFromTheEnd) {
  // x[-2:]: the start is max(0, dim - 2) at every dim.
  TensorShape o;
  SliceParams last2 = slice({0}, {1}, {-1});
  last2.startFromEnd[0] = 2;
  ASSERT_TRUE(infer(&ops::Slice::infer, last2, {shape({7})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({2}));
  ASSERT_TRUE(infer(&ops::Slice::infer, last2, {shape({1})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({1}));  // clamped at 0, as ONNX and Python do
  ASSERT_TRUE(infer(&ops::Slice::infer, last2, {shape({0})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({0}));
  // A fixed count from the end: x[-3:-1] past dim 3 reads two.
  SliceParams fixed = slice({0}, {1}, {2});
  fixed.startFromEnd[0] = 3;
  ASSERT_TRUE(infer(&ops::Slice::infer, fixed, {shape({9})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({2}));
  ASSERT_TRUE(infer(&ops::Slice::infer, fixed, {shape({2})}, &o).isOk());   // starts at 0
  EXPECT_ERROR(infer(&ops::Slice::infer, fixed, {shape({1})}), "outside");  // reads 0 and 1
  // Backwards from the last element: x[-1::-1].
  SliceParams flip = slice({0}, {-1}, {-1});
  flip.startFromEnd[0] = 1;
  ASSERT_TRUE(infer(&ops::Slice::infer, flip, {shape({6})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({6}));
  flip.startFromEnd[0] = -1;
  EXPECT_ERROR(infer(&ops::Slice::infer, flip, {shape({6})}), "must not be negative");
}

TEST(DataInfer, SliceDimsFromASecondInput) {
  // table[:S, 1:] of a [10, 4] table, S the [N, S] source's dim 1 (GPT-2's causal-mask buffer).
  SliceParams p = slice({0, 1}, {1, 1}, {3, 3});
  p.outputDimsOf[0] = 2;
  const TensorShape source = shape({2, 6}, DataType::kINT64);  // its type does not matter
  EXPECT_EQ(inferOk(ops::Slice::infer, p, {shape({10, 4}), source}).dims, makeDims({6, 3}));
  EXPECT_EQ(inferOk(ops::Slice::infer, p, {shape({10, 4}), shape({1, 10})}).dims,
            makeDims({10, 3}));
  inferFails(ops::Slice::infer, p, {shape({10, 4}), shape({1, 11})}, "outside [0, 10)");
  inferFails(ops::Slice::infer, p, {shape({10, 4})}, "there is none");
  p.outputDimsOf[0] = 3;
  inferFails(ops::Slice::infer, p, {shape({10, 4}), source}, "which has no such dim");
  p.outputDimsOf[0] = 0;
  p.outputDimsOf[2] = 1;
  inferFails(ops::Slice::infer, p, {shape({10, 4}), source}, "there is no output dim 2");
  inferFails(ops::Slice::infer, slice({0}, {1}, {2}), {shape({5}), source},
             "no output dim is taken");
  // Its type rule leaves the source's type alone (it is never read).
  std::vector<DataType> types = {DataType::kHALF, DataType::kHALF};
  std::string why;
  ASSERT_TRUE(ops::computeTypes(LayerType::kSLICE, p, types, why)) << why;
  EXPECT_EQ(types[0], DataType::kFLOAT);
  EXPECT_EQ(types[1], DataType::kHALF);
}

TEST(DataInfer, SliceTacticsRefuseInconsistentOutputs) {
  const auto in = desc(makeDims({2, 3}), DataType::kINT32);
  // Output dims that do not match what inference gives.
  const auto wrong = desc(makeDims({2, 4}), DataType::kINT32);
  declines(ops::Slice::cpuTactics().back(),
           config(LayerType::kSLICE, slice({0, 0}, {1, 1}, {2, 3}), {in}, {wrong}));
  // Another layer's params.
  declines(ops::Slice::cpuTactics().back(), config(LayerType::kSLICE, TileParams{}, {in}, {in}));
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

TEST(Slice, MatchesDefinitionForEveryType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 70; ++iter) {
    const DataType type = allTypes()[static_cast<size_t>(iter) % allTypes().size()];
    const Dims in = rng.dims(static_cast<int32_t>(rng.uniformInt(1, 4)), 7);
    SliceParams p;
    p.starts.nbDims = p.steps.nbDims = p.outputDims.nbDims = in.nbDims;
    for (int32_t i = 0; i < in.nbDims; ++i) {
      const int64_t step = rng.nonZeroInt(-3, 3);
      const int64_t start = rng.uniformInt(0, in.d[i] - 1);
      // Most reads that stay inside [0, dim) from `start` in steps of `step`.
      const int64_t most = step > 0 ? (in.d[i] - 1 - start) / step + 1 : start / -step + 1;
      p.starts.d[i] = start;
      p.steps.d[i] = step;
      p.outputDims.d[i] = rng.uniformInt(iter % 10 == 0 ? 0 : 1, most);
    }
    const auto data = randomTensor(rng, in, type);
    Dims outDims;
    Status st;
    const auto out =
        runReferenceBytes(LayerType::kSLICE, ops::Slice::cpuTactics(), &ops::Slice::infer, p,
                          {desc(in, type)}, {data.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_EQ(outDims, p.outputDims);
    expectMapped(
        out, outDims, data, dataTypeSize(type),
        [&](const std::vector<int64_t>& o) {
          std::vector<int64_t> c(o.size());
          for (size_t i = 0; i < o.size(); ++i) c[i] = p.starts.d[i] + o[i] * p.steps.d[i];
          return ravel(c, in);
        },
        nullptr,
        "slice of " + dimsText(in) + " starts " + dimsText(p.starts) + " steps " +
            dimsText(p.steps) + " " + dataTypeName(type));
  }
}

}  // namespace
}  // namespace kiln::testing
