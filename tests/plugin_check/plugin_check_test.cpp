// The plugin conformance harness on CPU: CropAndResize (both forms, against an independent
// reference), the example ScaleBias library, and a deliberately broken plugin whose defects must
// show in the right rows.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "kiln/kiln.h"
#include "kiln/plugin_check.h"
#include "kiln/plugins.h"
#include "plugin_check/bad_plugin.h"
#include "plugin_check/crop_and_resize_reference_test_util.h"

namespace kiln::testing {
namespace {

class PluginCheckTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(PluginRegistry::global()
                    .registerLibrary(*getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath())
                    .isOk());
    ASSERT_TRUE(PluginRegistry::global().registerCreator(badPluginCreator(), "").isOk());
    setLogSeverity(Severity::kError);
  }

  static PluginCheckReport check(const PluginCheckSpec& spec) {
    PluginCheckReport report = runPluginCheck(spec);
    std::ostringstream table;
    report.print(table);
    std::cout << table.str();
    return report;
  }

  // Every row of `check` (on `device`) has `outcome`, and there is at least one.
  static void expectRows(const PluginCheckReport& r, const std::string& check,
                         PluginCheckOutcome outcome, const std::string& device = "") {
    auto rows = r.find(check, device);
    ASSERT_FALSE(rows.empty()) << "no '" << check << "' row";
    for (const PluginCheckRow* row : rows)
      EXPECT_EQ(row->outcome, outcome)
          << check << " " << row->device << " " << row->combination << ": " << row->detail;
  }
};

PluginCheckSpec cropAndResizeSpec(int nbInputs, CropAndResizeParams p) {
  PluginCheckSpec spec;
  spec.name = "CropAndResize";
  spec.fields = {PluginCheckField::i32("crop_height", p.cropH),
                 PluginCheckField::i32("crop_width", p.cropW),
                 PluginCheckField::str("method", p.nearest ? "nearest" : "bilinear"),
                 PluginCheckField::f32("extrapolation_value", p.extrapolation)};
  spec.devices = {"cpu"};
  if (nbInputs == 2) {
    spec.inputs = {PluginCheckInput::random(makeDims({2, 3, 9, 11})),
                   PluginCheckInput::random(makeDims({2, 4, 4}), DataType::kFLOAT, 0.0, 1.0)};
  } else {
    spec.inputs = {PluginCheckInput::random(makeDims({2, 3, 9, 11})),
                   PluginCheckInput::random(makeDims({5, 4}), DataType::kFLOAT, 0.0, 1.0),
                   PluginCheckInput::random(makeDims({5}), DataType::kINT32, 0, 2)};
  }
  spec.reference = cropAndResizeReference(p);
  return spec;
}

TEST_F(PluginCheckTest, CropAndResizeThreeInputsPassesEverything) {
  CropAndResizeParams p;
  p.cropH = 5;
  p.cropW = 6;
  PluginCheckReport r = check(cropAndResizeSpec(3, p));
  EXPECT_TRUE(r.allPassed());
  // fp32/fp16/bf16 x formats: the harness checked more than one combination, and each one ran
  // on 3 contexts, round-tripped and matched the reference.
  EXPECT_GT(r.find("build", "cpu").size(), 4u);
  expectRows(r, "round trip", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "contexts agree", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "formats agree", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "reference", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "empty tensor", PluginCheckOutcome::kPass, "cpu");
  for (int g = 1; g <= 9; ++g)
    expectRows(r, "guarantee " + std::to_string(g), PluginCheckOutcome::kPass);
}

// The dynamic form: a batch of 1..3 images and 1..7 boxes (K named, shared by boxes and
// box_indices), one plan for all, each shape against a static plan.
TEST_F(PluginCheckTest, CropAndResizeThreeInputsPassesThroughAProfile) {
  CropAndResizeParams p;
  p.cropH = 3;
  p.cropW = 4;
  PluginCheckSpec spec = cropAndResizeSpec(3, p);
  spec.maxCombinations = 2;
  spec.checkEmptyTensors = false;
  spec.profileMin = {makeDims({1, 3, 9, 11}), makeDims({1, 4}), makeDims({1})};
  spec.profileMax = {makeDims({3, 3, 9, 11}), makeDims({7, 4}), makeDims({7})};
  spec.profileDimNames = {{}, {"K"}, {"K"}};
  spec.profileRandomShapes = 4;
  PluginCheckReport r = check(spec);
  EXPECT_TRUE(r.allPassed());
  expectRows(r, "profile build", PluginCheckOutcome::kPass, "cpu");
  // min, opt, max and 4 random shapes.
  EXPECT_EQ(r.find("profile shapes", "cpu").size(), 7u);
  expectRows(r, "profile shapes", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "profile bounds", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "guarantee 9", PluginCheckOutcome::kPass);
}

TEST_F(PluginCheckTest, CropAndResizeTwoInputsPassesThroughAProfile) {
  PluginCheckSpec spec = cropAndResizeSpec(2, CropAndResizeParams{});
  spec.maxCombinations = 2;
  spec.checkEmptyTensors = false;
  // N shared by feature maps and rois; B (boxes per image) and W vary on their own.
  spec.profileMin = {makeDims({1, 3, 9, 5}), makeDims({1, 1, 4})};
  spec.profileMax = {makeDims({4, 3, 9, 16}), makeDims({4, 6, 4})};
  spec.profileDimNames = {{"N"}, {"N"}};
  PluginCheckReport r = check(spec);
  EXPECT_TRUE(r.allPassed());
  EXPECT_EQ(r.find("profile shapes", "cpu").size(), 6u);
  expectRows(r, "profile shapes", PluginCheckOutcome::kPass, "cpu");
}

TEST_F(PluginCheckTest, CropAndResizeTwoInputsNearestPassesEverything) {
  CropAndResizeParams p;
  p.cropH = 1;  // the crop_h == 1 rule of DESIGN §5
  p.cropW = 4;
  p.nearest = true;
  p.extrapolation = -2.5f;
  PluginCheckSpec spec = cropAndResizeSpec(2, p);
  // Boxes partly outside the image, so extrapolation is exercised.
  spec.inputs[1].low = -0.25;
  spec.inputs[1].high = 1.25;
  // Nearest sampling on reduced-precision boxes may pick the neighbouring pixel (or fall outside
  // the image): the harness holds each combination to the reference on the inputs rounded as that
  // combination feeds them, so the default tolerances (output rounding only) apply.
  PluginCheckReport r = check(spec);
  EXPECT_TRUE(r.allPassed());
  expectRows(r, "reference", PluginCheckOutcome::kPass, "cpu");
}

TEST_F(PluginCheckTest, CudaRowsAreSkippedNotFailedWithoutAGpuOrBackend) {
  PluginCheckSpec spec = cropAndResizeSpec(3, CropAndResizeParams{});
  spec.devices = {"cpu", "cuda:0"};
  spec.checkEmptyTensors = false;
  spec.maxCombinations = 2;
  PluginCheckReport r = check(spec);
  EXPECT_TRUE(r.allPassed());
  int cudaRows = 0;
  for (const PluginCheckRow& row : r.rows) cudaRows += row.device == "cuda:0";
  EXPECT_GT(cudaRows, 0);
}

TEST_F(PluginCheckTest, ExampleScaleBiasLibraryPasses) {
  ASSERT_TRUE(PluginRegistry::global().loadLibrary(KILN_CHECK_EXAMPLE_LIBRARY).isOk());
  PluginCheckSpec spec;
  spec.name = "ScaleBias";
  spec.fields = {PluginCheckField::f32("scale", 1.75f), PluginCheckField::f32("bias", -0.5f)};
  spec.inputs = {PluginCheckInput::random(makeDims({2, 3, 4, 5}))};
  spec.devices = {"cpu"};
  spec.reference = [](const std::vector<PluginCheckTensor>& in,
                      std::vector<std::vector<double>>& out, std::string&) {
    std::vector<double> y;
    for (double x : in[0].values) y.push_back(x * 1.75 - 0.5);
    out = {y};
    return true;
  };
  PluginCheckReport r = check(spec);
  EXPECT_TRUE(r.allPassed());
  // fp32 and fp16, linear only.
  EXPECT_EQ(r.find("build", "cpu").size(), 2u);
  expectRows(r, "reference", PluginCheckOutcome::kPass, "cpu");

  // And in its dynamic form, every axis varying.
  spec.profileMin = {makeDims({1, 1, 1, 1})};
  spec.profileMax = {makeDims({4, 5, 6, 7})};
  r = check(spec);
  EXPECT_TRUE(r.allPassed());
  expectRows(r, "profile shapes", PluginCheckOutcome::kPass, "cpu");
}

PluginCheckSpec badSpec(const std::string& mode) {
  PluginCheckSpec spec;
  spec.name = "PluginCheckBad";
  spec.fields = {PluginCheckField::str("mode", mode)};
  spec.inputs = {PluginCheckInput::random(makeDims({3, 7}))};
  spec.devices = {"cpu"};
  spec.reference = [](const std::vector<PluginCheckTensor>& in,
                      std::vector<std::vector<double>>& out, std::string&) {
    std::vector<double> y;
    for (double x : in[0].values) y.push_back(double(float(x) + 1.0f));
    out = {y};
    return true;
  };
  return spec;
}

TEST_F(PluginCheckTest, WellBehavedControlPluginPasses) {
  PluginCheckReport r = check(badSpec("none"));
  EXPECT_TRUE(r.allPassed());
}

TEST_F(PluginCheckTest, BrokenRoundTripFailsLoadAndGuarantee6) {
  PluginCheckReport r = check(badSpec("round_trip"));
  EXPECT_FALSE(r.allPassed());
  expectRows(r, "build", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "save/load", PluginCheckOutcome::kFail, "cpu");
  ASSERT_FALSE(r.find("save/load").empty());
  EXPECT_NE(r.find("save/load")[0]->detail.find("round trip"), std::string::npos);
  expectRows(r, "guarantee 6", PluginCheckOutcome::kFail);
  expectRows(r, "guarantee 1", PluginCheckOutcome::kPass);
}

TEST_F(PluginCheckTest, DisagreeingContextsFail) {
  PluginCheckReport r = check(badSpec("contexts"));
  EXPECT_FALSE(r.allPassed());
  expectRows(r, "concurrent enqueue", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "contexts agree", PluginCheckOutcome::kFail, "cpu");
  for (int g = 1; g <= 9; ++g)
    expectRows(r, "guarantee " + std::to_string(g), PluginCheckOutcome::kPass);
}

TEST_F(PluginCheckTest, WrongValuesFailTheReference) {
  PluginCheckReport r = check(badSpec("wrong_value"));
  EXPECT_FALSE(r.allPassed());
  expectRows(r, "contexts agree", PluginCheckOutcome::kPass, "cpu");
  expectRows(r, "reference", PluginCheckOutcome::kFail, "cpu");
}

TEST_F(PluginCheckTest, MissingCreatorAndBadFieldsAreReported) {
  PluginCheckSpec spec = badSpec("none");
  spec.name = "NoSuchPlugin";
  PluginCheckReport r = check(spec);
  EXPECT_FALSE(r.allPassed());
  expectRows(r, "creator found", PluginCheckOutcome::kFail);

  spec = cropAndResizeSpec(3, CropAndResizeParams{});
  spec.fields.pop_back();
  spec.fields[0] = PluginCheckField::f32("crop_height", 3.0f);  // wrong type
  r = check(spec);
  EXPECT_FALSE(r.allPassed());
  expectRows(r, "fields accepted", PluginCheckOutcome::kFail);
}

TEST_F(PluginCheckTest, FieldsParseByTheCreatorsTypes) {
  IPluginCreator* creator = PluginRegistry::global().getCreator("CropAndResize", "1", "");
  ASSERT_NE(creator, nullptr);
  PluginCheckField f;
  std::string error;
  ASSERT_TRUE(parsePluginCheckField(*creator, "crop_height=7", f, error)) << error;
  EXPECT_EQ(f.type, PluginFieldType::kINT32);
  EXPECT_EQ(f.length, 1);
  ASSERT_TRUE(parsePluginCheckField(*creator, "method=nearest", f, error)) << error;
  EXPECT_EQ(f.type, PluginFieldType::kSTRING);
  EXPECT_EQ(std::string(f.data.begin(), f.data.end()), "nearest");
  ASSERT_TRUE(parsePluginCheckField(*creator, "extrapolation_value=-1.5", f, error)) << error;
  EXPECT_EQ(f.type, PluginFieldType::kFLOAT32);
  EXPECT_FALSE(parsePluginCheckField(*creator, "crop_height=seven", f, error));
  EXPECT_NE(error.find("crop_height"), std::string::npos);
  EXPECT_FALSE(parsePluginCheckField(*creator, "crop_hieght=7", f, error));
  EXPECT_NE(error.find("crop_width"), std::string::npos) << error;  // lists the known fields
}

}  // namespace
}  // namespace kiln::testing
