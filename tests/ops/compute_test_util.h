// Helpers for the compute-op tests: seeded random data, running a tactic's kernel on host
// buffers, and comparing a fast kernel with the reference under an error bound.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/kernel.h"

namespace kiln::testing {

// A generator seeded from std::random_device; the seed goes into every failure message.
class Rng {
 public:
  Rng() : seed_(std::random_device{}()), gen_(seed_) {}
  uint32_t seed() const { return seed_; }
  std::string trace() const { return "random seed " + std::to_string(seed_); }
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  bool coin() { return uniform(0, 1) == 1; }
  float real(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  // Values in [-1, 1], never all zero.
  std::vector<float> values(int64_t count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) x = real(-1.f, 1.f);
    return v;
  }

 private:
  uint32_t seed_;
  std::mt19937 gen_;
};

inline PluginTensorDesc fp32(const Dims& dims) {
  PluginTensorDesc d;
  d.dims = dims;
  return d;
}

inline int64_t count(const Dims& d) {
  int64_t c = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) c *= d.d[i];
  return c;
}

inline const Tactic* tacticNamed(std::span<const Tactic> list, std::string_view name) {
  for (const Tactic& t : list)
    if (name == t.name) return &t;
  return nullptr;
}

// 64-byte aligned scratch, pre-filled with NaN so a kernel that reads scratch or output it has
// not written shows up in the results.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : raw_(bytes + 64) {
    auto v = reinterpret_cast<uintptr_t>(raw_.data());
    data_ = reinterpret_cast<float*>((v + 63) & ~static_cast<uintptr_t>(63));
    const size_t floats = bytes / sizeof(float);
    for (size_t i = 0; i < floats; ++i) data_[i] = std::numeric_limits<float>::quiet_NaN();
  }
  float* data() { return data_; }

 private:
  std::vector<unsigned char> raw_;
  float* data_ = nullptr;
};

// Runs `kernel` on the inputs; returns the output (config.outputs[0]'s element count).
inline std::vector<float> runKernel(const Kernel& kernel, const KernelConfig& config,
                                    const std::vector<std::vector<float>>& inputs) {
  std::vector<const void*> in;
  for (const auto& v : inputs) in.push_back(v.data());
  const int64_t n = count(config.outputs[0].dims);
  Buffer out(static_cast<size_t>(n) * sizeof(float));
  Buffer workspace(kernel.workspaceSize());
  void* outs[] = {out.data()};
  Status s = kernel.run(in.data(), outs, workspace.data(), {});
  EXPECT_TRUE(s.isOk()) << s.message();
  return std::vector<float>(out.data(), out.data() + n);
}

// Creates the tactic's kernel (failing the test with the reason if it declines) and runs it.
inline std::vector<float> runTactic(const Tactic& tactic, const KernelConfig& config,
                                    const std::vector<std::vector<float>>& inputs) {
  std::string why;
  KernelPtr k = tactic.create(config, &why);
  if (!k) {
    ADD_FAILURE() << tactic.name << " declined: " << why;
    return {};
  }
  return runKernel(*k, config, inputs);
}

inline std::vector<std::vector<float>> absolute(std::vector<std::vector<float>> v) {
  for (auto& t : v)
    for (float& x : t) x = std::fabs(x);
  return v;
}

// Each element of `got` must be within relTol * magnitude[i] (+ a tiny absolute slack) of
// `want`, where magnitude is the reference run on absolute inputs (sum of |terms|): the bound
// float accumulation can need, far below what a missing or wrong term costs.
inline void expectClose(const std::vector<float>& got, const std::vector<float>& want,
                        const std::vector<float>& magnitude, double relTol,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = relTol * magnitude[i] + 1e-6;
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tol) && reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", reference " << want[i]
                    << " (tolerance " << tol << ")";
  }
}

inline void expectNear(const std::vector<float>& got, const std::vector<float>& want,
                       double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace kiln::testing
