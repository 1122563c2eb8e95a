// The rules of RMSNormalization (kiln/ops/rms_normalization.h), shared by the CPU reference
// (rms_normalization_cpu.cpp) and the CUDA kernels (rms_normalization_cuda.cu). The row geometry
// (X as `rows` rows of `len` contiguous elements, Scale's index within a row) is
// LayerNormalization's, used as it is; what differs is the statistic, in FP32 whatever the storage:
//   pass 1  invRms = 1 / sqrt(sum(x^2) / len + epsilon)
//   pass 2  y = x * invRms * scale, rounded once on store.
// One pass of squares suffices (no mean is subtracted, so there is no cancellation to avoid). A
// non-finite element makes its row's invRms 0 or NaN, as the definition does.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "ops/layer_normalization/layer_normalization_semantics.h"

namespace kiln::ops::rms_normalization {

using layer_normalization::RowGeometry;

// The rows of X (dims x) normalised from `axisParam` (negative counts from the end; the shape rule
// has checked it), with Scale of dims `scale`. Host code.
inline RowGeometry rowGeometry(int32_t axisParam, float epsilon, const Dims& x, const Dims& scale) {
  return layer_normalization::rowGeometry(axisParam, epsilon, x, scale, nullptr);
}

// 1 / sqrt(mean(x^2) + epsilon) from the sum of the squares of a row of len elements.
KILN_HOST_DEVICE inline float invRmsOf(float squares, int64_t len, float epsilon) {
  return 1.f / sqrtf(squares / static_cast<float>(len) + epsilon);
}

// One output value, before rounding to the storage type.
KILN_HOST_DEVICE inline float normalized(float x, float invRms, float scale) {
  return x * invRms * scale;
}

// Normalises one row: x(j) and scale(j) give FP32 values, store(j, v) writes y's element j.
template <class Load, class Scale, class Store>
KILN_HOST_DEVICE inline void normalizeRow(int64_t len, float epsilon, const Load& x,
                                          const Scale& scale, const Store& store) {
  if (len <= 0) return;
  float squares = 0.f;
  for (int64_t j = 0; j < len; ++j) {
    const float v = x(j);
    squares += v * v;
  }
  const float invRms = invRmsOf(squares, len, epsilon);
  for (int64_t j = 0; j < len; ++j) store(j, normalized(x(j), invRms, scale(j)));
}

// Row r of stored tensors, as LayerNormalization's StoredRow (there is no B: bias is ignored).
struct StoredRow {
  template <class E, class S>
  KILN_HOST_DEVICE static void normalize(const RowGeometry& g, int64_t /*r*/, const S* xr,
                                         const S* scale, const S* /*bias*/, S* yr) {
    normalizeRow(
        g.len, g.epsilon, [xr](int64_t j) { return E::toFloat(xr[j]); },
        [&](int64_t j) { return E::toFloat(scale[g.scale.at(j)]); },
        [yr](int64_t j, float v) { yr[j] = E::fromFloat(v); });
  }
};

}  // namespace kiln::ops::rms_normalization
