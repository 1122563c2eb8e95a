// Every op family at run-time shapes on the GPU (label gpu): the cases of
// tests/runtime/dynamic_op_cases.h built once for cuda:0 with a profile (N in 1..5, S in 2..7),
// run at the corners and at random shapes inside, each against a static CPU plan of that shape.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_test_util.h"
#include "runtime/dynamic_op_cases.h"

namespace kiln::testing::dynamic_ops {
namespace {

class CudaDynamicOps : public ::testing::TestWithParam<Case> {};

TEST_P(CudaDynamicOps, RandomShapesInsideTheProfileMatchTheCpu) {
  KILN_SKIP_WITHOUT_GPU();
  // FP32 on both sides; cuBLAS, cuDNN and the reductions order their sums differently.
  checkCase(GetParam(), "cuda:0", 3, 1e-4f);
}

// A shape-value input on CUDA: read from host memory (its address is host memory on every
// backend, as in TensorRT), beside a device input; other values fail the enqueue.
TEST(CudaShapeValueInputs, AreReadFromHostMemory) {
  KILN_SKIP_WITHOUT_GPU();
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ITensor* shape = net->addInput("shape", DataType::kINT64, makeDims({2}));
  const int64_t built[] = {3, 2};
  ASSERT_TRUE(shape->setShapeValues(built, 2));
  ILayer* relu = net->addActivation(*x, ActivationParams{});
  relu->getOutput(0)->setName("out");
  ASSERT_TRUE(net->markOutput(*relu->getOutput(0)).isOk());
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(*net, "cuda:0", {}, engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_TRUE(engine->isShapeValueInput("shape"));
  const IDevice& device = engine->getDevice();
  std::unique_ptr<IDeviceBuffer> in, out;
  const std::vector<float> host = {-1.f, 2.f, -3.f, 4.f, -5.f, 6.f};
  ASSERT_TRUE(device.allocate(24, "x", in).isOk());
  ASSERT_TRUE(device.allocate(24, "out", out).isOk());
  ASSERT_TRUE(device.copyFromHost(in->data(), host.data(), 24).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::vector<int64_t> values = {3, 2};
  ASSERT_TRUE(ctx->setTensorAddress("x", in->data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("shape", values.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("out", out->data()).isOk());
  std::unique_ptr<IDeviceStream> stream;
  ASSERT_TRUE(device.createStream(stream).isOk());
  s = ctx->enqueue(stream->get());
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_TRUE(stream->synchronize().isOk());
  std::vector<float> y(6);
  ASSERT_TRUE(device.copyToHost(y.data(), out->data(), 24).isOk());
  EXPECT_EQ(y, (std::vector<float>{0.f, 2.f, 0.f, 4.f, 0.f, 6.f}));
  values[1] = 5;
  s = ctx->enqueue(stream->get());
  EXPECT_NE(s.message().find("holds 5 at index 1"), std::string::npos) << s.toString();
  // Device memory is refused where it is bound, never read on the host.
  std::unique_ptr<IDeviceBuffer> onDevice;
  ASSERT_TRUE(device.allocate(16, "shape on the device", onDevice).isOk());
  s = ctx->setTensorAddress("shape", onDevice->data());
  EXPECT_NE(s.message().find("give host memory, not device memory"), std::string::npos)
      << s.toString();
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaDynamicOps, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace kiln::testing::dynamic_ops
