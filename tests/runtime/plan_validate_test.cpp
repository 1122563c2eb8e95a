// Each semantic rule of the plan, broken one at a time: the writer refuses to write it, and the
// reader refuses the well-formed bytes of it, saying what and where.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "builder/plan_writer.h"
#include "core/plan.h"
#include "core/plan_test_util.h"
#include "runtime/plan_validate.h"

namespace kiln::plan {
namespace {

using testing::PlanMaker;

struct Breakage {
  const char* what;
  std::function<void(Plan&)> apply;
  const char* expected;  // part of the reader's message
};

int32_t findStep(const Plan& p, LayerType type) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].type == type) return static_cast<int32_t>(i);
  return -1;
}

int32_t findTensor(const Plan& p, TensorKind kind) {
  for (size_t i = 0; i < p.tensors.size(); ++i)
    if (p.tensors[i].kind == kind) return static_cast<int32_t>(i);
  return -1;
}

Step& stepOf(Plan& p, LayerType type) { return p.steps[findStep(p, type)]; }
Tensor& tensorOf(Plan& p, TensorKind kind) { return p.tensors[findTensor(p, kind)]; }

const std::vector<Breakage>& breakages() {
  static const std::vector<Breakage> list = {
      {"empty target", [](Plan& p) { p.target = ""; }, "target"},
      {"unprintable target", [](Plan& p) { p.target = "cpu\n"; }, "printable"},
      {"bad data type", [](Plan& p) { p.tensors[0].type = static_cast<DataType>(9); },
       "invalid data type value 9"},
      {"bad tensor kind", [](Plan& p) { p.tensors[0].kind = static_cast<TensorKind>(4); },
       "invalid tensor kind value 4"},
      {"bad format", [](Plan& p) { p.tensors[0].format = static_cast<TensorFormat>(5); },
       "invalid format value 5"},
      {"rank 9", [](Plan& p) { p.tensors[0].dims.nbDims = 9; }, "rank 9"},
      {"negative dim", [](Plan& p) { p.tensors[0].dims.d[1] = -4; }, "is negative"},
      {"byte size overflow",
       [](Plan& p) {
         p.tensors[0].dims = makeDims({1ll << 40, 1ll << 30});
       },
       "overflows"},
      {"channels-last rank 3",
       [](Plan& p) {
         for (Tensor& t : p.tensors)
           if (t.dims.nbDims == 3) {
             t.format = TensorFormat::kCHANNELS_LAST;
             return;
           }
       },
       "channels-last format needs rank 4"},
      {"weight index out of range",
       [](Plan& p) { tensorOf(p, TensorKind::kCONSTANT).weightIndex = 99; }, "weight index 99"},
      {"weight size mismatch",
       [](Plan& p) {
         auto& t = tensorOf(p, TensorKind::kCONSTANT);
         p.weights[t.weightIndex] = std::make_shared<const std::vector<uint8_t>>(3, 1);
       },
       "hold 3 bytes"},
      {"weight index on an activation",
       [](Plan& p) { tensorOf(p, TensorKind::kACTIVATION).weightIndex = 0; }, "expected -1"},
      {"misaligned arena offset",
       [](Plan& p) { tensorOf(p, TensorKind::kACTIVATION).arenaOffset += 8; },
       "not a multiple of 64"},
      {"activation past the arena",
       [](Plan& p) {
         uint64_t minEnd = 0;
         for (const Tensor& t : p.tensors)
           if (t.kind == TensorKind::kACTIVATION)
             minEnd = std::max(minEnd, t.arenaOffset + tensorBytes(t.dims, t.type));
         p.arenaBytes = minEnd - 1;
       },
       "ends outside the arena"},
      {"arena offset wrapping",
       [](Plan& p) { tensorOf(p, TensorKind::kACTIVATION).arenaOffset = ~uint64_t{63}; },
       "ends outside the arena"},
      {"arena offset on an input",
       [](Plan& p) { tensorOf(p, TensorKind::kINPUT).arenaOffset = 64; }, "expected 0"},
      {"huge arena", [](Plan& p) { p.arenaBytes = uint64_t{1} << 60; }, "exceeds the limit"},
      {"step input out of range", [](Plan& p) { p.steps[1].inputs[0] = 1000; },
       "tensor index 1000"},
      {"negative step output", [](Plan& p) { p.steps[1].outputs[0] = -2; }, "tensor index -2"},
      {"use before produce", [](Plan& p) { std::swap(p.steps[0], p.steps[1]); },
       "before any step has produced it"},
      {"writes a constant",
       [](Plan& p) { p.steps[0].outputs[0] = findTensor(p, TensorKind::kCONSTANT); },
       "network input or a constant"},
      {"two producers",
       [](Plan& p) {
         Step& s = stepOf(p, LayerType::kCONSTANT);
         s.outputs = p.steps[0].outputs;
       },
       "already produced"},
      {"plugin index out of range", [](Plan& p) { stepOf(p, LayerType::kPLUGIN).pluginIndex = 7; },
       "plugin index 7"},
      {"plugin tactic", [](Plan& p) { stepOf(p, LayerType::kPLUGIN).tactic = "fast"; },
       "must be 'plugin'"},
      {"plugin index on a built-in step", [](Plan& p) { p.steps[0].pluginIndex = 0; },
       "expected -1"},
      {"empty tactic", [](Plan& p) { p.steps[0].tactic.clear(); }, "tactic name is empty"},
      {"workspace beyond the maximum",
       [](Plan& p) { p.steps[0].workspaceBytes = p.maxWorkspaceBytes + 1; }, "maxWorkspaceBytes"},
      {"input of the wrong kind",
       [](Plan& p) { p.inputs[0] = findTensor(p, TensorKind::kACTIVATION); },
       "is not of kind input"},
      {"output listed twice", [](Plan& p) { p.outputs.push_back(p.outputs[0]); }, "listed twice"},
      {"unlisted output", [](Plan& p) { p.outputs.pop_back(); }, "listed as outputs"},
      {"io index out of range", [](Plan& p) { p.outputs[0] = -1; }, "tensor index -1"},
      {"duplicate io names",
       [](Plan& p) { p.tensors[p.outputs[0]].name = p.tensors[p.inputs[0]].name; }, "same name"},
      {"unnamed input", [](Plan& p) { p.tensors[p.inputs[0]].name.clear(); }, "no name"},
      {"NUL inside an input's name",
       [](Plan& p) { p.tensors[p.inputs[0]].name += std::string(1, '\0') + "x"; },
       "NUL byte in its name"},
      {"shape values of a tensor that is no input",
       [](Plan& p) {
         p.shapeValueInputs.push_back({findTensor(p, TensorKind::kACTIVATION), {}});
       },
       "names a tensor that is no plan input"},
      {"shape values of a float input",
       [](Plan& p) {
         const int32_t t = p.inputs[0];
         p.shapeValueInputs.push_back(
             {t, std::vector<int64_t>(size_t(volume(p.tensors[t].dims)), 1)});
       },
       "is not of type INT32 or INT64"},
      {"empty plugin name", [](Plan& p) { p.plugins[0].name.clear(); }, "plugin name is empty"},
      {"shuffle not a permutation",
       [](Plan& p) {
         std::get<ShuffleParams>(stepOf(p, LayerType::kSHUFFLE).params).firstTranspose[1] = 0;
       },
       "not a permutation"},
      {"shuffle second permutation too short for the reshape",
       [](Plan& p) {
         std::get<ShuffleParams>(stepOf(p, LayerType::kSHUFFLE).params).secondTranspose[2] = 5;
       },
       "second transpose is not a permutation"},
      {"shuffle two -1",
       [](Plan& p) {
         std::get<ShuffleParams>(stepOf(p, LayerType::kSHUFFLE).params).reshapeDims =
             makeDims({-1, 12, -1});
       },
       "more than one -1"},
      {"reduce axes beyond rank",
       [](Plan& p) {
         std::get<ReduceParams>(stepOf(p, LayerType::kREDUCE).params).axesMask = 1u << 31;
       },
       "names axis 31 but the input dims"},
      {"bad pooling type",
       [](Plan& p) {
         std::get<PoolingParams>(stepOf(p, LayerType::kPOOLING).params).type =
             static_cast<PoolingType>(4);
       },
       "invalid Pooling type value 4"},
      {"bad elementwise op",
       [](Plan& p) {
         std::get<ElementwiseParams>(stepOf(p, LayerType::kELEMENTWISE).params).op =
             static_cast<ElementwiseOp>(-1);
       },
       "invalid Elementwise op value 4294967295"},
      {"bad reformat type",
       [](Plan& p) {
         std::get<ReformatParams>(stepOf(p, LayerType::kREFORMAT).params).outputType =
             static_cast<DataType>(7);
       },
       "invalid Reformat outputType value 7"},
      {"convolution groups",
       [](Plan& p) {
         std::get<ConvolutionParams>(stepOf(p, LayerType::kCONVOLUTION).params).groups = 4;
       },
       "does not divide outChannels"},
      {"convolution stride 0",
       [](Plan& p) {
         std::get<ConvolutionParams>(stepOf(p, LayerType::kCONVOLUTION).params).strideW = 0;
       },
       "must be >= 1"},
      {"output dims disagree with the layer",
       [](Plan& p) { p.tensors[stepOf(p, LayerType::kSOFTMAX).outputs[0]].dims.d[2] = 4; },
       "but the layer makes"},
      {"output type disagrees with the layer",
       [](Plan& p) {
         p.tensors[stepOf(p, LayerType::kREFORMAT).outputs[0]].type = DataType::kBF16;
       },
       "but the layer makes"},
      {"reformat output format",
       [](Plan& p) {
         p.tensors[stepOf(p, LayerType::kREFORMAT).outputs[0]].format = TensorFormat::kLINEAR;
       },
       "but the reformat makes"},
      {"softmax axis out of range",
       [](Plan& p) { std::get<SoftmaxParams>(stepOf(p, LayerType::kSOFTMAX).params).axis = 3; },
       "do not fit its input tensors"},
      {"missing step input", [](Plan& p) { stepOf(p, LayerType::kCONCATENATION).inputs.clear(); },
       "do not fit its input tensors"},
  };
  return list;
}

TEST(PlanValidate, TheRichPlanIsValid) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Status s = validatePlan(PlanMaker(seed).make());
  EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST(PlanValidate, EachBrokenRuleIsRefusedByWriterAndReader) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Plan good = PlanMaker(seed).make();
  for (const Breakage& b : breakages()) {
    SCOPED_TRACE(b.what);
    Plan bad = good;
    b.apply(bad);

    std::vector<uint8_t> bytes;
    const Status w = writePlan(bad, bytes);
    EXPECT_EQ(w.code(), StatusCode::kInternal) << w.toString();

    ASSERT_TRUE(detail::writePlanUnvalidated(bad, bytes).isOk());
    Plan read;
    const Status r = readPlan(bytes.data(), bytes.size(), read);
    EXPECT_EQ(r.code(), StatusCode::kCorruptData) << r.toString();
    EXPECT_NE(r.message().find(b.expected), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("rebuild it"), std::string::npos) << r.message();
  }
}

TEST(PlanValidate, ParameterVariantMustMatchTheLayerType) {
  Plan plan = PlanMaker(testing::freshSeed()).make();
  stepOf(plan, LayerType::kSOFTMAX).params = ConcatenationParams{1};
  std::vector<uint8_t> bytes;
  EXPECT_FALSE(writePlan(plan, bytes).isOk());
  EXPECT_FALSE(detail::writePlanUnvalidated(plan, bytes).isOk());
  const Status v = validatePlan(plan);
  EXPECT_NE(v.message().find("expected 7"), std::string::npos) << v.message();
}

TEST(PlanValidate, LayerTypeOutOfRange) {
  // (The writer cannot encode parameters for it, so this one is checked on the structure.)
  Plan plan = PlanMaker(testing::freshSeed()).make();
  plan.steps[0].type = static_cast<LayerType>(40);
  const Status s = validatePlan(plan);
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_NE(s.message().find("invalid layer type 40"), std::string::npos) << s.message();
}

TEST(PlanValidate, MessagesNameTheSectionAndTheItem) {
  Plan plan = PlanMaker(testing::freshSeed()).make();
  plan.steps[2].inputs[0] = 500;
  const Status s = validatePlan(plan);
  EXPECT_NE(s.message().find("section 'steps'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("step 2 ("), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::plan
