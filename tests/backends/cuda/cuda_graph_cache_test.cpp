// CUDA graphs kept by the execution context (IExecutionContext::setCudaGraphs; issue 10 item 6),
// label gpu: one graph per (profile, input shapes, addresses), captured the second time they are
// seen and replayed after, each enqueue equal to a context that runs layer by layer.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_test_util.h"
#include "runtime/dynamic_op_cases.h"

namespace kiln::testing::dynamic_ops {
namespace {

const Case& caseNamed(const std::string& name) {
  static const std::vector<Case> cases = allCases();
  for (const Case& c : cases)
    if (c.name == name) return c;
  ADD_FAILURE() << "no case " << name;
  return cases.front();
}

// Device buffers at the profile's max, so that addresses stay put while shapes change.
struct Buffers {
  std::vector<std::unique_ptr<IDeviceBuffer>> inputs;
  std::unique_ptr<IDeviceBuffer> out, reference;
};

class CudaGraphCache : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaGraphCache, ReplaysPerShapeAndMatchesLayerByLayer) {
  KILN_SKIP_WITHOUT_GPU();
  const Case& c = caseNamed(GetParam());
  std::mt19937 rng(std::random_device{}());
  const Data constants = randomConstants(c, rng);
  auto net = makeNetwork(c, true, 0, 0, constants);
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(*net, "cuda:0", {profileOf(c)}, engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  const IDevice& device = engine->getDevice();
  std::unique_ptr<IExecutionContext> graphs, direct;
  ASSERT_TRUE(engine->createExecutionContext(graphs).isOk());
  ASSERT_TRUE(engine->createExecutionContext(direct).isOk());
  ASSERT_TRUE(graphs->setCudaGraphs(true).isOk());

  Buffers b;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    b.inputs.emplace_back();
    if (c.inputs[k].constant) continue;
    const Dims max = dimsAt(c.inputs[k].dims, kMaxN, kMaxS);
    ASSERT_TRUE(device
                    .allocate(size_t(volume(max)) * dataTypeSize(c.inputs[k].type), "input",
                              b.inputs.back())
                    .isOk());
  }
  std::unique_ptr<IDeviceStream> stream;
  ASSERT_TRUE(device.createStream(stream).isOk());
  // The output at the profile's max sizes the two output buffers.
  for (size_t k = 0; k < c.inputs.size(); ++k)
    if (!c.inputs[k].constant)
      ASSERT_TRUE(direct
                      ->setInputShape(("in" + std::to_string(k)).c_str(),
                                      dimsAt(c.inputs[k].dims, kMaxN, kMaxS))
                      .isOk());
  const size_t outBytes = size_t(volume(direct->getTensorShape("out"))) *
                          dataTypeSize(engine->getTensorDesc("out").type);
  ASSERT_TRUE(device.allocate(outBytes, "out", b.out).isOk());
  ASSERT_TRUE(device.allocate(outBytes, "reference", b.reference).isOk());

  // A, B, A, B, C, B: A and B captured at their second enqueue, B replayed at its third.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 2}, {3, 4}, {1, 2},
                                                           {3, 4}, {5, 7}, {3, 4}};
  for (const auto& [n, sq] : shapes) {
    SCOPED_TRACE("N=" + std::to_string(n) + " S=" + std::to_string(sq));
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      if (c.inputs[k].constant) continue;
      const Dims d = dimsAt(c.inputs[k].dims, n, sq);
      const std::string name = "in" + std::to_string(k);
      for (IExecutionContext* ctx : {graphs.get(), direct.get()}) {
        ASSERT_TRUE(ctx->setInputShape(name.c_str(), d).isOk());
        ASSERT_TRUE(ctx->setTensorAddress(name.c_str(), b.inputs[k]->data()).isOk());
      }
      const std::vector<uint8_t> data = randomBytes(c.inputs[k], d, rng);  // fresh every run
      ASSERT_TRUE(device.copyFromHost(b.inputs[k]->data(), data.data(), data.size()).isOk());
    }
    const Dims outDims = graphs->getTensorShape("out");
    const size_t bytes = size_t(volume(outDims)) * dataTypeSize(engine->getTensorDesc("out").type);
    ASSERT_LE(bytes, outBytes);
    ASSERT_TRUE(graphs->setTensorAddress("out", b.out->data()).isOk());
    ASSERT_TRUE(direct->setTensorAddress("out", b.reference->data()).isOk());
    ASSERT_TRUE(device.fill(b.out->data(), 0xFF, outBytes, stream->get()).isOk());
    s = graphs->enqueue(stream->get());
    ASSERT_TRUE(s.isOk()) << s.toString();
    s = direct->enqueue(stream->get());
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_TRUE(stream->synchronize().isOk());
    std::vector<uint8_t> got(bytes), want(bytes);
    ASSERT_TRUE(device.copyToHost(got.data(), b.out->data(), bytes).isOk());
    ASSERT_TRUE(device.copyToHost(want.data(), b.reference->data(), bytes).isOk());
    EXPECT_EQ(got, want) << "a graph replay must compute what the layers compute";
  }
  CudaGraphStats stats = graphs->getCudaGraphStats();
  EXPECT_EQ(stats.captured, 2);
  EXPECT_EQ(stats.replayed, 3);
  EXPECT_EQ(stats.direct, 3);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(stats.held, 2);
  EXPECT_EQ(direct->getCudaGraphStats().captured, 0);

  // Another output address is another graph: seen once, it runs layer by layer.
  std::unique_ptr<IDeviceBuffer> other;
  ASSERT_TRUE(device.allocate(outBytes, "other", other).isOk());
  ASSERT_TRUE(graphs->setTensorAddress("out", other->data()).isOk());
  ASSERT_TRUE(graphs->enqueue(stream->get()).isOk());
  ASSERT_TRUE(stream->synchronize().isOk());
  stats = graphs->getCudaGraphStats();
  EXPECT_EQ(stats.direct, 4);
  EXPECT_EQ(stats.replayed, 3);
  // Stream 0 cannot be captured: layer by layer, counted as such.
  ASSERT_TRUE(graphs->enqueue(nullptr).isOk());
  ASSERT_TRUE(stream->synchronize().isOk());
  EXPECT_EQ(graphs->getCudaGraphStats().direct, 5);
  // Off: the graphs are dropped.
  ASSERT_TRUE(graphs->setCudaGraphs(false).isOk());
  EXPECT_EQ(graphs->getCudaGraphStats().held, 0);
}

// cuDNN (convolution), cuBLAS (products), the fused attention kernel and a plain kernel.
INSTANTIATE_TEST_SUITE_P(Cases, CudaGraphCache,
                         ::testing::Values("convolution_3x3_bias", "matrix_multiply_by_a_weight",
                                           "attention", "layer_normalization"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln::testing::dynamic_ops
