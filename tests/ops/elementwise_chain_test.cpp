// ElementwiseChain: its shape rule (every malformed step refused with what and where), and its CPU
// tactic against the steps written out independently (each the documented formula, in double) on
// random data, operands on either side.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

using Step = ElementwiseChainStep;

int32_t op(ElementwiseOp o) { return static_cast<int32_t>(o); }
int32_t act(ActivationType a) { return static_cast<int32_t>(a); }

// (x + r) -> relu -> 3 - v -> v * r -> clip(-1, 2)
ElementwiseChainParams sample() {
  ElementwiseChainParams p;
  appendChainStep(p, Step::kINPUT, op(ElementwiseOp::kADD), 0, 0, 1);
  appendChainStep(p, Step::kACTIVATION, act(ActivationType::kRELU));
  appendChainStep(p, Step::kSCALAR, op(ElementwiseOp::kSUB), 3.f, 0, 0, true);
  appendChainStep(p, Step::kINPUT, op(ElementwiseOp::kMUL), 0, 0, 1, true);
  appendChainStep(p, Step::kACTIVATION, act(ActivationType::kCLIP), -1.f, 2.f);
  return p;
}

std::string inferError(const ElementwiseChainParams& p, std::vector<TensorShape> in) {
  std::vector<TensorShape> out;
  const Status s = ops::ElementwiseChain::infer(p, in, out);
  return s.isOk() ? "" : s.message();
}

TEST(ElementwiseChain, ShapeRuleKeepsXsShapeAndChecksEveryStep) {
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::ElementwiseChain::infer(sample(), {f32({2, 3}), f32({2, 3})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3}));
  EXPECT_NE(inferError(sample(), {f32({2, 3}), f32({3})}).find("input 1 is"), std::string::npos);
  EXPECT_NE(inferError(sample(), {typed({2}, DataType::kINT32), typed({2}, DataType::kINT32)})
                .find("floating-point"),
            std::string::npos);
  ElementwiseChainParams none;
  EXPECT_NE(inferError(none, {f32({2})}).find("needs 1 to 8 steps"), std::string::npos);
  ElementwiseChainParams p = sample();
  p.kind[1] = 7;
  EXPECT_NE(inferError(p, {f32({2}), f32({2})}).find("step 1: unknown kind 7"), std::string::npos);
  p = sample();
  p.code[1] = act(ActivationType::kNOT);
  EXPECT_NE(inferError(p, {f32({2}), f32({2})}).find("step 1: no float activation"),
            std::string::npos);
  p = sample();
  p.code[2] = op(ElementwiseOp::kLESS);  // a comparison gives bool
  EXPECT_NE(inferError(p, {f32({2}), f32({2})}).find("step 2: no float elementwise op"),
            std::string::npos);
  p = sample();
  p.input[3] = 2;
  EXPECT_NE(inferError(p, {f32({2}), f32({2})}).find("step 3: operand input 2"), std::string::npos);
  EXPECT_NE(inferError(sample(), {f32({2}), f32({2}), f32({2})}).find("no step reads input 2"),
            std::string::npos);
  p = sample();
  p.alpha[6] = 1.f;  // beyond the steps
  EXPECT_NE(inferError(p, {f32({2}), f32({2})}).find("step 6: beyond the 5 steps"),
            std::string::npos);
}

TEST(ElementwiseChain, CpuMatchesTheStepsWrittenOut) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const int64_t n = rng.uniformInt(1, 500);
  const auto x = rng.floats(n, -4.f, 4.f), r = rng.floats(n, -2.f, 2.f);
  const Dims d = makeDims({n});
  const std::vector<float> y =
      runReference(LayerType::kELEMENTWISE_CHAIN, &ops::ElementwiseChain::infer, sample(),
                   ops::cpuTactics(LayerType::kELEMENTWISE_CHAIN), {d, d}, {x.data(), r.data()});
  ASSERT_EQ(y.size(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = double(x[i]) + r[i];
    v = v > 0 ? v : 0;
    v = 3 - v;
    v = r[i] * v;
    v = std::min(std::max(v, -1.0), 2.0);
    EXPECT_NEAR(y[i], v, 1e-6 * std::max(1.0, std::fabs(v))) << "element " << i;
  }
}

}  // namespace
}  // namespace kiln::testing
