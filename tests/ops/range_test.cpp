// Range: its shape rule (a literal length or a dim of its dims source; the values it refuses) and
// its CPU reference against ONNX's definition, output[i] = start + i * delta, for every type on
// random starts, deltas and lengths.
#include <gtest/gtest.h>

#include <array>

#include <cmath>

#include "kiln/kiln.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

RangeParams rangeParams(DataType type, double start, double delta, int64_t length,
                        int32_t lengthOf = 0) {
  RangeParams p;
  p.type = type;
  p.start = start;
  p.delta = delta;
  p.length = length;
  p.lengthOf = lengthOf;
  return p;
}

TEST(DataInfer, Range) {
  // A literal length, without inputs.
  TensorShape o = inferOk(&ops::Range::infer, rangeParams(DataType::kINT64, 0, 1, 5), {});
  EXPECT_EQ(o.dims, makeDims({5}));
  EXPECT_EQ(o.type, DataType::kINT64);
  // The length from the dims source's dim 1 (its type and the literal length do not matter).
  o = inferOk(&ops::Range::infer, rangeParams(DataType::kFLOAT, 2, -0.5, 99, 2),
              {shape({3, 7}, DataType::kINT64)});
  EXPECT_EQ(o.dims, makeDims({7}));
  EXPECT_EQ(o.type, DataType::kFLOAT);
  o = inferOk(&ops::Range::infer, rangeParams(DataType::kINT32, 0, 1, 0, 1), {shape({0, 4})});
  EXPECT_EQ(o.dims, makeDims({0}));

  inferFails(&ops::Range::infer, rangeParams(DataType::kINT64, 0, 1, 0, 1), {}, "there is none");
  inferFails(&ops::Range::infer, rangeParams(DataType::kINT64, 0, 1, 0, 3), {shape({3, 7})},
             "which has no such dim");
  inferFails(&ops::Range::infer, rangeParams(DataType::kINT64, 0, 1, 4), {shape({3})},
             "does not come from it");
  inferFails(&ops::Range::infer, rangeParams(DataType::kINT64, 0, 1, -1), {}, "length -1 < 0");
  inferFails(&ops::Range::infer, rangeParams(DataType::kHALF, 0, 1, 4), {}, "not one of");
  inferFails(&ops::Range::infer, rangeParams(DataType::kINT64, 0.5, 1, 4), {},
             "integer start and delta");
  // Values that double cannot hold exactly, or that overflow int32.
  inferFails(&ops::Range::infer, rangeParams(DataType::kINT64, 9007199254740990.0, 1, 8), {},
             "do not fit int64 exactly");
  inferFails(&ops::Range::infer, rangeParams(DataType::kINT32, 2147483600.0, 10, 8), {},
             "do not fit int32");
}

TEST(DataInfer, RangeTacticsRefuseInconsistentOutputs) {
  const auto source = desc(makeDims({2, 6}), DataType::kINT64);
  const auto wrong = desc(makeDims({5}), DataType::kINT64);  // the source says 6
  declines(ops::Range::cpuTactics().back(),
           config(LayerType::kRANGE, rangeParams(DataType::kINT64, 0, 1, 0, 2), {source}, {wrong}));
}

TEST(Range, MatchesTheOnnxDefinitionForEveryType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 60; ++iter) {
    const DataType type =
        std::array{DataType::kFLOAT, DataType::kINT32, DataType::kINT64}[iter % 3];
    const bool integer = type != DataType::kFLOAT;
    const double start = integer ? double(rng.uniformInt(-50, 50)) : rng.uniformFloat(-5.f, 5.f);
    double delta = integer ? double(rng.uniformInt(-4, 4)) : rng.uniformFloat(-2.f, 2.f);
    if (delta == 0) delta = 3;
    const int64_t length = rng.uniformInt(0, 40);
    // Half the problems take the length from a source's dim 1.
    const bool fromSource = iter % 2 == 1;
    const RangeParams p =
        rangeParams(type, start, delta, fromSource ? 1000 : length, fromSource ? 2 : 0);
    std::vector<PluginTensorDesc> in;
    std::vector<const void*> data;
    const std::vector<uint8_t> sourceBytes = rng.bytes(3 * length + 1);  // never read
    if (fromSource) {
      in.push_back(desc(makeDims({3, length}), DataType::kBOOL));
      data.push_back(sourceBytes.data());
    }
    Dims outDims;
    Status st;
    const auto out = runReferenceBytes(LayerType::kRANGE, ops::Range::cpuTactics(),
                                       &ops::Range::infer, p, in, data, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_EQ(outDims, makeDims({length}));
    for (int64_t i = 0; i < length; ++i) {
      const double want = start + double(i) * delta;
      const double got = readElement(out.data(), type, i);
      if (integer)
        ASSERT_EQ(got, want) << "element " << i;
      else
        ASSERT_EQ(float(got), float(want)) << "element " << i;
    }
  }
}

TEST(Range, ALiteralRangeWithoutInputsBuildsAndRuns) {
  // y = x + range(1, step 0.5, 5 elements), a layer with no input at all, through the builder.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({5}));
  ILayer* range = net->addLayer(rangeParams(DataType::kFLOAT, 1, 0.5, 5), {});
  ASSERT_NE(range, nullptr) << net->getLastError().toString();
  ILayer* add = net->addElementwise(*x, *range->getOutput(0), ElementwiseOp::kADD);
  add->getOutput(0)->setName("y");
  ASSERT_TRUE(net->markOutput(*add->getOutput(0)).isOk());
  std::vector<uint8_t> bytes;
  BuilderConfig config;
  config.timingRuns = 1;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, bytes);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(bytes.data(), bytes.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  Rng rng;
  std::vector<float> in = rng.values(5);
  std::vector<float> out(5, std::nanf(""));
  ASSERT_TRUE(ctx->setTensorAddress("x", in.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", out.data()).isOk());
  ASSERT_TRUE(ctx->enqueue(nullptr).isOk());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(out[i], in[i] + (1.f + 0.5f * float(i))) << "element " << i;
}

}  // namespace
}  // namespace kiln::testing
