// A verbose build says, per layer, which candidates were rejected and why, and what was chosen at
// what time (DESIGN.md §4).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "kiln/kiln.h"
#include "log_capture_util.h"

namespace kiln {
namespace {

using testing::CapturingLogger;

TEST(VerboseBuild, SaysWhatWasRejectedWhyAndWhatWasChosen) {
  CapturingLogger logger;
  setLogger(&logger);
  setLogSeverity(Severity::kInfo);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> w(8 * 4 * 9), b(8);
  for (float& v : w) v = d(rng);
  for (float& v : b) v = d(rng);
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 4, 12, 12}));
  ConvolutionParams p;
  p.outChannels = 8;
  p.kernelH = p.kernelW = 3;
  ILayer* conv = net->addConvolution(*x, p, Weights{DataType::kFLOAT, w.data(), 288},
                                     Weights{DataType::kFLOAT, b.data(), 8});
  ASSERT_NE(conv, nullptr);
  conv->setName("conv_under_test");
  ASSERT_TRUE(net->markOutput(*conv->getOutput(0)).isOk());
  BuilderConfig config;
  config.verbose = true;
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  setLogger(nullptr);
  setLogSeverity(Severity::kWarning);
  ASSERT_TRUE(s.isOk()) << s.toString();
  const std::string text = logger.text();
  EXPECT_NE(text.find("layer 'conv_under_test': tactic direct_1x1 rejected: "), std::string::npos)
      << text;
  EXPECT_NE(text.find("layer 'conv_under_test': tactic reference "), std::string::npos) << text;
  EXPECT_NE(text.find("layer 'conv_under_test' (Convolution): chose "), std::string::npos) << text;
}

TEST(VerboseBuild, QuietByDefault) {
  CapturingLogger logger;
  setLogger(&logger);
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ILayer* relu = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*relu->getOutput(0)).isOk());
  std::vector<uint8_t> plan;
  ASSERT_TRUE(createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan).isOk());
  setLogger(nullptr);
  EXPECT_EQ(logger.text(), "");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(TimingCache, SecondBuildTakesTacticsFromTheCache) {
  const std::string path = ::testing::TempDir() + "kiln_timing_cache_test.txt";
  std::remove(path.c_str());
  std::vector<float> w(8 * 4 * 9, 0.25f), b(8, -0.5f);
  auto build = [&](std::string& log) {
    CapturingLogger logger;
    setLogger(&logger);
    setLogSeverity(Severity::kInfo);
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 4, 10, 10}));
    ConvolutionParams p;
    p.outChannels = 8;
    p.kernelH = p.kernelW = 3;
    ILayer* conv = net->addConvolution(*x, p, Weights{DataType::kFLOAT, w.data(), 288},
                                       Weights{DataType::kFLOAT, b.data(), 8});
    EXPECT_TRUE(net->markOutput(*conv->getOutput(0)).isOk());
    BuilderConfig config;
    config.verbose = true;
    config.timingCachePath = path;
    std::vector<uint8_t> plan;
    Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
    setLogger(nullptr);
    setLogSeverity(Severity::kWarning);
    log = logger.text();
    return s;
  };
  std::string first, second;
  ASSERT_TRUE(build(first).isOk());
  EXPECT_EQ(first.find("from the timing cache"), std::string::npos) << first;
  ASSERT_TRUE(build(second).isOk());
  EXPECT_NE(second.find("from the timing cache"), std::string::npos) << second;
  EXPECT_EQ(second.find("rejected"), std::string::npos) << "a cache hit times nothing";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kiln
