// Every op family at run-time shapes (issue 10): one layer per case, its inputs' batch N (and,
// where the case has one, a sequence S) dynamic, built once with an optimization profile for a
// target and run at the box's corners and at random shapes inside it; each run is compared with
// the same layer built statically for that shape on the CPU (the reference). Shared by the CPU
// test (tests/runtime, CI) and the CUDA one (tests/backends/cuda, label gpu).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::testing::dynamic_ops {

// In an input's dims: the dynamic batch and sequence.
constexpr int64_t kN = -1, kS = -2;
constexpr int64_t kMinN = 1, kOptN = 3, kMaxN = 5;
constexpr int64_t kMinS = 2, kOptS = 4, kMaxS = 7;

struct Input {
  std::vector<int64_t> dims;  // kN / kS where dynamic
  DataType type = DataType::kFLOAT;
  bool constant = false;  // a weight: a constant layer of these (fixed) dims
  int64_t intHi = 3;      // integer inputs: uniform in [0, intHi)
};

struct Case {
  std::string name;
  std::vector<Input> inputs;
  // Adds the layer on `in` (one tensor per input, constants included); nullptr on refusal.
  std::function<ILayer*(INetworkDefinition&, const std::vector<ITensor*>& in)> layer;
};

inline Dims dimsAt(const std::vector<int64_t>& d, int64_t n, int64_t s) {
  Dims out;
  out.nbDims = static_cast<int32_t>(d.size());
  for (size_t k = 0; k < d.size(); ++k) out.d[k] = d[k] == kN ? n : d[k] == kS ? s : d[k];
  return out;
}

// Values per input, fixed for a case and a shape: constants from `seed` alone, so that every
// shape sees the same weights.
struct Data {
  std::vector<std::vector<uint8_t>> bytes;
};

inline std::vector<uint8_t> randomBytes(const Input& in, const Dims& dims, std::mt19937& rng) {
  const int64_t n = volume(dims);
  std::vector<uint8_t> b(size_t(n) * dataTypeSize(in.type));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::uniform_int_distribution<int64_t> i(0, std::max<int64_t>(in.intHi - 1, 0));
  for (int64_t k = 0; k < n; ++k) {
    switch (in.type) {
      case DataType::kFLOAT: {
        const float v = u(rng);
        std::memcpy(b.data() + 4 * k, &v, 4);
        break;
      }
      case DataType::kINT32: {
        const int32_t v = static_cast<int32_t>(i(rng));
        std::memcpy(b.data() + 4 * k, &v, 4);
        break;
      }
      case DataType::kINT64: {
        const int64_t v = i(rng);
        std::memcpy(b.data() + 8 * k, &v, 8);
        break;
      }
      case DataType::kBOOL:
        b[size_t(k)] = static_cast<uint8_t>(i(rng) & 1);
        break;
      default:
        ADD_FAILURE() << "input type not handled by the harness";
    }
  }
  return b;
}

// The case's network: `dynamic` gives its inputs -1 at N and S (named "N" and "S"), else they
// are at (n, s). The one output is named "out".
inline std::unique_ptr<INetworkDefinition> makeNetwork(const Case& c, bool dynamic, int64_t n,
                                                       int64_t s, const Data& constants) {
  auto net = createNetwork();
  std::vector<ITensor*> in;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Input& i = c.inputs[k];
    if (i.constant) {
      const Dims d = dimsAt(i.dims, 0, 0);
      ILayer* l =
          net->addConstant(d, {i.type, constants.bytes[k].data(), static_cast<int64_t>(volume(d))});
      in.push_back(l ? l->getOutput(0) : nullptr);
      continue;
    }
    const Dims d = dynamic ? dimsAt(i.dims, -1, -1) : dimsAt(i.dims, n, s);
    ITensor* t = net->addInput(("in" + std::to_string(k)).c_str(), i.type, d);
    for (size_t a = 0; dynamic && t && a < i.dims.size(); ++a) {
      if (i.dims[a] == kN) EXPECT_TRUE(t->setDimensionName(int32_t(a), "N"));
      if (i.dims[a] == kS) EXPECT_TRUE(t->setDimensionName(int32_t(a), "S"));
    }
    in.push_back(t);
  }
  for (ITensor* t : in)
    if (!t) return net;  // getLastError() says why
  ILayer* layer = c.layer(*net, in);
  if (layer) {
    layer->getOutput(0)->setName("out");
    EXPECT_TRUE(net->markOutput(*layer->getOutput(0)).isOk());
  }
  return net;
}

inline OptimizationProfile profileOf(const Case& c) {
  OptimizationProfile p;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    if (c.inputs[k].constant) continue;
    const std::string name = "in" + std::to_string(k);
    p.setDimensions(name.c_str(), OptProfileSelector::kMIN, dimsAt(c.inputs[k].dims, kMinN, kMinS));
    p.setDimensions(name.c_str(), OptProfileSelector::kOPT, dimsAt(c.inputs[k].dims, kOptN, kOptS));
    p.setDimensions(name.c_str(), OptProfileSelector::kMAX, dimsAt(c.inputs[k].dims, kMaxN, kMaxS));
  }
  return p;
}

inline Status buildEngine(const INetworkDefinition& net, const std::string& target,
                          const std::vector<OptimizationProfile>& profiles,
                          std::unique_ptr<IEngine>& engine) {
  KILN_RETURN_IF_ERROR(net.getLastError());
  BuilderConfig config;
  config.target = target;
  config.allowHalf = false;  // FP32 on every target: compared with the CPU at a tight bound
  config.profiles = profiles;
  config.warmupRuns = 0;
  config.timingRuns = 1;
  std::vector<uint8_t> plan;
  KILN_RETURN_IF_ERROR(createBuilder()->buildSerializedNetwork(net, config, plan));
  return createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
}

// Runs `ctx` of `engine` (input shapes already set when dynamic) on `inputs` (host bytes, the
// case's non-constant inputs in order); the output as floats (its dims in `dims`).
inline Status runOnce(IEngine& engine, IExecutionContext& ctx, const Case& c,
                      const std::vector<std::vector<uint8_t>>& inputs, std::vector<float>& out,
                      Dims& dims) {
  const IDevice& device = engine.getDevice();
  std::vector<std::unique_ptr<IDeviceBuffer>> buffers;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    if (c.inputs[k].constant) continue;
    const std::string name = "in" + std::to_string(k);
    std::unique_ptr<IDeviceBuffer> b;
    KILN_RETURN_IF_ERROR(device.allocate(std::max<size_t>(inputs[k].size(), 1), "input", b));
    KILN_RETURN_IF_ERROR(device.copyFromHost(b->data(), inputs[k].data(), inputs[k].size()));
    KILN_RETURN_IF_ERROR(ctx.setTensorAddress(name.c_str(), b->data()));
    buffers.push_back(std::move(b));
  }
  dims = ctx.getTensorShape("out");
  const PluginTensorDesc desc = engine.getTensorDesc("out");
  if (volume(dims) < 0) return internalError("the output's shape is unknown");
  const size_t bytes = size_t(volume(dims)) * dataTypeSize(desc.type);
  std::unique_ptr<IDeviceBuffer> o;
  KILN_RETURN_IF_ERROR(device.allocate(std::max<size_t>(bytes, 1), "output", o));
  std::unique_ptr<IDeviceStream> stream;
  KILN_RETURN_IF_ERROR(device.createStream(stream));
  KILN_RETURN_IF_ERROR(device.fill(o->data(), 0xFF, bytes, stream->get()));  // NaN poison
  KILN_RETURN_IF_ERROR(ctx.setTensorAddress("out", o->data()));
  KILN_RETURN_IF_ERROR(ctx.enqueue(stream->get()));
  KILN_RETURN_IF_ERROR(stream->synchronize());
  std::vector<uint8_t> host(bytes);
  KILN_RETURN_IF_ERROR(device.copyToHost(host.data(), o->data(), bytes));
  out.resize(size_t(volume(dims)));
  for (size_t k = 0; k < out.size(); ++k) {
    switch (desc.type) {
      case DataType::kFLOAT:
        std::memcpy(&out[k], host.data() + 4 * k, 4);
        break;
      case DataType::kINT32: {
        int32_t v;
        std::memcpy(&v, host.data() + 4 * k, 4);
        out[k] = float(v);
        break;
      }
      case DataType::kINT64: {
        int64_t v;
        std::memcpy(&v, host.data() + 8 * k, 8);
        out[k] = float(v);
        break;
      }
      case DataType::kBOOL:
        out[k] = host[k];
        break;
      default:
        return unsupported("output type not handled by the harness");
    }
  }
  return Status::ok();
}

// The case's constant inputs, random; empty bytes for the others (fed per shape).
inline Data randomConstants(const Case& c, std::mt19937& rng) {
  Data constants;
  for (const Input& in : c.inputs)
    constants.bytes.push_back(in.constant ? randomBytes(in, dimsAt(in.dims, 0, 0), rng)
                                          : std::vector<uint8_t>());
  return constants;
}

// Builds `c` once for `target` with the profile and checks it at the corners and at `randomShapes`
// random (N, S) inside, against static CPU plans of each shape. |got - want| <= tol * (1 + |want|).
inline void checkCase(const Case& c, const std::string& target, int randomShapes, float tol) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("case " + c.name + " on " + target + ", seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Data constants = randomConstants(c, rng);
  auto dynamicNet = makeNetwork(c, true, 0, 0, constants);
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(*dynamicNet, target, {profileOf(c)}, engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());

  std::vector<std::pair<int64_t, int64_t>> shapes = {
      {kMinN, kMinS}, {kMaxN, kMaxS}, {kOptN, kOptS}};
  std::uniform_int_distribution<int64_t> pickN(kMinN, kMaxN), pickS(kMinS, kMaxS);
  for (int k = 0; k < randomShapes; ++k) shapes.push_back({pickN(rng), pickS(rng)});
  for (const auto& [n, sq] : shapes) {
    SCOPED_TRACE("N=" + std::to_string(n) + " S=" + std::to_string(sq));
    std::vector<std::vector<uint8_t>> inputs = constants.bytes;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      if (c.inputs[k].constant) continue;
      inputs[k] = randomBytes(c.inputs[k], dimsAt(c.inputs[k].dims, n, sq), rng);
      const std::string name = "in" + std::to_string(k);
      s = ctx->setInputShape(name.c_str(), dimsAt(c.inputs[k].dims, n, sq));
      ASSERT_TRUE(s.isOk()) << s.toString();
    }
    std::vector<float> got, want;
    Dims gotDims, wantDims;
    s = runOnce(*engine, *ctx, c, inputs, got, gotDims);
    ASSERT_TRUE(s.isOk()) << s.toString();

    auto staticNet = makeNetwork(c, false, n, sq, constants);
    std::unique_ptr<IEngine> reference;
    s = buildEngine(*staticNet, "cpu", {}, reference);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::unique_ptr<IExecutionContext> refCtx;
    ASSERT_TRUE(reference->createExecutionContext(refCtx).isOk());
    s = runOnce(*reference, *refCtx, c, inputs, want, wantDims);
    ASSERT_TRUE(s.isOk()) << s.toString();

    ASSERT_EQ(gotDims, wantDims);
    ASSERT_EQ(got.size(), want.size());
    int bad = 0;
    for (size_t k = 0; k < got.size() && bad < 5; ++k) {
      const bool same = (std::isnan(want[k]) && std::isnan(got[k])) ||
                        std::fabs(got[k] - want[k]) <= tol * (1.f + std::fabs(want[k]));
      if (!same) {
        ++bad;
        ADD_FAILURE() << "element " << k << ": " << got[k] << ", reference " << want[k];
      }
    }
  }
}

}  // namespace kiln::testing::dynamic_ops
