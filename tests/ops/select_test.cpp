// Select (ONNX Where): its shape rule (broadcasting all three inputs, refusals) and its CPU
// tactic against a hand-written loop on random broadcasting shapes of every type, a hand-computed
// case with non-zero condition bytes, and refusals.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

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

// ---------------------------------------------------------------------------------------------
// CPU tactics

// Runs select on raw bytes of elements of `elemSize` bytes and checks it against the loop.
void checkSelect(Rng& rng, DataType type, const Dims& dc, const Dims& dx, const Dims& dy) {
  const std::vector<PluginTensorDesc> in = {desc(dc, DataType::kBOOL), desc(dx, type),
                                            desc(dy, type)};
  auto cfg = config(LayerType::kSELECT, SelectParams{}, in,
                    inferredOutputs(ops::Select::infer, SelectParams{}, in));
  ASSERT_EQ(cfg.outputs.size(), 1u);
  const Dims dout = cfg.outputs[0].dims;
  const size_t es = dataTypeSize(type);
  std::vector<uint8_t> c(static_cast<size_t>(volume(dc)));
  for (auto& v : c) v = static_cast<uint8_t>(rng.uniformInt(0, 1));
  const auto x = rng.bytes(volume(dx) * static_cast<int64_t>(es));
  const auto y = rng.bytes(volume(dy) * static_cast<int64_t>(es));
  auto k = create(tacticNamed(ops::Select::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  std::vector<uint8_t> got(static_cast<size_t>(volume(dout)) * es, 0);
  ASSERT_TRUE(runKernel(*k, {c.data(), x.data(), y.data()}, {got.data()}).isOk());
  for (int64_t i = 0; i < volume(dout); ++i) {
    const bool pick = c[static_cast<size_t>(broadcastIndex(i, dout, dc))] != 0;
    const uint8_t* src = pick ? x.data() + broadcastIndex(i, dout, dx) * es
                              : y.data() + broadcastIndex(i, dout, dy) * es;
    ASSERT_EQ(std::memcmp(got.data() + i * es, src, es), 0)
        << "element " << i << " of " << unravel(i, dout).size() << "-d output";
  }
}

TEST(OnnxSelect, RandomBroadcastingAnyType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const DataType types[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kINT8,
                            DataType::kINT32, DataType::kINT64, DataType::kBOOL};
  for (int round = 0; round < 30; ++round) {
    const Dims full = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 5)), 4);
    Dims dc = full, dx = full, dy = full;
    if (round % 2) {
      dc = broadcastableTo(rng, full);
      dx = broadcastableTo(rng, full);
      dy = broadcastableTo(rng, full);
    }
    SCOPED_TRACE("round " + std::to_string(round));
    checkSelect(rng, types[round % 6], dc, dx, dy);
  }
}

TEST(OnnxSelect, HandComputedAndNonZeroConditionBytes) {
  // Where([[1],[0]] (any non-zero is true), [1, 2, 3], 9) -> [[1, 2, 3], [9, 9, 9]]
  const std::vector<PluginTensorDesc> in = {desc(makeDims({2, 1}), DataType::kBOOL),
                                            desc(makeDims({3})), desc(makeDims({}))};
  auto cfg = config(LayerType::kSELECT, SelectParams{}, in,
                    inferredOutputs(ops::Select::infer, SelectParams{}, in));
  auto k = create(tacticNamed(ops::Select::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const std::vector<uint8_t> c = {5, 0};
  const std::vector<float> x = {1.f, 2.f, 3.f}, y = {9.f};
  std::vector<float> out(6, -1.f);
  ASSERT_TRUE(runKernel(*k, {c.data(), x.data(), y.data()}, {out.data()}).isOk());
  EXPECT_EQ(out, (std::vector<float>{1.f, 2.f, 3.f, 9.f, 9.f, 9.f}));
}

TEST(OnnxSelect, Refusals) {
  const auto& ref = tacticNamed(ops::Select::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  auto good = [&] {
    return config(LayerType::kSELECT, SelectParams{}, {desc(d, DataType::kBOOL), desc(d), desc(d)},
                  {desc(d)});
  };
  create(ref, good());
  auto bad = good();
  bad.outputs[0].dims = makeDims({3, 3});
  EXPECT_NE(declines(ref, bad).find("[3,3]"), std::string::npos);
  bad = good();
  bad.inputs[0].type = DataType::kFLOAT;
  EXPECT_NE(declines(ref, bad).find("bool"), std::string::npos);
  bad = good();
  bad.outputs[0].type = DataType::kINT32;
  declines(ref, bad);
  bad = good();
  bad.inputs.pop_back();
  declines(ref, bad);
  bad = good();
  bad.params = SoftmaxParams{};
  declines(ref, bad);
  const Dims d4 = makeDims({1, 2, 2, 2});
  auto cl = config(LayerType::kSELECT, SelectParams{},
                   {desc(d4, DataType::kBOOL, TensorFormat::kCHANNELS_LAST),
                    desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST),
                    desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)},
                   {desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  EXPECT_NE(declines(ref, cl).find("linear"), std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
