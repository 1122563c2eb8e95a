// The plugin contract end to end: every flow (build, save, load, several contexts on several
// threads, teardown) and a failure injected into each plugin method, each checked three ways:
// the error names what failed, the probe counts no leaked or still-initialized object, and the
// trace of the whole test satisfies guarantees 1-9 under the checker. The dynamic flow (a batch
// profile, shape changes at run time) is here too.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <random>
#include <thread>

#include "kiln/builder.h"
#include "kiln/kiln.h"
#include "lifecycle/probe_plugin.h"
#include "plugin/trace_checker.h"

namespace kiln::testing {
namespace {

constexpr int64_t kN = 2, kC = 3, kH = 4, kW = 5;
constexpr int64_t kCount = kN * kC * kH * kW;

struct ProbeOptions {
  float offset = 0.75f;
  std::string failAt;
  int32_t failDeserialized = 0;
  int32_t dropNamespace = 0;
  int32_t badRoundTrip = 0;
};

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(PluginRegistry::global().registerCreator(probeCreator(), kProbeNamespace).isOk());
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    tracePath_ = ::testing::TempDir() + "kiln_lifecycle_" + name + ".jsonl";
    ASSERT_TRUE(setTracePath(tracePath_).isOk());
    setLogSeverity(Severity::kError);
  }

  void TearDown() override {
    setLogSeverity(Severity::kWarning);
    flushTrace();
    ASSERT_TRUE(setTracePath("").isOk());
    // Every object the probe made is gone, and every initialize() was paired with terminate().
    EXPECT_EQ(gProbeLiveObjects.load(), 0);
    EXPECT_EQ(gProbeInitializedObjects.load(), 0);
    std::vector<TraceViolation> violations;
    ASSERT_TRUE(checkTraceFile(tracePath_, violations).isOk());
    // A test that makes the plugin break a guarantee expects the checker to see exactly that.
    bool sawExpected = false;
    for (const TraceViolation& v : violations) {
      if (v.guarantee == expectedViolation_) {
        sawExpected = true;
      } else {
        ADD_FAILURE() << formatTraceViolation(v);
      }
    }
    EXPECT_EQ(sawExpected, expectedViolation_ != 0)
        << "the checker did not flag the plugin's breach of guarantee " << expectedViolation_;
    std::vector<std::string> lines;
    ASSERT_TRUE(readTraceFile(tracePath_, lines).isOk());
    EXPECT_EQ(lines.empty(), !expectTrace_) << "trace has " << lines.size() << " lines";
    std::remove(tracePath_.c_str());
  }

  // input x -> relu -> Probe -> output "y"; with `profile`, x is [-1,C,H,W] and the plan serves
  // batches 1..4 (opt 2).
  Status buildPlan(const ProbeOptions& o, std::vector<uint8_t>& plan, bool profile = false) {
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({profile ? -1 : kN, kC, kH, kW}));
    ILayer* relu = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
    if (!relu) return net->getLastError();
    std::vector<PluginField> fields = {
        {"offset", &o.offset, PluginFieldType::kFLOAT32, 1},
        {"fail_at", o.failAt.c_str(), PluginFieldType::kSTRING,
         static_cast<int32_t>(o.failAt.size())},
        {"fail_deserialized", &o.failDeserialized, PluginFieldType::kINT32, 1},
        {"drop_namespace_on_clone", &o.dropNamespace, PluginFieldType::kINT32, 1},
        {"bad_round_trip", &o.badRoundTrip, PluginFieldType::kINT32, 1},
    };
    PluginSpec spec;
    spec.name = "Probe";
    spec.version = "2";
    spec.pluginNamespace = kProbeNamespace;
    spec.fields = PluginFieldCollection{static_cast<int32_t>(fields.size()), fields.data()};
    ITensor* in[] = {relu->getOutput(0)};
    ILayer* probe = net->addPlugin(in, 1, spec);
    if (!probe) return net->getLastError();
    probe->setName("probe0");
    probe->getOutput(0)->setName("y");
    KILN_RETURN_IF_ERROR(net->markOutput(*probe->getOutput(0)));
    BuilderConfig config;
    config.timingRuns = 2;
    if (profile) {
      OptimizationProfile p;
      p.setDimensions("x", OptProfileSelector::kMIN, makeDims({1, kC, kH, kW}));
      p.setDimensions("x", OptProfileSelector::kOPT, makeDims({2, kC, kH, kW}));
      p.setDimensions("x", OptProfileSelector::kMAX, makeDims({4, kC, kH, kW}));
      config.profiles.push_back(p);
    }
    return createBuilder()->buildSerializedNetwork(*net, config, plan);
  }

  static std::vector<float> randomInput() {
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> x(kCount);
    for (float& v : x) v = dist(rng);
    return x;
  }

  // Loads the plan and runs `contexts` contexts on as many threads, `runs` times each; every
  // output must equal relu(x) + offset.
  static Status loadAndRun(const std::vector<uint8_t>& plan, int contexts, int runs, float offset) {
    std::unique_ptr<IEngine> engine;
    KILN_RETURN_IF_ERROR(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine));
    const std::vector<float> x = randomInput();
    std::vector<std::unique_ptr<IExecutionContext>> ctx(contexts);
    std::vector<std::vector<float>> y(contexts, std::vector<float>(kCount, -1.f));
    std::vector<Status> status(contexts);
    for (int c = 0; c < contexts; ++c) {
      KILN_RETURN_IF_ERROR(engine->createExecutionContext(ctx[c]));
      KILN_RETURN_IF_ERROR(ctx[c]->setTensorAddress("x", const_cast<float*>(x.data())));
      KILN_RETURN_IF_ERROR(ctx[c]->setTensorAddress("y", y[c].data()));
    }
    std::vector<std::thread> threads;
    for (int c = 0; c < contexts; ++c) {
      threads.emplace_back([&, c] {
        for (int r = 0; r < runs && status[c].isOk(); ++r) status[c] = ctx[c]->enqueue(nullptr);
      });
    }
    for (auto& t : threads) t.join();
    for (int c = 0; c < contexts; ++c) {
      KILN_RETURN_IF_ERROR(status[c]);
      for (int64_t i = 0; i < kCount; ++i) {
        const float want = std::max(x[i], 0.f) + offset;
        if (y[c][i] != want) {
          return internalError("context " + std::to_string(c) + " element " + std::to_string(i) +
                               ": got " + std::to_string(y[c][i]) + ", want " +
                               std::to_string(want));
        }
      }
    }
    return Status::ok();
  }

  std::string tracePath_;
  int expectedViolation_ = 0;  // the guarantee a test makes the plugin break, if any
  bool expectTrace_ = true;
};

void expectNamesEverything(const Status& s, const std::string& phase, const std::string& method) {
  EXPECT_FALSE(s.isOk());
  const std::string& m = s.message();
  EXPECT_NE(m.find("plugin Probe"), std::string::npos) << m;
  EXPECT_NE(m.find("version 2"), std::string::npos) << m;
  EXPECT_NE(m.find("namespace 'kiln.test'"), std::string::npos) << m;
  EXPECT_NE(m.find("probe0"), std::string::npos) << m;
  EXPECT_NE(m.find("phase " + phase), std::string::npos) << m;
  EXPECT_NE(m.find(method + "()"), std::string::npos) << m;
}

TEST_F(LifecycleTest, FullFlowOnSeveralContextsAndThreads) {
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan({}, plan).isOk());
  Status s = loadAndRun(plan, 3, 20, 0.75f);
  EXPECT_TRUE(s.isOk()) << s.toString();
  // A second engine from the same bytes is independent of the first.
  s = loadAndRun(plan, 2, 5, 0.75f);
  EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST_F(LifecycleTest, ContextOutlivingItsEngineIsSafe) {
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan({}, plan).isOk());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  engine.reset();  // the context keeps what it needs alive
  std::vector<float> x = randomInput(), y(kCount);
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
  ASSERT_TRUE(ctx->enqueue(nullptr).isOk());
  EXPECT_EQ(y[0], std::max(x[0], 0.f) + 0.75f);
}

class BuildFailure : public LifecycleTest, public ::testing::WithParamInterface<const char*> {};

// A failure in any method the builder calls fails the build, names everything, leaks nothing.
TEST_P(BuildFailure, FailsTheBuildCleanly) {
  ProbeOptions o;
  o.failAt = GetParam();
  std::vector<uint8_t> plan;
  Status s = buildPlan(o, plan);
  ASSERT_FALSE(s.isOk());
  if (o.failAt == "createPlugin") {
    EXPECT_NE(s.message().find("createPlugin() failed"), std::string::npos) << s.message();
    return;
  }
  const std::string phase = o.failAt == "getOutputDimensions" ? "parse"
                            : o.failAt == "serialize"         ? "serialize"
                                                              : "build";
  // The layer is renamed after parse; a parse-time failure names the original layer name.
  if (phase == "parse") {
    EXPECT_NE(s.message().find(o.failAt + "()"), std::string::npos) << s.message();
  } else {
    expectNamesEverything(s, phase, o.failAt);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBuildMethod, BuildFailure,
                         ::testing::Values("createPlugin", "getOutputDimensions", "clone",
                                           "configurePlugin", "getWorkspaceSize", "initialize",
                                           "enqueue", "serialize"));

struct LoadCase {
  const char* method;
  const char* phase;
};

class LoadFailure : public LifecycleTest, public ::testing::WithParamInterface<LoadCase> {};

// Failures that only the deserialized objects show: the build succeeds, then the load, context
// creation or inference fails cleanly.
TEST_P(LoadFailure, FailsTheLoadContextOrInferenceCleanly) {
  ProbeOptions o;
  o.failAt = GetParam().method;
  o.failDeserialized = 1;
  if (o.failAt == "serialize") expectedViolation_ = 6;  // the round-trip check shows it
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan(o, plan).isOk());
  Status s = loadAndRun(plan, 2, 3, o.offset);
  ASSERT_FALSE(s.isOk());
  if (o.failAt == "deserializePlugin") {
    EXPECT_NE(s.message().find("deserializePlugin() failed"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("plugin Probe version 2 namespace 'kiln.test'"), std::string::npos);
    return;
  }
  expectNamesEverything(s, GetParam().phase, o.failAt);
}

INSTANTIATE_TEST_SUITE_P(
    EveryLoadMethod, LoadFailure,
    ::testing::Values(LoadCase{"deserializePlugin", "deserialize"},
                      LoadCase{"serialize", "deserialize"},  // the round-trip check
                      LoadCase{"getOutputDimensions", "deserialize"},
                      LoadCase{"getWorkspaceSize", "deserialize"},
                      LoadCase{"initialize", "deserialize"}, LoadCase{"clone", "context"},
                      LoadCase{"attachToContext", "context"}, LoadCase{"onShapeChange", "infer"},
                      LoadCase{"enqueue", "infer"}));

// Lines of the trace so far whose call is `call`.
int countCalls(const std::string& path, const std::string& call) {
  flushTrace();
  std::vector<std::string> lines;
  EXPECT_TRUE(readTraceFile(path, lines).isOk());
  int n = 0;
  for (const std::string& line : lines)
    n += line.find("\"call\":\"" + call + "\"") != std::string::npos;
  return n;
}

// The dynamic form (DESIGN.md §7): a plugin in a profile plan is configured once per profile with
// the box, and each context object hears every shape change once, before the enqueue that needs
// it. The whole trace then holds guarantees 1-9 (TearDown).
TEST_F(LifecycleTest, DynamicBatchTellsEachContextObjectItsShapes) {
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan({}, plan, true).isOk());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::vector<std::unique_ptr<IExecutionContext>> ctx(2);
  for (auto& c : ctx) ASSERT_TRUE(engine->createExecutionContext(c).isOk());
  const int before = countCalls(tracePath_, "onShapeChange");
  EXPECT_EQ(before, 0);
  // Context 0: batches 2, 3, 3, 1 (three changes); context 1: 4, 4 (one).
  const std::vector<std::vector<int64_t>> batches = {{2, 3, 3, 1}, {4, 4}};
  for (size_t c = 0; c < ctx.size(); ++c) {
    for (int64_t n : batches[c]) {
      ASSERT_TRUE(ctx[c]->setInputShape("x", makeDims({n, kC, kH, kW})).isOk());
      std::vector<float> x = randomInput();
      x.resize(static_cast<size_t>(n * kC * kH * kW), 0.5f);
      std::vector<float> y(x.size(), -1.f);
      ASSERT_TRUE(ctx[c]->setTensorAddress("x", x.data()).isOk());
      ASSERT_TRUE(ctx[c]->setTensorAddress("y", y.data()).isOk());
      const Status s = ctx[c]->enqueue(nullptr);
      ASSERT_TRUE(s.isOk()) << s.toString();
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(y[i], std::max(x[i], 0.f) + 0.75f) << "batch " << n << " element " << i;
    }
  }
  EXPECT_EQ(countCalls(tracePath_, "onShapeChange"), 4);
  // Build objects were configured (once per profile: one here) and never told shapes.
  EXPECT_GE(countCalls(tracePath_, "configurePlugin"), 1);
}

// Contexts on their own threads change shapes at once: the engine object's shape function is
// called from several setInputShape()s (kiln serializes those calls), each context object hears
// its own shapes, and the whole trace still holds guarantees 1-9.
TEST_F(LifecycleTest, ContextsOnThreadsChangeShapesConcurrently) {
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan({}, plan, true).isOk());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<IExecutionContext>> ctx(kThreads);
  for (auto& c : ctx) ASSERT_TRUE(engine->createExecutionContext(c).isOk());
  std::vector<Status> status(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) * 7919u + 1u);
      for (int run = 0; run < 12 && status[t].isOk(); ++run) {
        const int64_t n = 1 + static_cast<int64_t>(rng() % 4);
        std::vector<float> x(static_cast<size_t>(n * kC * kH * kW)), y(x.size(), -1.f);
        for (float& v : x) v = static_cast<float>(rng() % 1000) / 250.f - 2.f;
        Status s = ctx[t]->setInputShape("x", makeDims({n, kC, kH, kW}));
        if (s) s = ctx[t]->setTensorAddress("x", x.data());
        if (s) s = ctx[t]->setTensorAddress("y", y.data());
        if (s) s = ctx[t]->enqueue(nullptr);
        for (size_t i = 0; s && i < x.size(); ++i)
          if (y[i] != std::max(x[i], 0.f) + 0.75f)
            s = internalError("thread " + std::to_string(t) + " element " + std::to_string(i));
        status[t] = s;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(status[t].isOk()) << status[t].toString();
}

// A failing onShapeChange fails that enqueue, naming everything; the next enqueue tries again.
TEST_F(LifecycleTest, FailingOnShapeChangeFailsTheEnqueueEachTime) {
  ProbeOptions o;
  o.failAt = "onShapeChange";
  o.failDeserialized = 1;
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan(o, plan, true).isOk());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  ASSERT_TRUE(ctx->setInputShape("x", makeDims({3, kC, kH, kW})).isOk());
  std::vector<float> x(3 * kC * kH * kW, 1.f), y(x.size());
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
  for (int attempt = 0; attempt < 2; ++attempt)
    expectNamesEverything(ctx->enqueue(nullptr), "infer", "onShapeChange");
  EXPECT_EQ(countCalls(tracePath_, "onShapeChange"), 2);
}

// Failures in teardown calls cannot fail anything any more: they are logged, and the pairing
// still holds.
TEST_F(LifecycleTest, FailingTerminateAndDetachAreReportedNotFatal) {
  for (const char* method : {"terminate", "detachFromContext"}) {
    ProbeOptions o;
    o.failAt = method;
    o.failDeserialized = 1;
    std::vector<uint8_t> plan;
    ASSERT_TRUE(buildPlan(o, plan).isOk());
    EXPECT_TRUE(loadAndRun(plan, 2, 2, o.offset).isOk()) << method;
  }
}

TEST_F(LifecycleTest, CloneThatDropsTheNamespaceFailsTheBuild) {
  ProbeOptions o;
  o.dropNamespace = 1;
  std::vector<uint8_t> plan;
  Status s = buildPlan(o, plan);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("guarantee 7"), std::string::npos) << s.message();
}

TEST_F(LifecycleTest, BrokenRoundTripFailsTheLoad) {
  ProbeOptions o;
  o.badRoundTrip = 1;
  expectedViolation_ = 6;
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan(o, plan).isOk());
  Status s = loadAndRun(plan, 1, 1, o.offset);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("round trip"), std::string::npos) << s.message();
}

TEST_F(LifecycleTest, MissingCreatorIsRefusedWithItsIdentity) {
  std::vector<uint8_t> plan;
  ASSERT_TRUE(buildPlan({}, plan).isOk());
  ASSERT_TRUE(PluginRegistry::global().deregisterCreator("Probe", "2", kProbeNamespace).isOk());
  std::unique_ptr<IEngine> engine;
  Status s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  ASSERT_TRUE(PluginRegistry::global().registerCreator(probeCreator(), kProbeNamespace).isOk());
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("plugin Probe version 2 namespace 'kiln.test'"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("not registered"), std::string::npos) << s.message();
}

TEST_F(LifecycleTest, UnregisteredPluginInANetworkIsAnError) {
  expectTrace_ = false;  // no plugin object is ever made
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 2}));
  PluginSpec spec;
  spec.name = "NoSuchPlugin";
  ITensor* in[] = {x};
  EXPECT_EQ(net->addPlugin(in, 1, spec), nullptr);
  EXPECT_EQ(net->getLastError().code(), StatusCode::kNotFound);
  EXPECT_NE(net->getLastError().message().find("NoSuchPlugin"), std::string::npos);
  std::vector<uint8_t> plan;
  EXPECT_FALSE(createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan).isOk());
}

}  // namespace
}  // namespace kiln::testing
