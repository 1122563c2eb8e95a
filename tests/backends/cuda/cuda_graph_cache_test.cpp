// CUDA graphs kept by the execution context (IExecutionContext::setCudaGraphs; issue 10 item 6),
// label gpu: one graph per (profile, input shapes, addresses), captured the second time they are
// seen and replayed after, each enqueue equal to a context that runs layer by layer.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_test_util.h"
#include "runtime/dynamic_op_cases.h"
#include "runtime/graph_cache.h"

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
  ASSERT_TRUE(direct->setCudaGraphs(false).isOk());  // the reference: layer by layer

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

// One case's engine at one shape (N=2, S=3), its inputs filled with fresh random data and two
// output buffers: what the tests of the default (automatic) graphs run.
struct OneShape {
  const Case& c;
  std::unique_ptr<IEngine> engine;
  std::vector<std::unique_ptr<IDeviceBuffer>> inputs;
  std::vector<std::unique_ptr<IDeviceBuffer>> outs;
  std::unique_ptr<IDeviceStream> stream;
  size_t outBytes = 0;

  explicit OneShape(const std::string& name, size_t nbOuts) : c(caseNamed(name)) {
    std::mt19937 rng(std::random_device{}());
    auto net = makeNetwork(c, true, 0, 0, randomConstants(c, rng));
    const Status s = buildEngine(*net, "cuda:0", {profileOf(c)}, engine);
    EXPECT_TRUE(s.isOk()) << s.toString();
    if (!engine) return;
    const IDevice& device = engine->getDevice();
    EXPECT_TRUE(device.createStream(stream).isOk());
    std::unique_ptr<IExecutionContext> probe;
    EXPECT_TRUE(engine->createExecutionContext(probe).isOk());
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      inputs.emplace_back();
      if (c.inputs[k].constant) continue;
      const Dims d = dimsAt(c.inputs[k].dims, 2, 3);
      const std::vector<uint8_t> data = randomBytes(c.inputs[k], d, rng);
      EXPECT_TRUE(device.allocate(data.size(), "input", inputs.back()).isOk());
      EXPECT_TRUE(device.copyFromHost(inputs.back()->data(), data.data(), data.size()).isOk());
      EXPECT_TRUE(probe->setInputShape(("in" + std::to_string(k)).c_str(), d).isOk());
    }
    outBytes = size_t(volume(probe->getTensorShape("out"))) *
               dataTypeSize(engine->getTensorDesc("out").type);
    for (size_t k = 0; k < nbOuts; ++k) {
      outs.emplace_back();
      EXPECT_TRUE(device.allocate(outBytes, "out", outs.back()).isOk());
    }
  }
  // A context with the inputs bound at this shape and its output in outs[out].
  std::unique_ptr<IExecutionContext> context(size_t out) {
    std::unique_ptr<IExecutionContext> ctx;
    EXPECT_TRUE(engine->createExecutionContext(ctx).isOk());
    bind(*ctx, out);
    return ctx;
  }
  void bind(IExecutionContext& ctx, size_t out) {
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      if (c.inputs[k].constant) continue;
      const std::string name = "in" + std::to_string(k);
      EXPECT_TRUE(ctx.setInputShape(name.c_str(), dimsAt(c.inputs[k].dims, 2, 3)).isOk());
      EXPECT_TRUE(ctx.setTensorAddress(name.c_str(), inputs[k]->data()).isOk());
    }
    EXPECT_TRUE(ctx.setTensorAddress("out", outs[out]->data()).isOk());
  }
  Status enqueue(IExecutionContext& ctx, size_t out) {
    KILN_RETURN_IF_ERROR(
        engine->getDevice().fill(outs[out]->data(), 0xFF, outBytes, stream->get()));
    KILN_RETURN_IF_ERROR(ctx.enqueue(stream->get()));
    return stream->synchronize();
  }
  std::vector<uint8_t> read(size_t out) const {
    std::vector<uint8_t> bytes(outBytes);
    EXPECT_TRUE(engine->getDevice().copyToHost(bytes.data(), outs[out]->data(), outBytes).isOk());
    return bytes;
  }
};

// A plugin-free CUDA plan's contexts replay graphs without being asked (issue 9 item 5: the
// host cost of an enqueue is then one graph launch), and compute what layer by layer computes.
TEST(CudaGraphDefault, PluginFreePlansReplayFromTheSecondEnqueue) {
  KILN_SKIP_WITHOUT_GPU();
  OneShape run("convolution_3x3_bias", 2);
  ASSERT_TRUE(run.engine);
  auto automatic = run.context(0);
  auto direct = run.context(1);
  EXPECT_TRUE(automatic->getCudaGraphs());
  ASSERT_TRUE(direct->setCudaGraphs(false).isOk());
  EXPECT_FALSE(direct->getCudaGraphs());
  ASSERT_TRUE(run.enqueue(*direct, 1).isOk());
  for (int k = 0; k < 4; ++k) {
    const Status s = run.enqueue(*automatic, 0);
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(run.read(0), run.read(1)) << "enqueue " << k;
  }
  const CudaGraphStats stats = automatic->getCudaGraphStats();
  EXPECT_EQ(stats.direct, 1);
  EXPECT_EQ(stats.captured, 1);
  EXPECT_EQ(stats.replayed, 3);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(direct->getCudaGraphStats().replayed, 0);
}

// Addresses that keep changing past what a context keeps: automatic graphs give up (each capture
// launched once), graphs asked for stay on.
TEST(CudaGraphDefault, AutomaticGraphsGiveUpWhenAddressesKeepChanging) {
  KILN_SKIP_WITHOUT_GPU();
  const size_t buffers = GraphCache::kMaxGraphs + 2;
  OneShape run("matrix_multiply_by_a_weight", buffers + 1);
  ASSERT_TRUE(run.engine);
  auto automatic = run.context(0);
  auto asked = run.context(0);
  auto direct = run.context(buffers);
  ASSERT_TRUE(asked->setCudaGraphs(true).isOk());
  ASSERT_TRUE(direct->setCudaGraphs(false).isOk());
  ASSERT_TRUE(run.enqueue(*direct, buffers).isOk());
  const std::vector<uint8_t> want = run.read(buffers);
  // Each output buffer twice in a row: layer by layer, then a capture launched once.
  for (size_t b = 0; b < buffers; ++b) {
    for (IExecutionContext* ctx : {automatic.get(), asked.get()}) {
      run.bind(*ctx, b);
      for (int k = 0; k < 2; ++k) {
        ASSERT_TRUE(run.enqueue(*ctx, b).isOk());
        EXPECT_EQ(run.read(b), want) << "buffer " << b;
      }
    }
  }
  CudaGraphStats stats = automatic->getCudaGraphStats();
  EXPECT_FALSE(automatic->getCudaGraphs());
  EXPECT_EQ(stats.captured, static_cast<int64_t>(GraphCache::kMaxGraphs) + 1);
  EXPECT_EQ(stats.held, 0);
  // The first enqueue of each buffer; those after the graphs went off are not counted.
  EXPECT_EQ(stats.direct, stats.captured);
  stats = asked->getCudaGraphStats();
  EXPECT_TRUE(asked->getCudaGraphs());
  EXPECT_EQ(stats.captured, static_cast<int64_t>(buffers));
  EXPECT_EQ(stats.held, static_cast<int32_t>(GraphCache::kMaxGraphs));
}

// A caller capturing its stream gets the context's layers in its own graph, with or without
// the context's graphs: the context neither captures nor fails.
TEST(CudaGraphDefault, ACallersCaptureGetsTheLayers) {
  KILN_SKIP_WITHOUT_GPU();
  OneShape run("layer_normalization", 2);
  ASSERT_TRUE(run.engine);
  auto direct = run.context(1);
  ASSERT_TRUE(direct->setCudaGraphs(false).isOk());
  ASSERT_TRUE(run.enqueue(*direct, 1).isOk());
  for (bool asked : {false, true}) {
    SCOPED_TRACE(asked ? "setCudaGraphs(true)" : "the default");
    auto ctx = run.context(0);
    if (asked) ASSERT_TRUE(ctx->setCudaGraphs(true).isOk());
    // Seen before, so that without the caller's capture this enqueue would capture.
    ASSERT_TRUE(run.enqueue(*ctx, 0).isOk());
    std::unique_ptr<IDeviceGraph> graph;
    Status s = run.engine->getDevice().captureGraph(
        run.stream->get(), [&] { return ctx->enqueue(run.stream->get()); }, graph);
    ASSERT_TRUE(s.isOk()) << s.toString();
    const CudaGraphStats stats = ctx->getCudaGraphStats();
    EXPECT_EQ(stats.captured, 0);
    EXPECT_EQ(stats.failed, 0);
    EXPECT_EQ(stats.direct, 2);
    ASSERT_TRUE(run.engine->getDevice()
                    .fill(run.outs[0]->data(), 0xFF, run.outBytes, run.stream->get())
                    .isOk());
    ASSERT_TRUE(graph->launch(run.stream->get()).isOk());
    ASSERT_TRUE(run.stream->synchronize().isOk());
    EXPECT_EQ(run.read(0), run.read(1));
  }
}

// cuDNN (convolution), cuBLAS (products), the fused attention kernel and a plain kernel.
INSTANTIATE_TEST_SUITE_P(Cases, CudaGraphCache,
                         ::testing::Values("convolution_3x3_bias", "matrix_multiply_by_a_weight",
                                           "attention", "layer_normalization"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln::testing::dynamic_ops
