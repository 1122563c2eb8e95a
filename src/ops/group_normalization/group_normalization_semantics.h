// The rules of GroupNormalization (kiln/ops/group_normalization.h), shared by the CPU reference
// (group_normalization_cpu.cpp) and the CUDA kernels (group_normalization_cuda.cu). X [N, C, S...]
// is seen as N * G rows (one per sample and group) of len = C / G * S contiguous elements, S the
// product of the spatial dims; a row is normalised with LayerNormalization's FP32 two-pass
// statistics (layer_normalization_semantics.h: shifted mean, then the squared deviations), and
// element j of row r takes the Scale and B of its channel, channelOf(r, j).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/types.h"
#include "ops/layer_normalization/layer_normalization_semantics.h"

namespace kiln::ops::group_normalization {

struct GroupGeometry {
  int64_t rows = 0, len = 0;
  int64_t groups = 1, channelsPerGroup = 0, spatial = 0;
  float epsilon = 0.f;

  // The channel of element j (0 <= j < len) of row r.
  KILN_HOST_DEVICE int64_t channelOf(int64_t r, int64_t j) const {
    return (r % groups) * channelsPerGroup + j / spatial;
  }
};

// The rows of X (dims x, rank >= 2, C a multiple of numGroups: the shape rule has checked both).
// Host code.
inline GroupGeometry groupGeometry(int32_t numGroups, float epsilon, const Dims& x) {
  GroupGeometry g;
  g.groups = numGroups;
  g.channelsPerGroup = x.d[1] / numGroups;
  g.spatial = 1;
  for (int32_t i = 2; i < x.nbDims; ++i) g.spatial *= x.d[i];
  g.len = g.channelsPerGroup * g.spatial;
  g.rows = g.len == 0 ? 0 : x.d[0] * numGroups;
  g.epsilon = epsilon;
  return g;
}

// Normalises row r: x(j) gives element j's FP32 value, scale(c) and bias(c) channel c's,
// store(j, v) writes y's element j.
template <class Load, class Scale, class Bias, class Store>
KILN_HOST_DEVICE inline void normalizeRow(const GroupGeometry& g, int64_t r, const Load& x,
                                          const Scale& scale, const Bias& bias,
                                          const Store& store) {
  if (g.len <= 0) return;
  float mean, invStdDev;
  layer_normalization::rowStatistics(g.len, g.epsilon, x, mean, invStdDev);
  for (int64_t j = 0; j < g.len; ++j) {
    const int64_t c = g.channelOf(r, j);
    store(j, layer_normalization::normalized(x(j), mean, invStdDev, scale(c), bias(c)));
  }
}

// Row r of stored tensors, as LayerNormalization's StoredRow: Scale and B indexed by channel.
struct StoredRow {
  template <class E, class S>
  KILN_HOST_DEVICE static void normalize(const GroupGeometry& g, int64_t r, const S* xr,
                                         const S* scale, const S* bias, S* yr) {
    normalizeRow(
        g, r, [xr](int64_t j) { return E::toFloat(xr[j]); },
        [scale](int64_t c) { return E::toFloat(scale[c]); },
        [bias](int64_t c) { return E::toFloat(bias[c]); },
        [yr](int64_t j, float v) { yr[j] = E::fromFloat(v); });
  }
};

}  // namespace kiln::ops::group_normalization
