// Slice and padding reference kernels against direct loops over their definitions, for every
// element type on random shapes.
#include <algorithm>

#include "kiln/float16.h"
#include "ops/data_test_util.h"
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::test {
namespace {

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
    const auto out = runReference(LayerType::kSLICE, ops::Slice::cpuTactics(), &ops::Slice::infer,
                                  p, {desc(in, type)}, {data.data()}, &outDims, &st);
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
        runReference(LayerType::kPADDING, ops::Padding::cpuTactics(), &ops::Padding::infer, p,
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
      runReference(LayerType::kPADDING, ops::Padding::cpuTactics(), &ops::Padding::infer, p,
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
}  // namespace kiln::test
