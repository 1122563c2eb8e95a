#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "../tools/demo_network.h"
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/device.h"
#include "backends/cuda/graph.h"
#include "kiln/kiln.h"
#include "kiln/plugins.h"
#include "plugin/trace_checker.h"

namespace kiln {
namespace {

void registerPlugins() {
  Status s = PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                      getBuiltinPluginLibraryPath());
  ASSERT_TRUE(s.isOk()) << s.toString();
}

std::vector<uint8_t> buildDemo(const std::string& target, bool half = false) {
  Status s;
  auto net = demo::buildDemoNetwork(s);
  EXPECT_TRUE(net) << s.toString();
  std::vector<uint8_t> plan;
  if (!net) return plan;
  BuilderConfig config;
  config.target = target;
  config.builtinHalf = half;
  config.timingRuns = 2;
  s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return plan;
}

struct HostData {
  std::vector<float> image, boxes;
  std::vector<int32_t> indices;
};

HostData freshInputs(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.f, 1.f), coord(0.f, 1.f);
  HostData d;
  d.image.resize(3 * demo::kImageSize * demo::kImageSize);
  for (float& v : d.image) v = value(rng);
  for (int b = 0; b < demo::kBoxes; ++b) {
    float y1 = coord(rng), x1 = coord(rng), y2 = coord(rng), x2 = coord(rng);
    d.boxes.insert(d.boxes.end(), {y1, x1, y2, x2});
    d.indices.push_back(0);
  }
  return d;
}

// The demo's inputs and output in device memory, bound to one context.
struct DeviceIo {
  cuda::DeviceBuffer image, boxes, indices, scores;
  size_t scoreCount = 0;

  Status setUp(IExecutionContext& ctx, const HostData& in, size_t outCount) {
    scoreCount = outCount;
    KILN_RETURN_IF_ERROR(image.allocate(in.image.size() * 4, "image"));
    KILN_RETURN_IF_ERROR(boxes.allocate(in.boxes.size() * 4, "boxes"));
    KILN_RETURN_IF_ERROR(indices.allocate(in.indices.size() * 4, "indices"));
    KILN_RETURN_IF_ERROR(scores.allocate(outCount * 4, "class_scores"));
    KILN_RETURN_IF_ERROR(upload(in));
    KILN_RETURN_IF_ERROR(ctx.setTensorAddress("image", image.data()));
    KILN_RETURN_IF_ERROR(ctx.setTensorAddress("boxes", boxes.data()));
    KILN_RETURN_IF_ERROR(ctx.setTensorAddress("box_indices", indices.data()));
    return ctx.setTensorAddress("class_scores", scores.data());
  }
  // New input values; the output is poisoned (NaN bytes) so an unwritten element shows.
  Status upload(const HostData& in) {
    KILN_RETURN_IF_ERROR(cuda::copyToDevice(image.data(), in.image.data(), in.image.size() * 4));
    KILN_RETURN_IF_ERROR(cuda::copyToDevice(boxes.data(), in.boxes.data(), in.boxes.size() * 4));
    KILN_RETURN_IF_ERROR(
        cuda::copyToDevice(indices.data(), in.indices.data(), in.indices.size() * 4));
    const std::vector<float> poison(scoreCount, NAN);
    return cuda::copyToDevice(scores.data(), poison.data(), scoreCount * 4);
  }
  Status download(std::vector<float>& out) const {
    out.resize(scoreCount);
    return cuda::copyToHost(out.data(), scores.data(), scoreCount * 4);
  }
};

// Runs one context of `engine` on host data; CPU and CUDA engines alike.
std::vector<float> runOnce(IEngine& engine, const HostData& in) {
  std::unique_ptr<IExecutionContext> ctx;
  Status s = engine.createExecutionContext(ctx);
  EXPECT_TRUE(s.isOk()) << s.toString();
  if (!ctx) return {};
  const PluginTensorDesc outDesc = engine.getTensorDesc("class_scores");
  std::vector<float> out(static_cast<size_t>(volume(outDesc.dims)), NAN);
  const bool gpu = std::string(engine.getTarget()).rfind("cuda", 0) == 0;
  if (!gpu) {
    EXPECT_TRUE(ctx->setTensorAddress("image", const_cast<float*>(in.image.data())).isOk());
    EXPECT_TRUE(ctx->setTensorAddress("boxes", const_cast<float*>(in.boxes.data())).isOk());
    EXPECT_TRUE(
        ctx->setTensorAddress("box_indices", const_cast<int32_t*>(in.indices.data())).isOk());
    EXPECT_TRUE(ctx->setTensorAddress("class_scores", out.data()).isOk());
    s = ctx->enqueue(nullptr);
    EXPECT_TRUE(s.isOk()) << s.toString();
    return out;
  }
  cuda::StreamHandle stream;
  DeviceIo io;
  EXPECT_TRUE(stream.create().isOk());
  s = io.setUp(*ctx, in, out.size());
  EXPECT_TRUE(s.isOk()) << s.toString();
  s = ctx->enqueue(stream.get());
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_TRUE(cuda::synchronize(stream.get()).isOk());
  EXPECT_TRUE(io.download(out).isOk());
  return out;
}

std::unique_ptr<IEngine> load(const std::vector<uint8_t>& plan) {
  std::unique_ptr<IEngine> engine;
  Status s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return engine;
}

void expectClose(const std::vector<float>& got, const std::vector<float>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - want[i]), rel * (std::fabs(want[i]) + 1e-3))
        << "element " << i << ": CUDA " << got[i] << ", CPU " << want[i];
  }
}

TEST(CudaRuntime, DemoNetworkMatchesTheCpuBackend) {
  KILN_SKIP_WITHOUT_GPU();
  registerPlugins();
  auto gpu = load(buildDemo("cuda:0"));
  auto cpu = load(buildDemo("cpu"));
  ASSERT_TRUE(gpu && cpu);
  EXPECT_EQ(std::string(gpu->getTarget()).rfind("cuda:sm_", 0), 0u) << gpu->getTarget();
  EXPECT_EQ(gpu->getTensorDesc("class_scores").device, DeviceKind::kCUDA);
  for (unsigned seed : {1u, std::random_device{}()}) {
    const HostData in = freshInputs(seed);
    expectClose(runOnce(*gpu, in), runOnce(*cpu, in), 1e-4);
  }
}

TEST(CudaRuntime, DemoNetworkInFp16MatchesToHalfPrecision) {
  KILN_SKIP_WITHOUT_GPU();
  registerPlugins();
  auto gpu = load(buildDemo("cuda:0", /*half=*/true));
  auto cpu = load(buildDemo("cpu"));
  ASSERT_TRUE(gpu && cpu);
  const HostData in = freshInputs(std::random_device{}());
  expectClose(runOnce(*gpu, in), runOnce(*cpu, in), 2e-2);
}

TEST(CudaRuntime, SeveralContextsOnSeveralStreamsAgreeBitForBit) {
  KILN_SKIP_WITHOUT_GPU();
  registerPlugins();
  auto engine = load(buildDemo("cuda:0"));
  ASSERT_TRUE(engine);
  const HostData in = freshInputs(std::random_device{}());
  constexpr int kContexts = 4, kRuns = 50;
  struct Slot {
    std::unique_ptr<IExecutionContext> ctx;
    cuda::StreamHandle stream;
    DeviceIo io;
    std::vector<float> out;
    Status status;
  };
  std::vector<Slot> slots(kContexts);
  const size_t outCount = static_cast<size_t>(volume(engine->getTensorDesc("class_scores").dims));
  for (Slot& s : slots) {
    ASSERT_TRUE(engine->createExecutionContext(s.ctx).isOk());
    ASSERT_TRUE(s.stream.create().isOk());
    ASSERT_TRUE(s.io.setUp(*s.ctx, in, outCount).isOk());
  }
  std::vector<std::thread> threads;
  for (Slot& s : slots) {
    threads.emplace_back([&s] {
      for (int k = 0; k < kRuns && s.status.isOk(); ++k) s.status = s.ctx->enqueue(s.stream.get());
      if (s.status) s.status = cuda::synchronize(s.stream.get());
    });
  }
  for (auto& t : threads) t.join();
  for (Slot& s : slots) {
    ASSERT_TRUE(s.status.isOk()) << s.status.toString();
    ASSERT_TRUE(s.io.download(s.out).isOk());
    EXPECT_EQ(0, std::memcmp(s.out.data(), slots[0].out.data(), outCount * 4));
  }
  auto cpu = load(buildDemo("cpu"));
  expectClose(slots[0].out, runOnce(*cpu, in), 1e-4);
}

TEST(CudaRuntime, WholeEnqueueCapturedInACudaGraphReplaysIdentically) {
  KILN_SKIP_WITHOUT_GPU();
  registerPlugins();
  auto engine = load(buildDemo("cuda:0"));
  ASSERT_TRUE(engine);
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  // A replay would skip the plugin's enqueue(), so a plan with a plugin layer runs layer by layer
  // unless asked (plugin-free plans replay by default: cuda_graph_cache_test.cpp).
  EXPECT_FALSE(ctx->getCudaGraphs());
  cuda::StreamHandle stream;
  ASSERT_TRUE(stream.create().isOk());
  HostData in = freshInputs(std::random_device{}());
  const size_t outCount = static_cast<size_t>(volume(engine->getTensorDesc("class_scores").dims));
  DeviceIo io;
  ASSERT_TRUE(io.setUp(*ctx, in, outCount).isOk());

  cuda::CapturedGraph graph;
  Status s = graph.capture(stream.get(), [&] { return ctx->enqueue(stream.get()); });
  ASSERT_TRUE(s.isOk()) << s.toString();
  auto cpu = load(buildDemo("cpu"));
  // The graph reads whatever the bound buffers hold at replay: new images, same graph.
  const HostData captured = in;
  for (int round = 0; round < 3; ++round) {
    in = captured;
    in.image = freshInputs(std::random_device{}()).image;
    ASSERT_TRUE(io.upload(in).isOk());
    ASSERT_TRUE(graph.launch(stream.get()).isOk());
    ASSERT_TRUE(cuda::synchronize(stream.get()).isOk());
    std::vector<float> replayed;
    ASSERT_TRUE(io.download(replayed).isOk());
    expectClose(replayed, runOnce(*cpu, in), 1e-4);
    // And a direct enqueue gives exactly the replay's bits.
    ASSERT_TRUE(ctx->enqueue(stream.get()).isOk());
    ASSERT_TRUE(cuda::synchronize(stream.get()).isOk());
    std::vector<float> direct;
    ASSERT_TRUE(io.download(direct).isOk());
    EXPECT_EQ(0, std::memcmp(direct.data(), replayed.data(), outCount * 4));
  }
  EXPECT_EQ(ctx->getCudaGraphStats().captured + ctx->getCudaGraphStats().replayed, 0);
  // Asked for, the context's own graphs take the plugin in: captured at the second enqueue.
  ASSERT_TRUE(ctx->setCudaGraphs(true).isOk());
  EXPECT_TRUE(ctx->getCudaGraphs());
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(ctx->enqueue(stream.get()).isOk());
  ASSERT_TRUE(cuda::synchronize(stream.get()).isOk());
  EXPECT_EQ(ctx->getCudaGraphStats().captured, 1);
  EXPECT_EQ(ctx->getCudaGraphStats().replayed, 2);
}

TEST(CudaRuntime, LifecycleTraceOnTheGpuPathKeepsEveryGuarantee) {
  KILN_SKIP_WITHOUT_GPU();
  registerPlugins();
  const std::string path = ::testing::TempDir() + "/cuda_trace.jsonl";
  ASSERT_TRUE(setTracePath(path).isOk());
  {
    auto engine = load(buildDemo("cuda:0"));
    ASSERT_TRUE(engine);
    const HostData in = freshInputs(7);
    runOnce(*engine, in);
    runOnce(*engine, in);
  }
  ASSERT_TRUE(setTracePath("").isOk());
  std::vector<TraceViolation> violations;
  ASSERT_TRUE(checkTraceFile(path, violations).isOk());
  for (const TraceViolation& v : violations) ADD_FAILURE() << formatTraceViolation(v);
  std::vector<std::string> lines;
  ASSERT_TRUE(readTraceFile(path, lines).isOk());
  int enqueues = 0, attaches = 0;
  for (const std::string& l : lines) {
    enqueues += l.find("\"call\":\"enqueue\"") != std::string::npos;
    attaches += l.find("\"call\":\"attachToContext\"") != std::string::npos;
  }
  EXPECT_GE(enqueues, 2);
  EXPECT_EQ(attaches, 2);
}

TEST(CudaRuntime, AFailingLaunchNamesTheLayerAndTheCall) {
  KILN_SKIP_WITHOUT_GPU();
  registerPlugins();
  auto engine = load(buildDemo("cuda:0"));
  ASSERT_TRUE(engine);
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  // Unbound inputs are refused before any launch, by name.
  Status s = ctx->enqueue(nullptr);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("image"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln

#include "backends/cuda/resource_probe_plugin.h"

namespace kiln {
namespace {

TEST(CudaPluginResources, EachContextObjectGetsItsContextsPoolMemoryAndHandles) {
  KILN_SKIP_WITHOUT_GPU();
  Status s = PluginRegistry::global().registerCreator(testing::resourceProbeCreator(), "");
  ASSERT_TRUE(s.isOk()) << s.toString();
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 1000}));
  PluginSpec spec;
  spec.name = "ResourceProbe";
  ILayer* probe = net->addPlugin(&x, 1, spec);
  ASSERT_TRUE(probe);
  ASSERT_TRUE(net->markOutput(*probe->getOutput(0)).isOk());
  BuilderConfig config;
  config.target = "cuda:0";
  std::vector<uint8_t> plan;
  s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  auto engine = load(plan);
  ASSERT_TRUE(engine);

  testing::clearResourceProbeRecords();
  std::vector<float> host(4000);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : host) v = dist(rng);
  std::unique_ptr<IExecutionContext> a, b;
  ASSERT_TRUE(engine->createExecutionContext(a).isOk());
  ASSERT_TRUE(engine->createExecutionContext(b).isOk());
  const auto recs = testing::resourceProbeRecords();
  ASSERT_EQ(recs.size(), 2u);
  for (const auto& r : recs) {
    EXPECT_EQ(r.device, DeviceKind::kCUDA);
    EXPECT_EQ(r.deviceIndex, 0);
    EXPECT_NE(r.persistent, nullptr);
    EXPECT_NE(r.cublas, nullptr);
  }
  EXPECT_NE(recs[0].persistent, recs[1].persistent);
  EXPECT_NE(recs[0].cublas, recs[1].cublas) << "each context owns its own cuBLAS handle";

  for (IExecutionContext* ctx : {a.get(), b.get()}) {
    cuda::StreamHandle stream;
    cuda::DeviceBuffer in, out;
    ASSERT_TRUE(stream.create().isOk());
    ASSERT_TRUE(in.allocate(host.size() * 4, "in").isOk());
    ASSERT_TRUE(out.allocate(host.size() * 4, "out").isOk());
    ASSERT_TRUE(cuda::copyToDevice(in.data(), host.data(), host.size() * 4).isOk());
    ASSERT_TRUE(ctx->setTensorAddress("x", in.data()).isOk());
    ASSERT_TRUE(ctx->setTensorAddress(engine->getIOTensorName(1), out.data()).isOk());
    s = ctx->enqueue(stream.get());
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_TRUE(cuda::synchronize(stream.get()).isOk());
    std::vector<float> got(host.size());
    ASSERT_TRUE(cuda::copyToHost(got.data(), out.data(), got.size() * 4).isOk());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 2 * host[i]) << i;
  }
}

}  // namespace
}  // namespace kiln
