// FP32 constants beyond FP16's range are clamped to +-65504 when the builder converts them
// (src/builder/half_constants.h); the conversion itself is the CPU reformat's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backends/backend.h"
#include "builder/half_constants.h"
#include "ops/op.h"

namespace kiln {
namespace {

TEST(HalfConstants, FiniteOverflowsClampAndEverythingElseConvertsAsItIs) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> source = {-3.4028235e38f, 1e5f, 65504.f, 65520.f,       -65519.f,
                                     2.5f,           inf,  -inf,    std::nanf(""), 0.f};
  KernelConfig c;
  c.type = LayerType::kREFORMAT;
  c.params = ReformatParams{DataType::kHALF, TensorFormat::kLINEAR};
  const Dims d = makeDims({int64_t(source.size())});
  c.inputs = {{d, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU}};
  c.outputs = {{d, DataType::kHALF, TensorFormat::kLINEAR, DeviceKind::kCPU}};
  c.constantInputs = {source.data()};
  std::string why;
  KernelPtr k;
  for (const Tactic& t : cpuBackend().tactics(LayerType::kREFORMAT))
    if ((k = t.create(c, &why))) break;
  ASSERT_TRUE(k) << why;
  std::vector<uint16_t> half(source.size());
  const void* in[] = {source.data()};
  void* out[] = {half.data()};
  ASSERT_TRUE(k->run(in, out, nullptr, {}).isOk());
  EXPECT_EQ(half[0], 0xfc00);  // -inf before clamping
  EXPECT_EQ(clampHalfOverflows(source.data(), half.data(), half.size()), 3u);
  const std::vector<uint16_t> want = {0xfbff, 0x7bff, 0x7bff, 0x7bff,  0xfbff,
                                      0x4100, 0x7c00, 0xfc00, half[8], 0x0000};
  EXPECT_EQ(half, want);
  EXPECT_EQ(half[8] & 0x7c00, 0x7c00);  // NaN stays NaN
  EXPECT_NE(half[8] & 0x03ff, 0);
}

}  // namespace
}  // namespace kiln
