// In-place residuals (src/builder/in_place.h): which outputs the builder gives their residual's
// bytes, on hand-made plans, and that the CPU tactics that claim it (Tactic::residualInPlace)
// compute the same bits with the output over the residual as apart from it.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/backend.h"
#include "builder/in_place.h"
#include "ops/op.h"
#include "ops/op_table.h"
#include "random_test_util.h"

namespace kiln {
namespace {

using plan::TensorKind;

// relu(x) -> r; relu(x) -> h; linear(h, W, residual r) -> y on `tactic`; relu(y) -> out, and with
// `readAgain` an add(out, r) -> out2 that reads r after the linear.
struct Fixture {
  plan::Plan plan;
  int32_t r = -1, h = -1, y = -1;

  int32_t tensor(TensorKind kind, Dims dims = makeDims({4, 8})) {
    plan::Tensor t;
    t.name = "t" + std::to_string(plan.tensors.size());
    t.dims = dims;
    t.kind = kind;
    plan.tensors.push_back(t);
    return int32_t(plan.tensors.size()) - 1;
  }
  void step(LayerType type, LayerParams params, std::vector<int32_t> in, int32_t out,
            const char* tactic = "reference") {
    plan::Step s;
    s.layerName = "s" + std::to_string(plan.steps.size());
    s.type = type;
    s.params = params;
    s.inputs = std::move(in);
    s.outputs = {out};
    s.tactic = tactic;
    plan.steps.push_back(s);
  }
  Fixture(const char* tactic, bool readAgain, bool residualIsInput = false) {
    const int32_t x = tensor(TensorKind::kINPUT);
    const int32_t w = tensor(TensorKind::kCONSTANT, makeDims({8, 8}));
    r = residualIsInput ? x : tensor(TensorKind::kACTIVATION);
    h = tensor(TensorKind::kACTIVATION);
    y = tensor(TensorKind::kACTIVATION);
    const int32_t out = tensor(readAgain ? TensorKind::kACTIVATION : TensorKind::kOUTPUT);
    const ActivationParams relu{};
    if (!residualIsInput) step(LayerType::kACTIVATION, relu, {x}, r);
    step(LayerType::kACTIVATION, relu, {x}, h);
    LinearParams p;
    p.hasResidual = true;
    step(LayerType::kLINEAR, p, {h, w, r}, y, tactic);
    step(LayerType::kACTIVATION, relu, {y}, out);
    if (readAgain)
      step(LayerType::kELEMENTWISE, ElementwiseParams{ElementwiseOp::kADD}, {out, r},
           tensor(TensorKind::kOUTPUT));
  }
  std::vector<int32_t> homes() const {
    std::vector<int32_t> home(plan.tensors.size());
    for (size_t t = 0; t < home.size(); ++t) home[t] = int32_t(t);
    return home;
  }
};

TEST(InPlace, AResidualReadLastByAnInPlaceTacticGivesItsBytesToTheOutput) {
  Fixture f("reference", false);
  std::vector<int32_t> home = f.homes();
  EXPECT_EQ(aliasResidualsInPlace(f.plan, cpuBackend(), home), 1);
  EXPECT_EQ(home[size_t(f.y)], f.r);
  EXPECT_EQ(home[size_t(f.h)], f.h);
}

TEST(InPlace, WhatMustNotBeOverwrittenKeepsItsBytes) {
  struct Case {
    const char* why;
    Fixture f;
  };
  Case cases[] = {
      {"the residual is read after the layer", Fixture("reference", true)},
      {"sgemm writes the product before it reads the residual", Fixture("sgemm", false)},
      {"the residual is the caller's input", Fixture("reference", false, true)},
  };
  for (Case& c : cases) {
    std::vector<int32_t> home = c.f.homes();
    EXPECT_EQ(aliasResidualsInPlace(c.f.plan, cpuBackend(), home), 0) << c.why;
    EXPECT_EQ(home[size_t(c.f.y)], c.f.y) << c.why;
  }
  // The same bytes as another input of the step (the residual is also the product's input).
  Fixture same("reference", false);
  same.plan.steps[2].inputs[0] = same.r;
  std::vector<int32_t> home = same.homes();
  EXPECT_EQ(aliasResidualsInPlace(same.plan, cpuBackend(), home), 0);
  // Other dims (a residual that broadcasts is not an element-for-element overwrite).
  Fixture other("reference", false);
  other.plan.tensors[size_t(other.r)].dims = makeDims({1, 8});
  home = other.homes();
  EXPECT_EQ(aliasResidualsInPlace(other.plan, cpuBackend(), home), 0);
}

// Runs `tactic` of `type` once apart and once with the output over input `residual`; the bits
// must agree.
void expectSameInPlace(LayerType type, const LayerParams& params, std::vector<Dims> dims,
                       Dims outDims, int32_t residual, const char* tactic) {
  testing::Rng rng;
  SCOPED_TRACE(rng.trace());
  KernelConfig c;
  c.type = type;
  c.params = params;
  std::vector<std::vector<float>> data;
  for (const Dims& d : dims) {
    c.inputs.push_back({d, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU});
    data.push_back(rng.floats(volume(d)));
  }
  c.outputs = {{outDims, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU}};
  c.constantInputs.assign(dims.size(), nullptr);
  const Tactic* t = ops::findTactic(cpuBackend().tactics(type), tactic);
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->residualInPlace) << tactic << " does not claim it";
  std::string why;
  KernelPtr k = t->create(c, &why);
  ASSERT_TRUE(k) << why;
  std::vector<const void*> in;
  for (auto& v : data) in.push_back(v.data());
  std::vector<float> apart(size_t(volume(outDims)));
  void* out[] = {apart.data()};
  ASSERT_TRUE(k->run(in.data(), out, nullptr, {}).isOk());
  std::vector<float> over = data[size_t(residual)];
  in[size_t(residual)] = over.data();
  out[0] = over.data();
  ASSERT_TRUE(k->run(in.data(), out, nullptr, {}).isOk());
  EXPECT_EQ(std::memcmp(apart.data(), over.data(), apart.size() * 4), 0) << tactic;
}

TEST(InPlace, TheCpuTacticsThatClaimItComputeTheSameOverTheResidual) {
  LinearParams linear;
  linear.hasBias = linear.hasResidual = linear.hasActivation = true;
  linear.activation = ActivationType::kGELU;
  expectSameInPlace(LayerType::kLINEAR, linear,
                    {makeDims({6, 5}), makeDims({5, 7}), makeDims({7}), makeDims({6, 7})},
                    makeDims({6, 7}), 3, "reference");
  ConvolutionParams conv;
  conv.outChannels = 4;
  conv.kernelH = conv.kernelW = 3;
  conv.padTop = conv.padLeft = conv.padBottom = conv.padRight = 1;
  conv.hasResidual = conv.hasActivation = true;
  conv.activation = ActivationType::kRELU;
  expectSameInPlace(
      LayerType::kCONVOLUTION, conv,
      {makeDims({2, 3, 5, 5}), makeDims({4, 3, 3, 3}), makeDims({4}), makeDims({2, 4, 5, 5})},
      makeDims({2, 4, 5, 5}), 3, "reference");
}

}  // namespace
}  // namespace kiln
