// ScatterND (src/ops/scatter_nd/): the shape and type rules, and the CPU reference against the
// ONNX definition written out here (a copy of data, then each index tuple's slice set or
// combined, in order) on random problems of every reduction, with negative and repeated indices;
// an index out of range fails the run naming it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

constexpr LayerType kSN = LayerType::kSCATTER_ND;

ScatterNDParams params(ScatterReduction r = ScatterReduction::kNONE) {
  ScatterNDParams p;
  p.reduction = r;
  return p;
}

TensorShape i64(std::initializer_list<int64_t> d) { return typed(d, DataType::kINT64); }

TEST(ScatterND, ShapeRuleKeepsDataShapeAndType) {
  EXPECT_EQ(inferLayerOk(kSN, params(), {f32({4, 5, 6}), i64({3, 2}), f32({3, 6})}).dims,
            makeDims({4, 5, 6}));
  EXPECT_EQ(inferLayerOk(kSN, params(),
                         {typed({4, 5}, DataType::kBOOL), typed({2, 2}, DataType::kINT32),
                          typed({2}, DataType::kBOOL)})
                .type,
            DataType::kBOOL);
  EXPECT_EQ(inferLayerOk(kSN, params(ScatterReduction::kADD),
                         {typed({4}, DataType::kINT32), i64({2, 1}), typed({2}, DataType::kINT32)})
                .dims,
            makeDims({4}));
}

TEST(ScatterND, ShapeRuleSaysWhatIsWrong) {
  EXPECT_MENTIONS(inferLayerError(kSN, params(), {f32({4, 5}), f32({3, 2}), f32({3})}),
                  "indices must be int32 or int64");
  EXPECT_MENTIONS(inferLayerError(kSN, params(), {f32({4, 5}), i64({3, 3}), f32({3})}),
                  "must be in [1, rank(data) = 2]");
  EXPECT_MENTIONS(inferLayerError(kSN, params(), {f32({4, 5}), i64({3, 1}), f32({3, 4})}),
                  "updates are [3,4]; indices [3,1] and data [4,5] need [3,5]");
  EXPECT_MENTIONS(
      inferLayerError(kSN, params(), {f32({4, 5}), i64({3, 2}), typed({3}, DataType::kINT32)}),
      "updates are int32 but data is fp32");
  EXPECT_MENTIONS(
      inferLayerError(kSN, params(ScatterReduction::kMUL),
                      {typed({4}, DataType::kBOOL), i64({1, 1}), typed({1}, DataType::kBOOL)}),
      "a reduction needs float, int32 or int64 data");
  EXPECT_MENTIONS(inferLayerError(kSN, params(static_cast<ScatterReduction>(9)),
                                  {f32({4}), i64({1, 1}), f32({1})}),
                  "unknown reduction 9");
  EXPECT_MENTIONS(inferLayerError(kSN, params(), {f32({0, 5}), i64({1, 1}), f32({1, 5})}),
                  "is empty on axis 0");
}

// The definition: a copy of data; each tuple t of k indices (negative ones counted from the end)
// addresses the slice data[i0..ik-1], of slice elements, which takes updates' slice t.
template <class T>
std::vector<T> definition(std::vector<T> out, const Dims& data, const std::vector<int64_t>& idx,
                          int64_t k, const std::vector<T>& upd, ScatterReduction r) {
  int64_t slice = 1;
  for (int32_t a = static_cast<int32_t>(k); a < data.nbDims; ++a) slice *= data.d[a];
  for (size_t t = 0; t * size_t(k) < idx.size(); ++t) {
    int64_t at = 0;
    for (int64_t a = 0; a < k; ++a) {
      int64_t v = idx[t * size_t(k) + size_t(a)];
      if (v < 0) v += data.d[a];
      at = at * data.d[a] + v;
    }
    for (int64_t e = 0; e < slice; ++e) {
      T& o = out[size_t(at * slice + e)];
      const T u = upd[t * size_t(slice) + size_t(e)];
      switch (r) {
        case ScatterReduction::kNONE:
          o = u;
          break;
        case ScatterReduction::kADD:
          o = o + u;
          break;
        case ScatterReduction::kMUL:
          o = o * u;
          break;
        case ScatterReduction::kMAX:
          o = u > o ? u : o;
          break;
        case ScatterReduction::kMIN:
          o = u < o ? u : o;
          break;
      }
    }
  }
  return out;
}

TEST(ScatterND, ReferenceMatchesTheDefinitionOnRandomProblems) {
  Rng rng;
  for (int trial = 0; trial < 100; ++trial) {
    const Dims data = rng.dims(static_cast<int32_t>(rng.uniformInt(1, 4)), 5);
    const int64_t k = rng.uniformInt(1, data.nbDims);
    const int64_t tuples = rng.uniformInt(0, 7);  // more tuples than slices: repeats
    const auto r = static_cast<ScatterReduction>(rng.uniformInt(0, 4));
    std::vector<int64_t> idx;
    for (int64_t t = 0; t < tuples; ++t)
      for (int64_t a = 0; a < k; ++a) idx.push_back(rng.uniformInt(-data.d[a], data.d[a] - 1));
    Dims id = makeDims({tuples, k}), ud;
    ud.d[ud.nbDims++] = tuples;
    for (int32_t a = static_cast<int32_t>(k); a < data.nbDims; ++a) ud.d[ud.nbDims++] = data.d[a];
    const auto dv = rng.floats(volume(data)), uv = rng.floats(volume(ud));
    const std::string trace = "data " + dimsString(data) + " indices " + dimsString(id) +
                              " reduction " + std::to_string(int(r)) + ", " + rng.trace();
    const auto y = runReference(
        kSN, &ops::ScatterND::infer, params(r), ops::ScatterND::cpuTactics(), {data, id, ud},
        {dv.data(), idx.data(), uv.data()}, {DataType::kFLOAT, DataType::kINT64, DataType::kFLOAT});
    EXPECT_EQ(y, definition(dv, data, idx, k, uv, r)) << trace;
  }
}

TEST(ScatterND, IntegersCombineExactly) {
  const std::vector<int64_t> data = {1, 2, 3, 4}, idx = {1, -3, 3}, upd = {10, 20, 5};
  PluginTensorDesc d = desc(makeDims({4}), DataType::kINT64);
  std::vector<PluginTensorDesc> in = {d, desc(makeDims({3, 1}), DataType::kINT64),
                                      desc(makeDims({3}), DataType::kINT64)};
  const auto p = params(ScatterReduction::kADD);
  auto kernel = create(tacticNamed(ops::ScatterND::cpuTactics(), "reference"),
                       config(kSN, p, in, inferredOutputs(&ops::ScatterND::infer, p, in)));
  ASSERT_TRUE(kernel);
  std::vector<int64_t> y(4, -1);
  ASSERT_TRUE(runKernel(*kernel, {data.data(), idx.data(), upd.data()}, {y.data()}).isOk());
  // Index -3 is 1 again: both updates land on element 1, in order.
  EXPECT_EQ(y, (std::vector<int64_t>{1, 32, 3, 9}));
}

TEST(ScatterND, AnIndexOutOfRangeFailsTheRunNamingIt) {
  const std::vector<float> data(6, 1.f), upd = {7.f, 8.f, 9.f};
  const std::vector<int64_t> idx = {0, 2};  // axis 0 has 2 entries
  Status st;
  const auto y = runReference(kSN, &ops::ScatterND::infer, params(), ops::ScatterND::cpuTactics(),
                              {makeDims({2, 3}), makeDims({2, 1}), makeDims({2, 3})},
                              {data.data(), idx.data(), upd.data()},
                              {DataType::kFLOAT, DataType::kINT64, DataType::kFLOAT}, &st);
  ASSERT_FALSE(st.isOk());
  EXPECT_MENTIONS(st.message(), "index 2 of tuple 1 on axis 0 is outside [-2, 2)");
}

}  // namespace
}  // namespace kiln::testing
