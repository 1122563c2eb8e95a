// The tests' random numbers: a generator seeded from std::random_device, so that every run draws
// fresh data; the seed goes into every failure message (trace()). Shared by the op, backend,
// builder-pass and ONNX tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/types.h"

namespace kiln::testing {

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
  bool coin() { return uniformInt(0, 1) == 1; }
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
  // n values in [lo, hi], none within 1e-3 of zero.
  std::vector<float> floats(int64_t n, float lo = -4.f, float hi = 4.f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = nonZeroFloat(lo, hi);
    return v;
  }
  // n values in [lo, hi), none exactly zero.
  std::vector<float> values(int64_t n, float lo = -1.f, float hi = 1.f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) {
      do x = d(gen);
      while (x == 0.f);
    }
    return v;
  }
  // Random non-zero bytes for the byte-moving ops (any element type).
  std::vector<uint8_t> bytes(int64_t n) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<uint8_t>(uniformInt(1, 255));
    return v;
  }
};

}  // namespace kiln::testing
