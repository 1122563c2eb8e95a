// Trilu: its shape rule, and its CPU tactic against an independent reference (the ONNX definition
// written out directly) on random shapes, types, diagonals and both triangles.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/backend.h"
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

TEST(Trilu, ShapeRuleKeepsShapeAndTypeAndNeedsAMatrix) {
  std::vector<TensorShape> out;
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT64, DataType::kBOOL}) {
    ASSERT_TRUE(ops::Trilu::infer(TriluParams{}, {{makeDims({2, 3, 4}), t}}, out).isOk());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dims, makeDims({2, 3, 4}));
    EXPECT_EQ(out[0].type, t);
  }
  const Status s = ops::Trilu::infer(TriluParams{}, {{makeDims({5}), DataType::kFLOAT}}, out);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank >= 2"), std::string::npos) << s.message();
  EXPECT_NE(ops::Trilu::infer(TriluParams{}, {}, out).message().find("expects 1 input"),
            std::string::npos);
}

TEST(Trilu, TypeRuleMovesEveryTypeAsItIs) {
  std::vector<DataType> types = {DataType::kINT64};
  std::string why;
  ASSERT_TRUE(ops::computeTypes(LayerType::kTRILU, TriluParams{}, types, why)) << why;
  EXPECT_EQ(types[0], DataType::kINT64);
}

// ONNX Trilu, element by element: upper keeps j >= i + k, lower keeps j <= i + k.
std::vector<double> expected(const std::vector<double>& x, const Dims& d, bool upper, int64_t k) {
  const int64_t rows = d.d[d.nbDims - 2], cols = d.d[d.nbDims - 1];
  std::vector<double> y(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    const int64_t j = static_cast<int64_t>(e) % cols;
    const int64_t i = (static_cast<int64_t>(e) / cols) % rows;
    const bool kept = upper ? j >= i + k : j <= i + k;
    y[e] = kept ? x[e] : 0.0;
  }
  return y;
}

TEST(Trilu, ReferenceMatchesTheOnnxDefinitionOnRandomProblems) {
  std::mt19937 rng(std::random_device{}());
  const DataType types[] = {DataType::kFLOAT, DataType::kHALF, DataType::kINT32,
                            DataType::kINT64, DataType::kINT8, DataType::kBOOL};
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_int_distribution<int> rank(2, 4), extent(1, 7), kPick(-8, 8);
    Dims d;
    d.nbDims = rank(rng);
    for (int32_t a = 0; a < d.nbDims; ++a) d.d[a] = extent(rng);
    const DataType t = types[trial % 6];
    const TriluParams p{trial % 2 == 0, kPick(rng)};
    SCOPED_TRACE(dimsString(d) + " " + dataTypeName(t) + (p.upper ? " upper" : " lower") + " k " +
                 std::to_string(p.k));
    const int64_t n = volume(d);
    std::vector<uint8_t> in(static_cast<size_t>(n) * dataTypeSize(t));
    std::vector<double> x(static_cast<size_t>(n));
    std::uniform_int_distribution<int> value(t == DataType::kBOOL ? 1 : -100, 100);
    for (int64_t e = 0; e < n; ++e) {
      writeElement(in.data(), t, e, value(rng) == 0 ? 7 : value(rng));  // never 0: zeros must show
      x[static_cast<size_t>(e)] = readElement(in.data(), t, e);
    }
    KernelConfig c;
    c.type = LayerType::kTRILU;
    c.params = p;
    c.inputs = {{d, t, TensorFormat::kLINEAR, DeviceKind::kCPU}};
    c.outputs = c.inputs;
    c.constantInputs = {nullptr};
    const auto tactics = cpuBackend().tactics(LayerType::kTRILU);
    ASSERT_FALSE(tactics.empty());
    std::string why;
    KernelPtr k = tactics.back().create(c, &why);
    ASSERT_TRUE(k) << why;
    std::vector<uint8_t> out(in.size(), 0xAB);
    const void* ins[] = {in.data()};
    void* outs[] = {out.data()};
    ASSERT_TRUE(k->run(ins, outs, nullptr, {}).isOk());
    const std::vector<double> want = expected(x, d, p.upper, p.k);
    for (int64_t e = 0; e < n; ++e)
      ASSERT_EQ(readElement(out.data(), t, e), want[static_cast<size_t>(e)]) << "element " << e;
  }
}

}  // namespace
}  // namespace kiln::testing
