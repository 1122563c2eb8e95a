// Expand: its shape rule (numpy broadcasting to a shape of any rank) and its CPU reference against
// numpy broadcasting, for every element type on random shapes; the tactic refuses what inference
// refuses.
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(DataInfer, Expand) {
  TensorShape o;
  ASSERT_TRUE(
      infer(&ops::Expand::infer, ExpandParams{makeDims({2, 1, 4})}, {shape({3, 1})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({2, 3, 4}));
  ASSERT_TRUE(infer(&ops::Expand::infer, ExpandParams{makeDims({3})}, {shape({2, 1})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({2, 3}));  // a shape of lower rank than the input
  ASSERT_TRUE(
      infer(&ops::Expand::infer, ExpandParams{makeDims({0, 1})}, {shape({1, 5})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({0, 5}));
  EXPECT_ERROR(infer(&ops::Expand::infer, ExpandParams{makeDims({2, 4})}, {shape({3})}),
               "does not broadcast");
  EXPECT_ERROR(infer(&ops::Expand::infer, ExpandParams{makeDims({-1})}, {shape({1})}), "negative");
}

TEST(DataInfer, ExpandDimsFromASecondInput) {
  // ConstantOfShape([S, S]) as an expand of a [1, 1] value, S the [N, S] source's dim 1.
  ExpandParams p{makeDims({1, 1})};
  p.shapeDimsOf[0] = 2;
  p.shapeDimsOf[1] = 2;
  EXPECT_EQ(inferOk(ops::Expand::infer, p, {shape({1, 1}), shape({3, 7}, DataType::kINT64)}).dims,
            makeDims({7, 7}));
  inferFails(ops::Expand::infer, p, {shape({1, 1})}, "there is none");
  inferFails(ops::Expand::infer, p, {shape({2, 1}), shape({3, 7})}, "does not broadcast");
  p.shapeDimsOf[1] = 5;
  inferFails(ops::Expand::infer, p, {shape({1, 1}), shape({3, 7})}, "which has no such dim");
  inferFails(ops::Expand::infer, ExpandParams{makeDims({2})}, {shape({1}), shape({3})},
             "no shape dim is taken");
}

TEST(DataInfer, ExpandTacticsRefuseInconsistentOutputs) {
  const auto in = desc(makeDims({2, 3}), DataType::kINT32);
  // Output dims that do not match what inference gives.
  const auto wrong = desc(makeDims({2, 4}), DataType::kINT32);
  declines(ops::Expand::cpuTactics().back(),
           config(LayerType::kEXPAND, ExpandParams{makeDims({2, 3})}, {in}, {wrong}));
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

TEST(Expand, MatchesBroadcastForEveryType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 70; ++iter) {
    const DataType type = allTypes()[static_cast<size_t>(iter) % allTypes().size()];
    // Output dims first, then an input and a shape that each have 1s (or drop leading dims).
    const Dims full = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 4)), 4);
    Dims in, shape;
    in.nbDims = static_cast<int32_t>(rng.uniformInt(0, full.nbDims));
    shape.nbDims = static_cast<int32_t>(rng.uniformInt(0, full.nbDims));
    if (rng.uniformInt(0, 1))
      in.nbDims = full.nbDims;
    else
      shape.nbDims = full.nbDims;
    for (int32_t i = 0; i < in.nbDims; ++i)
      in.d[i] = rng.uniformInt(0, 2) ? full.d[full.nbDims - in.nbDims + i] : 1;
    for (int32_t i = 0; i < shape.nbDims; ++i) {
      const int64_t f = full.d[full.nbDims - shape.nbDims + i];
      const int32_t j = i - (shape.nbDims - in.nbDims);  // the input's aligned dim, if any
      // Where the input is 1 the shape must carry the full dim; else it may say 1 or the dim.
      shape.d[i] = (j >= 0 && in.d[j] == 1) || rng.uniformInt(0, 1) ? f : 1;
    }
    const auto data = randomTensor(rng, in, type);
    Dims outDims;
    Status st;
    const auto out =
        runReferenceBytes(LayerType::kEXPAND, ops::Expand::cpuTactics(), &ops::Expand::infer,
                          ExpandParams{shape}, {desc(in, type)}, {data.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    const std::string what = "expand " + dimsText(in) + " to " + dimsText(shape);
    ASSERT_EQ(outDims.nbDims, std::max(in.nbDims, shape.nbDims)) << what;
    for (int32_t i = 0; i < outDims.nbDims; ++i) {
      const int32_t a = i - (outDims.nbDims - in.nbDims), b = i - (outDims.nbDims - shape.nbDims);
      const int64_t want = std::max(a >= 0 ? in.d[a] : 1, b >= 0 ? shape.d[b] : 1);
      ASSERT_EQ(outDims.d[i], want) << what << " dim " << i;
    }
    expectMapped(
        out, outDims, data, dataTypeSize(type),
        [&](const std::vector<int64_t>& o) {
          std::vector<int64_t> c(static_cast<size_t>(in.nbDims));
          const size_t lead = o.size() - c.size();
          for (size_t i = 0; i < c.size(); ++i) c[i] = in.d[i] == 1 ? 0 : o[lead + i];
          return ravel(c, in);
        },
        nullptr, what);
  }
}

}  // namespace
}  // namespace kiln::testing
