// Gather: its shape rule and its CPU reference against a direct reading of the ONNX definition,
// for every element type, both index types, every axis and random shapes; bad indices fail without
// touching memory; the tactic refuses what inference refuses.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(DataInfer, Gather) {
  TensorShape o;
  ASSERT_TRUE(infer(&ops::Gather::infer, GatherParams{1},
                    {shape({2, 3, 4}, DataType::kINT8), shape({5, 6}, DataType::kINT64)}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({2, 5, 6, 4}));
  EXPECT_EQ(o.type, DataType::kINT8);
  ASSERT_TRUE(infer(&ops::Gather::infer, GatherParams{-1},
                    {shape({2, 3}), TensorShape{Dims{}, DataType::kINT32}}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({2}));
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0}, {shape({2}), shape({2})}),
               "int32 or int64");
  EXPECT_ERROR(
      infer(&ops::Gather::infer, GatherParams{2}, {shape({2, 3}), shape({2}, DataType::kINT32)}),
      "axis 2");
  EXPECT_ERROR(
      infer(&ops::Gather::infer, GatherParams{-3}, {shape({2, 3}), shape({2}, DataType::kINT32)}),
      "axis -3");
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0},
                     {TensorShape{Dims{}, DataType::kFLOAT}, shape({2}, DataType::kINT32)}),
               "rank >= 1");
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0},
                     {shape({2, 2, 2, 2, 2}), shape({1, 1, 1, 1, 1}, DataType::kINT32)}),
               "above 8");
  EXPECT_ERROR(
      infer(&ops::Gather::infer, GatherParams{0}, {shape({0, 2}), shape({1}, DataType::kINT32)}),
      "empty");
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0}, {shape({2})}), "2 input");
}

TEST(DataInfer, GatherTacticsRefuseInconsistentOutputs) {
  const auto in = desc(makeDims({2, 3}), DataType::kINT32);
  // Output dims that do not match what inference gives.
  const auto wrong = desc(makeDims({2, 4}), DataType::kINT32);
  declines(ops::Gather::cpuTactics().back(),
           config(LayerType::kGATHER, GatherParams{0}, {in, desc(makeDims({2}), DataType::kFLOAT)},
                  {wrong}));
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

struct GatherCase {
  Dims data, indices;
  int32_t axis = 0;
  DataType type = DataType::kFLOAT, indexType = DataType::kINT32;
};

// Indices in [-d, d) as the index type's bytes, plus the same values as int64.
std::vector<uint8_t> indexBytes(const std::vector<int64_t>& values, DataType type) {
  std::vector<uint8_t> b(values.size() * dataTypeSize(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::kINT64) {
      std::memcpy(b.data() + 8 * i, &values[i], 8);
    } else {
      const int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(b.data() + 4 * i, &v, 4);
    }
  }
  return b;
}

std::vector<uint8_t> runGather(const GatherCase& c, const std::vector<uint8_t>& data,
                               const std::vector<uint8_t>& indices, Dims* outDims, Status* st) {
  return runReferenceBytes(LayerType::kGATHER, ops::Gather::cpuTactics(), &ops::Gather::infer,
                           GatherParams{c.axis},
                           {desc(c.data, c.type), desc(c.indices, c.indexType)},
                           {data.data(), indices.data()}, outDims, st);
}

TEST(Gather, MatchesDefinitionForEveryTypeAndAxis) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 60; ++iter) {
    GatherCase c;
    c.type = allTypes()[static_cast<size_t>(iter) % allTypes().size()];
    c.indexType = iter % 2 ? DataType::kINT64 : DataType::kINT32;
    c.data = rng.dims(static_cast<int32_t>(rng.uniformInt(1, 4)), 5);
    c.indices = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 2)), 4);
    const int32_t r = c.data.nbDims;
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(0, r - 1));
    c.axis = rng.uniformInt(0, 1) ? axis : axis - r;  // negative axes count from the end
    const int64_t axisDim = c.data.d[axis];
    std::vector<int64_t> idx(static_cast<size_t>(volume(c.indices)));
    for (auto& v : idx) v = rng.uniformInt(-axisDim, axisDim - 1);
    const auto data = randomTensor(rng, c.data, c.type);
    const auto indices = indexBytes(idx, c.indexType);
    Dims outDims;
    Status st;
    const auto out = runGather(c, data, indices, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    const std::string what = "data " + dimsText(c.data) + " indices " + dimsText(c.indices) +
                             " axis " + std::to_string(c.axis) + " " + dataTypeName(c.type);
    ASSERT_EQ(outDims.nbDims, r - 1 + c.indices.nbDims) << what;
    // Output coord = (data coords before axis, index coords, data coords after axis).
    expectMapped(
        out, outDims, data, dataTypeSize(c.type),
        [&](const std::vector<int64_t>& o) {
          std::vector<int64_t> in;
          for (int32_t i = 0; i < axis; ++i) in.push_back(o[static_cast<size_t>(i)]);
          std::vector<int64_t> k(o.begin() + axis, o.begin() + axis + c.indices.nbDims);
          int64_t v = idx[static_cast<size_t>(ravel(k, c.indices))];
          in.push_back(v < 0 ? v + axisDim : v);
          for (int32_t i = axis + 1; i < r; ++i)
            in.push_back(o[static_cast<size_t>(i - 1 + c.indices.nbDims)]);
          return ravel(in, c.data);
        },
        nullptr, what);
  }
}

TEST(Gather, OutOfRangeIndexIsAnErrorAndWritesNothing) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (DataType indexType : {DataType::kINT32, DataType::kINT64}) {
    GatherCase c;
    c.indexType = indexType;
    c.data = rng.dims(3, 5);
    c.axis = 1;
    c.indices = makeDims({2, 3});
    const int64_t d = c.data.d[1];
    for (int64_t bad : {d, -d - 1, d + 1000, int64_t{-2147483647}}) {
      std::vector<int64_t> idx(6);
      for (auto& v : idx) v = rng.uniformInt(-d, d - 1);
      idx[static_cast<size_t>(rng.uniformInt(0, 5))] = bad;
      const auto data = randomTensor(rng, c.data, c.type);
      Dims outDims;
      Status st;
      const auto out = runGather(c, data, indexBytes(idx, indexType), &outDims, &st);
      EXPECT_FALSE(st.isOk()) << "index " << bad << " accepted";
      EXPECT_NE(st.message().find(std::to_string(bad)), std::string::npos) << st.message();
      for (uint8_t b : out) ASSERT_EQ(b, 0xCD) << "the failing run wrote output";
    }
  }
}

TEST(Gather, ScalarIndexDropsTheAxis) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  GatherCase c;
  c.data = makeDims({3, 4});
  c.axis = 0;
  c.indices = Dims{};  // rank 0
  c.indexType = DataType::kINT64;
  const auto data = randomTensor(rng, c.data, c.type);
  Dims outDims;
  Status st;
  const auto out = runGather(c, data, indexBytes({-1}, c.indexType), &outDims, &st);
  ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_EQ(outDims, makeDims({4}));
  EXPECT_EQ(0, std::memcmp(out.data(), data.data() + 8 * 4, 16));  // row 2 of fp32 [3, 4]
}

}  // namespace
}  // namespace kiln::testing
