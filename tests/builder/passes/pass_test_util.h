// Shared by the pass tests: small networks through the public API, one pass at a time on their
// graph, and whole builds with and without the passes, run on the same random data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "builder/build_plan.h"
#include "builder/network_impl.h"
#include "builder/passes/pass.h"
#include "builder/passes/pipeline.h"
#include "core/plan.h"
#include "kiln/float16.h"
#include "kiln/kiln.h"
#include "log_capture_util.h"
#include "random_test_util.h"

namespace kiln::testing {

using passes::Pass;
using passes::PassContext;
using passes::PassFunction;

inline Weights weights(const std::vector<float>& v) {
  return Weights{DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())};
}

// A constant layer holding `v` in `dims`.
inline ITensor* constant(INetworkDefinition& net, const Dims& dims, const std::vector<float>& v) {
  ILayer* c = net.addConstant(dims, weights(v));
  EXPECT_NE(c, nullptr);
  return c ? c->getOutput(0) : nullptr;
}

// A one-element constant v, the scalar operand exporters write.
inline ITensor* scalar(INetworkDefinition& net, float v) {
  return constant(net, makeDims({1}), {v});
}

// a op b through an Elementwise layer.
inline ITensor* binary(INetworkDefinition& net, ITensor& a, ITensor& b, ElementwiseOp op) {
  return net.addElementwise(a, b, op)->getOutput(0);
}

// x through an Activation layer of type t (alpha and beta as that type reads them).
inline ITensor* activation(INetworkDefinition& net, ITensor& x, ActivationType t, float alpha = 0.f,
                           float beta = 0.f) {
  ActivationParams p;
  p.type = t;
  p.alpha = alpha;
  p.beta = beta;
  return net.addActivation(x, p)->getOutput(0);
}

inline ConvolutionParams conv3x3(int32_t outChannels) {
  ConvolutionParams p;
  p.outChannels = outChannels;
  p.kernelH = p.kernelW = 3;
  p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
  return p;
}

// A copy of the network's graph, for running passes on.
inline Graph graphOf(const INetworkDefinition& net) { return asNetworkImpl(net)->graph(); }

// Runs one pass over `graph`, failing the test if the pass fails.
inline PassContext runPass(PassFunction pass, Graph& graph, passes::PassLimits limits = {}) {
  PassContext context(limits);
  Status s = pass(graph, context);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return context;
}

inline int countNodes(const Graph& g, LayerType type) {
  int n = 0;
  for (const GraphNode& node : g.nodes) n += node.type == type;
  return n;
}

inline const GraphNode* findNode(const Graph& g, const std::string& name) {
  for (const GraphNode& node : g.nodes)
    if (node.name == name) return &node;
  return nullptr;
}

inline int32_t findTensor(const Graph& g, const std::string& name) {
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].name == name) return static_cast<int32_t>(t);
  return -1;
}

// Whether some line of `lines` contains `text`.
inline bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}
inline std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

inline BuilderConfig quickConfig() {
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  config.allowHalf = false;
  return config;
}

// Plan bytes for `net` built with `passes` (the default pipeline, or none: the network as it is).
inline Status build(const INetworkDefinition& net, std::span<const Pass> passes,
                    std::vector<uint8_t>& bytes, BuilderConfig config = quickConfig()) {
  return buildPlanFromGraph(graphOf(net), config, passes, bytes);
}

inline plan::Plan readPlan(const std::vector<uint8_t>& bytes) {
  plan::Plan p;
  Status s = plan::readPlan(bytes.data(), bytes.size(), p);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return p;
}

inline std::vector<LayerType> stepTypes(const plan::Plan& p) {
  std::vector<LayerType> types;
  for (const plan::Step& s : p.steps) types.push_back(s.type);
  return types;
}

using Buffers = std::map<std::string, std::vector<uint8_t>>;

// Runs a plan on the CPU: inputs by name, every output by name.
inline Status runPlan(const std::vector<uint8_t>& bytes, const Buffers& inputs, Buffers& outputs) {
  std::unique_ptr<IEngine> engine;
  KILN_RETURN_IF_ERROR(createRuntime()->deserializeEngine(bytes.data(), bytes.size(), engine));
  std::unique_ptr<IExecutionContext> ctx;
  KILN_RETURN_IF_ERROR(engine->createExecutionContext(ctx));
  Buffers buffers;
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    const std::string name = engine->getIOTensorName(i);
    const PluginTensorDesc d = engine->getTensorDesc(name.c_str());
    std::vector<uint8_t>& buf = buffers[name];
    buf.resize(size_t(volume(d.dims)) * dataTypeSize(d.type));
    if (engine->getTensorIOMode(name.c_str()) == TensorIOMode::kINPUT) {
      auto it = inputs.find(name);
      if (it == inputs.end() || it->second.size() != buf.size())
        return invalidArgument("no (or wrongly sized) test data for input " + name);
      buf = it->second;
    }
    buf.reserve(buf.size() + 8);  // a valid address also for empty tensors
    KILN_RETURN_IF_ERROR(ctx->setTensorAddress(name.c_str(), buf.data()));
  }
  KILN_RETURN_IF_ERROR(ctx->enqueue(nullptr));
  outputs.clear();
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    const std::string name = engine->getIOTensorName(i);
    if (engine->getTensorIOMode(name.c_str()) == TensorIOMode::kOUTPUT)
      outputs[name] = buffers[name];
  }
  return Status::ok();
}

// Random values for every network input: floats in [-1, 1] (never 0), integers in [0, 3).
inline Buffers randomInputs(const INetworkDefinition& net, Rng& rng) {
  Buffers in;
  for (int32_t i = 0; i < net.getNbInputs(); ++i) {
    const ITensor* t = net.getInput(i);
    const int64_t n = volume(t->getDimensions());
    std::vector<uint8_t>& b = in[t->getName()];
    b.resize(size_t(n) * dataTypeSize(t->getType()));
    std::vector<float> f = rng.values(n);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t small = std::llround(std::fabs(f[size_t(k)]) * 2.f);
      switch (t->getType()) {
        case DataType::kFLOAT:
          std::memcpy(b.data() + 4 * k, &f[size_t(k)], 4);
          break;
        case DataType::kHALF: {
          const uint16_t h = floatToHalf(f[size_t(k)]);
          std::memcpy(b.data() + 2 * k, &h, 2);
          break;
        }
        case DataType::kINT32: {
          const int32_t v = int32_t(small);
          std::memcpy(b.data() + 4 * k, &v, 4);
          break;
        }
        case DataType::kINT64:
          std::memcpy(b.data() + 8 * k, &small, 8);
          break;
        default:
          b[size_t(k)] = uint8_t(small & 1);
          break;
      }
    }
  }
  return in;
}

// Builds `net` with the default pipeline and with no passes, runs both on the same random data
// and expects the same outputs: FP32 to within rounding (folds reassociate), others exactly.
inline void expectSameResults(const INetworkDefinition& net, float tolerance = 1e-4f) {
  Rng rng;
  std::vector<uint8_t> folded, plain;
  Status s = build(net, passes::defaultPipeline(), folded);
  ASSERT_TRUE(s.isOk()) << s.toString();
  s = build(net, {}, plain);
  ASSERT_TRUE(s.isOk()) << s.toString();
  const Buffers in = randomInputs(net, rng);
  Buffers a, b;
  s = runPlan(folded, in, a);
  ASSERT_TRUE(s.isOk()) << s.toString();
  s = runPlan(plain, in, b);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(a.size(), b.size());
  for (int32_t o = 0; o < net.getNbOutputs(); ++o) {
    const ITensor* t = net.getOutput(o);
    const std::vector<uint8_t>&x = a[t->getName()], &y = b[t->getName()];
    ASSERT_EQ(x.size(), y.size()) << t->getName();
    if (t->getType() != DataType::kFLOAT) {
      EXPECT_EQ(x, y) << t->getName() << ", seed " << rng.seed;
      continue;
    }
    for (size_t k = 0; k < x.size() / 4; ++k) {
      float u, v;
      std::memcpy(&u, x.data() + 4 * k, 4);
      std::memcpy(&v, y.data() + 4 * k, 4);
      if (u == v || (std::isnan(u) && std::isnan(v))) continue;  // infinities and NaN included
      ASSERT_NEAR(u, v, tolerance * std::max(1.f, std::fabs(v)))
          << "output '" << t->getName() << "' element " << k << ", seed " << rng.seed;
    }
  }
}

}  // namespace kiln::testing
