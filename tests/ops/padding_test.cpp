// Padding: its shape rule (modes, pad ranges) and its CPU reference against numpy.pad's
// definition, for every element type and mode on random shapes, and into an empty axis; the
// tactic refuses what inference refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "kiln/float16.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(DataInfer, Padding) {
  TensorShape o;
  PaddingParams p;
  p.before[0] = 1;
  p.after[1] = 3;
  ASSERT_TRUE(infer(&ops::Padding::infer, p, {shape({2, 3}, DataType::kINT64)}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({3, 6}));
  EXPECT_EQ(o.type, DataType::kINT64);
  p.mode = PaddingMode::kREFLECT;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 3})}), "below the dim 3");
  EXPECT_TRUE(infer(&ops::Padding::infer, p, {shape({2, 4})}).isOk());
  p.mode = PaddingMode::kEDGE;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({0, 4})}), "empty axis");
  p.mode = static_cast<PaddingMode>(7);
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 4})}), "unknown mode");
  p.mode = PaddingMode::kCONSTANT;
  p.before[1] = -1;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 4})}), "must be in [0");
  p.before[1] = int64_t{1} << 61;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 4})}), "must be in [0");
}

TEST(DataInfer, PaddingTacticsRefuseInconsistentOutputs) {
  const auto in = desc(makeDims({2, 3}), DataType::kINT32);
  // Output dims that do not match what inference gives.
  const auto wrong = desc(makeDims({2, 4}), DataType::kINT32);
  declines(ops::Padding::cpuTactics().back(),
           config(LayerType::kPADDING, PaddingParams{}, {in}, {wrong}));
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

// The fill value as the element type's bytes, converted here independently of the kernel.
std::vector<uint8_t> expectedFill(float v, DataType type) {
  std::vector<uint8_t> b(8, 0);
  auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof x); };
  switch (type) {
    case DataType::kFLOAT:
      put(v);
      break;
    case DataType::kHALF:
      put(floatToHalf(v));
      break;
    case DataType::kBF16:
      put(floatToBf16(v));
      break;
    case DataType::kINT8:
      put(static_cast<int8_t>(std::trunc(v)));
      break;
    case DataType::kINT32:
      put(static_cast<int32_t>(std::trunc(v)));
      break;
    case DataType::kINT64:
      put(static_cast<int64_t>(std::trunc(v)));
      break;
    case DataType::kBOOL:
      put(static_cast<uint8_t>(v != 0.f ? 1 : 0));
      break;
  }
  return b;
}

// numpy.pad's index for coordinate i (already shifted by `before`) of an axis of n elements.
int64_t padSource(PaddingMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == PaddingMode::kCONSTANT) return -1;
  if (mode == PaddingMode::kEDGE) return std::clamp<int64_t>(i, 0, n - 1);
  // Reflect: mirror around the first and last elements until inside.
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

TEST(Padding, MatchesDefinitionForEveryTypeAndMode) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const PaddingMode modes[] = {PaddingMode::kCONSTANT, PaddingMode::kREFLECT, PaddingMode::kEDGE};
  for (int iter = 0; iter < 84; ++iter) {
    const DataType type = allTypes()[static_cast<size_t>(iter) % allTypes().size()];
    PaddingParams p;
    p.mode = modes[iter / 7 % 3];
    p.value = rng.nonZeroFloat(-100.f, 100.f);
    const Dims in = rng.dims(static_cast<int32_t>(rng.uniformInt(1, 4)), 5);
    for (int32_t i = 0; i < in.nbDims; ++i) {
      const int64_t most = p.mode == PaddingMode::kREFLECT ? in.d[i] - 1 : 3;
      p.before[i] = rng.uniformInt(0, most);
      p.after[i] = rng.uniformInt(0, most);
    }
    const auto data = randomTensor(rng, in, type);
    Dims outDims;
    Status st;
    const auto out =
        runReferenceBytes(LayerType::kPADDING, ops::Padding::cpuTactics(), &ops::Padding::infer, p,
                          {desc(in, type)}, {data.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    for (int32_t i = 0; i < in.nbDims; ++i)
      ASSERT_EQ(outDims.d[i], in.d[i] + p.before[i] + p.after[i]);
    const auto fill = expectedFill(p.value, type);
    expectMapped(
        out, outDims, data, dataTypeSize(type),
        [&](const std::vector<int64_t>& o) {
          std::vector<int64_t> c(o.size());
          for (size_t i = 0; i < o.size(); ++i) {
            c[i] = padSource(p.mode, o[i] - p.before[i], in.d[i]);
            if (c[i] < 0) return int64_t{-1};
          }
          return ravel(c, in);
        },
        fill.data(),
        "padding mode " + std::to_string(static_cast<int>(p.mode)) + " of " + dimsText(in) + " " +
            dataTypeName(type) + " value " + std::to_string(p.value));
  }
}

TEST(Padding, ConstantIntoEmptyAxisFillsEverything) {
  PaddingParams p;
  p.value = 7.5f;
  p.before[0] = 1;
  p.after[1] = 2;
  const Dims in = makeDims({0, 3});
  Dims outDims;
  Status st;
  const auto out =
      runReferenceBytes(LayerType::kPADDING, ops::Padding::cpuTactics(), &ops::Padding::infer, p,
                        {desc(in, DataType::kINT32)}, {nullptr}, &outDims, &st);
  ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_EQ(outDims, makeDims({1, 5}));
  for (int i = 0; i < 5; ++i) {
    int32_t v;
    std::memcpy(&v, out.data() + 4 * i, 4);
    EXPECT_EQ(v, 7);
  }
}

}  // namespace
}  // namespace kiln::testing
