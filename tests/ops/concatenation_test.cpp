// Concatenation: its shape rule and its CPU tactic, byte-exact against coordinate-by-coordinate
// expectations on random shapes and every element size, a hand-computed case, and refusals.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

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

// ---------------------------------------------------------------------------------------------
// CPU tactics

TEST(Concatenation, HandComputed) {
  ConcatenationParams p;
  p.axis = 1;
  const std::vector<PluginTensorDesc> in = {desc(makeDims({2, 1}), DataType::kINT32),
                                            desc(makeDims({2, 2}), DataType::kINT32)};
  auto cfg =
      config(LayerType::kCONCATENATION, p, in, inferredOutputs(ops::Concatenation::infer, p, in));
  auto k = create(tacticNamed(ops::Concatenation::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const std::vector<int32_t> a = {1, 2}, b = {3, 4, 5, 6};
  std::vector<int32_t> out(6);
  ASSERT_TRUE(runKernel(*k, {a.data(), b.data()}, {out.data()}).isOk());
  EXPECT_EQ(out, (std::vector<int32_t>{1, 3, 4, 2, 5, 6}));
}

TEST(Concatenation, RandomShapesEveryType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 30; ++round) {
    const DataType type = allTypes()[round % 7];
    const size_t es = dataTypeSize(type);
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 5));
    const Dims base = rng.dims(rank, 4);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(0, rank - 1));
    const int n = static_cast<int>(rng.uniformInt(1, 4));
    std::vector<PluginTensorDesc> in;
    std::vector<std::vector<uint8_t>> data;
    for (int i = 0; i < n; ++i) {
      Dims d = base;
      d.d[axis] = rng.uniformInt(0, 4);  // an empty input now and then
      in.push_back(desc(d, type));
      data.push_back(rng.bytes(volume(d) * static_cast<int64_t>(es)));
    }
    ConcatenationParams p;
    p.axis = rng.uniformInt(0, 1) ? axis : axis - rank;
    auto cfg =
        config(LayerType::kCONCATENATION, p, in, inferredOutputs(ops::Concatenation::infer, p, in));
    const Dims od = cfg.outputs[0].dims;
    auto k = create(tacticNamed(ops::Concatenation::cpuTactics(), "reference"), cfg);
    ASSERT_TRUE(k);
    std::vector<const void*> ptrs;
    for (const auto& v : data) ptrs.push_back(v.data());
    std::vector<uint8_t> out(static_cast<size_t>(volume(od)) * es, 0);
    ASSERT_TRUE(runKernel(*k, ptrs, {out.data()}).isOk());
    // Output element i comes from the input whose axis range holds its axis coordinate.
    for (int64_t i = 0; i < volume(od); ++i) {
      auto c = unravel(i, od);
      int which = 0;
      while (c[static_cast<size_t>(axis)] >= in[static_cast<size_t>(which)].dims.d[axis]) {
        c[static_cast<size_t>(axis)] -= in[static_cast<size_t>(which)].dims.d[axis];
        ++which;
      }
      const auto s = stridesOf(in[static_cast<size_t>(which)].dims);
      int64_t src = 0;
      for (int32_t k2 = 0; k2 < rank; ++k2)
        src += c[static_cast<size_t>(k2)] * s[static_cast<size_t>(k2)];
      ASSERT_EQ(
          0,
          std::memcmp(out.data() + i * static_cast<int64_t>(es),
                      data[static_cast<size_t>(which)].data() + src * static_cast<int64_t>(es), es))
          << "round " << round << " element " << i;
    }
  }
}

TEST(Concatenation, Refusals) {
  const auto& ref = tacticNamed(ops::Concatenation::cpuTactics(), "reference");
  ConcatenationParams p;
  p.axis = 0;
  const Dims d = makeDims({2, 3});
  EXPECT_NE(declines(ref, config(LayerType::kCONCATENATION, p, {desc(d), desc(d)},
                                 {desc(makeDims({5, 3}))}))
                .find("[5,3]"),
            std::string::npos);
  declines(ref, config(LayerType::kCONCATENATION, p, {desc(d), desc(makeDims({2, 4}))},
                       {desc(makeDims({4, 3}))}));
  declines(ref, config(LayerType::kCONCATENATION, p, {}, {desc(d)}));
  const Dims d4 = makeDims({1, 2, 2, 2});
  const auto cl = desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST);
  declines(ref,
           config(LayerType::kCONCATENATION, p, {cl, cl},
                  {desc(makeDims({2, 2, 2, 2}), DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)}));
}

}  // namespace
}  // namespace kiln::testing
