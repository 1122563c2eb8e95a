// Helpers for the light-op tests: fresh seeds, random shapes and data (never zeros), building a
// kernel configuration and running a kernel with its workspace.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel.h"
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::test {

// A generator seeded from std::random_device; the seed goes into every failure message.
struct Rng {
  uint32_t seed = std::random_device{}();
  std::mt19937_64 gen{seed};
  std::string trace() const { return "random seed " + std::to_string(seed); }

  int64_t uniformInt(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  }
  float uniformFloat(float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(gen);
  }
  // Uniform in [lo, hi] but away from zero, so that no test passes on zeros.
  float nonZeroFloat(float lo, float hi) {
    for (;;) {
      const float v = uniformFloat(lo, hi);
      if (std::fabs(v) > 1e-3f) return v;
    }
  }
  int64_t nonZeroInt(int64_t lo, int64_t hi) {
    for (;;) {
      const int64_t v = uniformInt(lo, hi);
      if (v != 0) return v;
    }
  }
  Dims dims(int32_t rank, int64_t maxDim) {
    Dims d;
    d.nbDims = rank;
    for (int32_t i = 0; i < rank; ++i) d.d[i] = uniformInt(1, maxDim);
    return d;
  }
  std::vector<float> floats(int64_t n, float lo = -4.f, float hi = 4.f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = nonZeroFloat(lo, hi);
    return v;
  }
  // Random non-zero bytes for the byte-moving ops (any element type).
  std::vector<uint8_t> bytes(int64_t n) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<uint8_t>(uniformInt(1, 255));
    return v;
  }
};

inline PluginTensorDesc desc(const Dims& dims, DataType type = DataType::kFLOAT,
                             TensorFormat format = TensorFormat::kLINEAR) {
  PluginTensorDesc d;
  d.dims = dims;
  d.type = type;
  d.format = format;
  return d;
}

inline KernelConfig config(LayerType type, LayerParams params, std::vector<PluginTensorDesc> inputs,
                           std::vector<PluginTensorDesc> outputs) {
  KernelConfig c;
  c.type = type;
  c.params = params;
  c.inputs = std::move(inputs);
  c.outputs = std::move(outputs);
  c.constantInputs.assign(c.inputs.size(), nullptr);
  return c;
}

// Output descriptions as shape inference gives them (linear); fails the test if it refuses.
template <class P, class F>
std::vector<PluginTensorDesc> inferredOutputs(F infer, const P& p,
                                              const std::vector<PluginTensorDesc>& inputs) {
  std::vector<TensorShape> in, out;
  for (const auto& d : inputs) in.push_back({d.dims, d.type});
  const Status st = infer(p, in, out);
  EXPECT_TRUE(st.isOk()) << st.toString();
  std::vector<PluginTensorDesc> r;
  for (const auto& s : out) r.push_back(desc(s.dims, s.type));
  return r;
}

inline KernelPtr create(const Tactic& t, const KernelConfig& c) {
  std::string why;
  auto k = t.create(c, &why);
  EXPECT_TRUE(k) << t.name << " declined: " << why;
  return k;
}

// The reason a tactic declines, or "" (and a test failure) when it accepts.
inline std::string declines(const Tactic& t, const KernelConfig& c) {
  std::string why;
  auto k = t.create(c, &why);
  EXPECT_FALSE(k) << t.name << " accepted a configuration it should refuse";
  EXPECT_FALSE(why.empty()) << t.name << " declined without a reason";
  return why;
}

inline const Tactic& tacticNamed(std::span<const Tactic> list, const char* name) {
  for (const auto& t : list)
    if (std::string(t.name) == name) return t;
  ADD_FAILURE() << "no tactic " << name;
  return list.back();
}

// Runs a kernel with a 64-byte aligned workspace of the size it asks for.
inline Status runKernel(const Kernel& k, std::vector<const void*> in, std::vector<void*> out) {
  const size_t ws = k.workspaceSize();
  std::unique_ptr<void, void (*)(void*)> buf(
      ws ? std::aligned_alloc(64, (ws + 63) / 64 * 64) : nullptr, &std::free);
  return k.run(in.data(), out.data(), buf.get(), {});
}

// Float equality that treats two NaNs as equal.
inline bool sameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Row-major strides of dims, in elements.
inline std::vector<int64_t> stridesOf(const Dims& d) {
  std::vector<int64_t> s(static_cast<size_t>(d.nbDims));
  int64_t v = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    s[static_cast<size_t>(i)] = v;
    v *= d.d[i];
  }
  return s;
}

// Coordinates of linear index `index` in row-major dims (division, not an odometer, so that it
// does not share a bug with the kernels).
inline std::vector<int64_t> unravel(int64_t index, const Dims& d) {
  std::vector<int64_t> c(static_cast<size_t>(d.nbDims));
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    c[static_cast<size_t>(i)] = index % d.d[i];
    index /= d.d[i];
  }
  return c;
}

// The element type of T in the kernels' terms (uint8_t stands for bool).
template <class T>
DataType typeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFLOAT;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kINT32;
  if constexpr (std::is_same_v<T, int64_t>) return DataType::kINT64;
  return DataType::kBOOL;  // uint8_t
}

// Runs the reference activation on a 1-D tensor (123 where the kernel wrote nothing).
template <class T>
std::vector<T> runActivation(ActivationParams p, const std::vector<T>& x) {
  const Dims d = makeDims({static_cast<int64_t>(x.size())});
  auto cfg = test::config(LayerType::kACTIVATION, p, {test::desc(d, typeOf<T>())},
                          {test::desc(d, typeOf<T>())});
  auto k = test::create(test::tacticNamed(ops::Activation::cpuTactics(), "reference"), cfg);
  std::vector<T> y(x.size(), T{123});
  if (k) {
    EXPECT_TRUE(test::runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

// fp32 convenience that also takes a braced list.
inline std::vector<float> runActivation(ActivationParams p, const std::vector<float>& x) {
  return runActivation<float>(p, x);
}

inline ActivationParams act(ActivationType t, float alpha = 0.f, float beta = 0.f) {
  ActivationParams p;
  p.type = t;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

}  // namespace kiln::test
