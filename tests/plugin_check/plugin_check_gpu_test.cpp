// The plugin conformance harness on CUDA (ctest label gpu): ScaleBias (which has a CUDA kernel)
// must agree between CPU and CUDA, survive CUDA graph capture and run on several streams;
// CropAndResize must pass (its CUDA rows are skipped while it has no CUDA path). Skips where
// there is no GPU.
#include <gtest/gtest.h>

#include <cstdlib>

#include <iostream>

#include "kiln/kiln.h"
#include "kiln/plugin_check.h"
#include "kiln/plugins.h"
#include "plugin_check/crop_and_resize_reference_test_util.h"

#if KILN_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kiln::testing {
namespace {

void requireGpu() {
#if KILN_HAVE_CUDA
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    GTEST_SKIP() << "no CUDA GPU: cudaGetDeviceCount: " << cudaGetErrorString(e);
  if (count == 0) GTEST_SKIP() << "no CUDA GPU: cudaGetDeviceCount returned 0";
#else
  GTEST_SKIP() << "no CUDA GPU: kiln was built without CUDA";
#endif
}

class PluginCheckGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    requireGpu();
    if (IsSkipped()) return;
    ASSERT_TRUE(PluginRegistry::global()
                    .registerLibrary(*getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath())
                    .isOk());
    // KILN_CHECK_EXAMPLE_LIBRARY in the environment overrides the build path (a bundle carried
    // to the GPU machine, scripts/gpu-check.sh).
    const char* library = std::getenv("KILN_CHECK_EXAMPLE_LIBRARY");
    ASSERT_TRUE(PluginRegistry::global()
                    .loadLibrary(library ? library : KILN_CHECK_EXAMPLE_LIBRARY)
                    .isOk());
    setLogSeverity(Severity::kError);
  }
};

TEST_F(PluginCheckGpuTest, ScaleBiasAgreesAcrossCpuAndCuda) {
  PluginCheckSpec spec;
  spec.name = "ScaleBias";
  spec.fields = {PluginCheckField::f32("scale", -0.5f), PluginCheckField::f32("bias", 0.25f)};
  spec.inputs = {PluginCheckInput::random(makeDims({4, 8, 16, 16}))};
  spec.devices = {"cpu", "cuda:0"};
  spec.contexts = 4;
  spec.iterations = 8;
  PluginCheckReport r = runPluginCheck(spec);
  r.print(std::cout);
  EXPECT_TRUE(r.allPassed());
  auto builds = r.find("build", "cuda:0");
  ASSERT_FALSE(builds.empty()) << "no CUDA build row";
  if (builds[0]->outcome == PluginCheckOutcome::kSkip)
    GTEST_SKIP() << "kiln cannot build CUDA plans yet: " << builds[0]->detail;
  for (const char* check : {"contexts agree", "CUDA graph", "devices agree"}) {
    auto rows = r.find(check, "cuda:0");
    ASSERT_FALSE(rows.empty()) << "no '" << check << "' row on cuda:0";
    for (const PluginCheckRow* row : rows)
      EXPECT_EQ(row->outcome, PluginCheckOutcome::kPass) << check << ": " << row->detail;
  }
}

// CropAndResize's three-input form: 2 images of 16x20x24, 10 boxes.
PluginCheckSpec cropSpec() {
  CropAndResizeParams p;
  PluginCheckSpec spec;
  spec.name = "CropAndResize";
  spec.fields = {PluginCheckField::i32("crop_height", p.cropH),
                 PluginCheckField::i32("crop_width", p.cropW)};
  spec.inputs = {PluginCheckInput::random(makeDims({2, 16, 20, 24})),
                 PluginCheckInput::random(makeDims({10, 4}), DataType::kFLOAT, 0.0, 1.0),
                 PluginCheckInput::random(makeDims({10}), DataType::kINT32, 0, 2)};
  spec.reference = cropAndResizeReference(p);
  return spec;
}

TEST_F(PluginCheckGpuTest, CropAndResizePassesWithCudaRequested) {
  PluginCheckSpec spec = cropSpec();
  spec.devices = {"cpu", "cuda:0"};
  PluginCheckReport r = runPluginCheck(spec);
  r.print(std::cout);
  EXPECT_TRUE(r.allPassed());
}

// The dynamic form on the GPU: a batch of 1..4 images and 1..40 boxes, one CUDA plan, run through
// min, opt, max and random shapes (each against a static CUDA plan), the workspace sized over the
// box (the linear feature map's channels-last copy at the largest batch).
TEST_F(PluginCheckGpuTest, CropAndResizeThroughAProfileOnCuda) {
  PluginCheckSpec spec = cropSpec();
  spec.profileMin = {makeDims({1, 16, 20, 24}), makeDims({1, 4}), makeDims({1})};
  spec.profileMax = {makeDims({4, 16, 20, 24}), makeDims({40, 4}), makeDims({40})};
  spec.profileDimNames = {{}, {"K"}, {"K"}};
  spec.profileRandomShapes = 4;
  spec.devices = {"cuda:0"};
  spec.maxCombinations = 3;
  spec.checkEmptyTensors = false;
  PluginCheckReport r = runPluginCheck(spec);
  r.print(std::cout);
  EXPECT_TRUE(r.allPassed());
  EXPECT_EQ(r.find("profile shapes", "cuda:0").size(), 7u);
}

}  // namespace
}  // namespace kiln::testing
