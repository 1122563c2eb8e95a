// IExecutionContext::getTensorAddress gives back what setTensorAddress set (language bindings
// check zero-copy binding with it), and IDevice::getIndex says which device an engine runs on.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

std::unique_ptr<IEngine> reluEngine() {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4}));
  ILayer* relu = net->addActivation(*x, ActivationParams{});
  relu->getOutput(0)->setName("y");
  EXPECT_TRUE(net->markOutput(*relu->getOutput(0)).isOk());
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan);
  EXPECT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return engine;
}

TEST(ContextAddress, GivesBackWhatWasSetAndNullOtherwise) {
  auto engine = reluEngine();
  ASSERT_NE(engine, nullptr);
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  EXPECT_EQ(ctx->getTensorAddress("x"), nullptr);
  EXPECT_EQ(ctx->getTensorAddress("nope"), nullptr);
  EXPECT_EQ(ctx->getTensorAddress(nullptr), nullptr);
  float in[4] = {-1, 2, -3, 4}, out[4] = {};
  ASSERT_TRUE(ctx->setTensorAddress("x", in).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", out).isOk());
  EXPECT_EQ(ctx->getTensorAddress("x"), in);
  EXPECT_EQ(ctx->getTensorAddress("y"), out);
  // A refused address leaves the last one in place.
  EXPECT_FALSE(ctx->setTensorAddress("x", nullptr).isOk());
  EXPECT_EQ(ctx->getTensorAddress("x"), in);
  ASSERT_TRUE(ctx->enqueue(nullptr).isOk());
  EXPECT_EQ(out[1], 2.f);
  EXPECT_EQ(out[0], 0.f);
}

TEST(ContextAddress, CpuEngineRunsOnDeviceZeroOfKindCpu) {
  auto engine = reluEngine();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->getDevice().getKind(), DeviceKind::kCPU);
  EXPECT_EQ(engine->getDevice().getIndex(), 0);
}

}  // namespace
}  // namespace kiln
