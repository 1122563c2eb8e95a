// Tile: its shape rule and its CPU reference against a direct loop over its definition, for every
// element type on random shapes; the tactic refuses what inference refuses, and channels-last.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(DataInfer, Tile) {
  TensorShape o;
  ASSERT_TRUE(infer(&ops::Tile::infer, TileParams{makeDims({2, 0, 3})},
                    {shape({2, 3, 4}, DataType::kHALF)}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({4, 0, 12}));
  EXPECT_EQ(o.type, DataType::kHALF);
  EXPECT_ERROR(infer(&ops::Tile::infer, TileParams{makeDims({2, -1})}, {shape({2, 3})}),
               "negative");
  EXPECT_ERROR(infer(&ops::Tile::infer, TileParams{makeDims({2})}, {shape({2, 3})}), "rank");
  EXPECT_ERROR(
      infer(&ops::Tile::infer, TileParams{makeDims({int64_t{1} << 59, 1})}, {shape({4, 3})}),
      "too large");
}

TEST(DataInfer, TileTacticsRefuseInconsistentOutputs) {
  const auto in = desc(makeDims({2, 3}), DataType::kINT32);
  // Output dims that do not match what inference gives.
  const auto wrong = desc(makeDims({2, 4}), DataType::kINT32);
  declines(ops::Tile::cpuTactics().back(),
           config(LayerType::kTILE, TileParams{makeDims({1, 1})}, {in}, {wrong}));
  // Channels-last is not supported by this layer.
  const auto nhwc = desc(makeDims({1, 2, 2, 2}), DataType::kFLOAT, TensorFormat::kCHANNELS_LAST);
  declines(ops::Tile::cpuTactics().back(),
           config(LayerType::kTILE, TileParams{makeDims({1, 1, 1, 1})}, {nhwc}, {nhwc}));
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

TEST(Tile, MatchesDefinitionForEveryType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 56; ++iter) {
    const DataType type = allTypes()[static_cast<size_t>(iter) % allTypes().size()];
    const Dims in = rng.dims(static_cast<int32_t>(rng.uniformInt(1, 4)), 4);
    TileParams p;
    p.repeats.nbDims = in.nbDims;
    for (int32_t i = 0; i < in.nbDims; ++i) p.repeats.d[i] = rng.uniformInt(iter % 8 ? 1 : 0, 3);
    const auto data = randomTensor(rng, in, type);
    Dims outDims;
    Status st;
    const auto out = runReferenceBytes(LayerType::kTILE, ops::Tile::cpuTactics(), &ops::Tile::infer,
                                       p, {desc(in, type)}, {data.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    for (int32_t i = 0; i < in.nbDims; ++i) ASSERT_EQ(outDims.d[i], in.d[i] * p.repeats.d[i]);
    expectMapped(
        out, outDims, data, dataTypeSize(type),
        [&](const std::vector<int64_t>& o) {
          std::vector<int64_t> c(o.size());
          for (size_t i = 0; i < o.size(); ++i) c[i] = o[i] % in.d[i];
          return ravel(c, in);
        },
        nullptr, "tile of " + dimsText(in) + " by " + dimsText(p.repeats));
  }
}

}  // namespace
}  // namespace kiln::testing
