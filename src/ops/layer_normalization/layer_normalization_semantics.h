// The rules of LayerNormalization (kiln/ops/layer_normalization.h), shared by the CPU reference
// (layer_normalization_cpu.cpp) and the CUDA kernels (layer_normalization_cuda.cu), so that the
// two backends cannot drift apart. X is seen as `rows` rows of `len` contiguous elements (the dims
// from the axis on); one row is normalised by normalizeRow, in FP32 whatever the storage type:
//   pass 1  mean = x0 + sum(x - x0) / len, x0 the row's first element: for large activations
//           with a small spread (values ~1e4, deviations ~1) the shifted terms are small and
//           exact, where a plain FP32 sum of the values themselves would lose the deviations;
//   pass 2  var = sum((x - mean)^2) / len (the biased variance, no cancellation, never < 0);
//   pass 3  y = (x - mean) * (1 / sqrt(var + epsilon)) * scale + bias, rounded once on store.
// A non-finite element makes its whole row NaN (as in ONNX's reference: mean and var go NaN).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "kiln/types.h"

namespace kiln::ops::layer_normalization {

// Where element j of a row (0 <= j < len) reads Scale or B: the row's dims, merged where
// possible, with the parameter's strides (0 along the dims it broadcasts over). A parameter of
// the row's full shape is one dim of stride 1; a single value is one dim of stride 0.
struct ParamIndex {
  int32_t rank = 0;
  int64_t dims[Dims::kMaxDims] = {};
  int64_t strides[Dims::kMaxDims] = {};

  KILN_HOST_DEVICE int64_t at(int64_t j) const {
    // One merged dim (a parameter of the row's shape, or one value) is the common case: skip the
    // 64-bit divisions, which dominate a GPU kernel's per-element cost (j < dims[0] there).
    if (rank == 1) return j * strides[0];
    int64_t offset = 0;
    for (int32_t i = rank - 1; i >= 0; --i) {
      offset += (j % dims[i]) * strides[i];
      j /= dims[i];
    }
    return offset;
  }
};

// The index of parameter `p` for rows over x's dims [axis, rank). The shape rule has checked that
// p broadcasts unidirectionally to x.d[axis..] (its extra leading dims are 1). Host code: each
// backend builds it when it makes the kernel.
inline ParamIndex paramIndex(const Dims& x, int32_t axis, const Dims& p) {
  ParamIndex ix;
  int64_t stride = 1;  // p's row-major stride at the current dim, from the last
  int64_t dims[Dims::kMaxDims] = {}, strides[Dims::kMaxDims] = {};
  int32_t n = 0;
  for (int32_t i = x.nbDims - 1; i >= axis; --i, ++n) {
    const int32_t pi = p.nbDims - (x.nbDims - i);  // the aligned dim of p, or < 0
    const int64_t extent = pi >= 0 ? p.d[pi] : 1;
    dims[n] = x.d[i];
    strides[n] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  // Merge neighbours (last dim first in dims[]) where the outer dim continues the inner one: both
  // broadcast, or the outer stride is the inner stride times the inner extent.
  for (int32_t k = 0; k < n; ++k) {
    if (ix.rank > 0) {
      const int32_t last = ix.rank - 1;
      const int64_t d = ix.dims[last], s = ix.strides[last];
      if ((s == 0 && strides[k] == 0) || (s != 0 && strides[k] == s * d) || dims[k] == 1) {
        ix.dims[last] = d * dims[k];
        continue;
      }
    }
    ix.dims[ix.rank] = dims[k];
    ix.strides[ix.rank] = strides[k];
    ++ix.rank;
  }
  // at() walks from the last dim: store outermost first.
  for (int32_t a = 0, b = ix.rank - 1; a < b; ++a, --b) {
    const int64_t d = ix.dims[a], s = ix.strides[a];
    ix.dims[a] = ix.dims[b];
    ix.strides[a] = ix.strides[b];
    ix.dims[b] = d;
    ix.strides[b] = s;
  }
  return ix;
}

// How X is cut into rows, and where each row reads Scale and B.
struct RowGeometry {
  int64_t rows = 0, len = 0;
  float epsilon = 0.f;
  ParamIndex scale, bias;
  bool hasBias = false;
};

// The rows of X (dims x) normalised from `axisParam` (negative counts from the end; the shape rule
// has checked it) with Scale of dims `scale` and B of dims `*bias` (nullptr without B). Host code.
inline RowGeometry rowGeometry(int32_t axisParam, float epsilon, const Dims& x, const Dims& scale,
                               const Dims* bias) {
  const int32_t axis = axisParam < 0 ? axisParam + x.nbDims : axisParam;
  RowGeometry g;
  g.len = 1;
  for (int32_t i = axis; i < x.nbDims; ++i) g.len *= x.d[i];
  int64_t count = 1;
  for (int32_t i = 0; i < x.nbDims; ++i) count *= x.d[i];
  g.rows = g.len == 0 ? 0 : count / g.len;
  g.epsilon = epsilon;
  g.scale = paramIndex(x, axis, scale);
  g.hasBias = bias != nullptr;
  if (bias) g.bias = paramIndex(x, axis, *bias);
  return g;
}

// The mean from the row's first element x0 and the sum of x - x0 over its len elements.
KILN_HOST_DEVICE inline float meanOf(float x0, float shiftedSum, int64_t len) {
  return x0 + shiftedSum / static_cast<float>(len);
}

// 1 / sqrt(var + epsilon) from the sum of the squared deviations from the mean.
KILN_HOST_DEVICE inline float invStdDevOf(float squares, int64_t len, float epsilon) {
  return 1.f / sqrtf(squares / static_cast<float>(len) + epsilon);
}

// The first two passes over one row of len >= 1 elements, x(j) the FP32 value of element j:
// the mean and 1 / sqrt(var + epsilon). (A kernel that splits a row over threads sums the same
// terms and finishes with meanOf and invStdDevOf.)
template <class Load>
KILN_HOST_DEVICE inline void rowStatistics(int64_t len, float epsilon, const Load& x, float& mean,
                                           float& invStdDev) {
  const float x0 = x(0);
  float shifted = 0.f;
  for (int64_t j = 0; j < len; ++j) shifted += x(j) - x0;
  mean = meanOf(x0, shifted, len);
  float squares = 0.f;
  for (int64_t j = 0; j < len; ++j) {
    const float d = x(j) - mean;
    squares += d * d;
  }
  invStdDev = invStdDevOf(squares, len, epsilon);
}

// One output value, before rounding to the storage type.
KILN_HOST_DEVICE inline float normalized(float x, float mean, float invStdDev, float scale,
                                         float bias) {
  return (x - mean) * invStdDev * scale + bias;
}

// Normalises one row: x(j), scale(j), bias(j) give FP32 values (bias 0 when there is no B),
// store(j, v) writes y's element j.
template <class Load, class Scale, class Bias, class Store>
KILN_HOST_DEVICE inline void normalizeRow(int64_t len, float epsilon, const Load& x,
                                          const Scale& scale, const Bias& bias,
                                          const Store& store) {
  if (len <= 0) return;
  float mean, invStdDev;
  rowStatistics(len, epsilon, x, mean, invStdDev);
  for (int64_t j = 0; j < len; ++j) store(j, normalized(x(j), mean, invStdDev, scale(j), bias(j)));
}

// Row r of stored tensors (row_normalization_cpu.h and _cuda.cuh run it for each row): xr and yr
// the row's first elements of X and Y, scale and bias the whole parameters (bias nullptr without
// B), E::toFloat and E::fromFloat the backend's conversions of the storage type S. One place for
// the loads, so that the CPU reference and the CUDA reference kernel index Scale and B alike.
struct StoredRow {
  template <class E, class S>
  KILN_HOST_DEVICE static void normalize(const RowGeometry& g, int64_t /*r*/, const S* xr,
                                         const S* scale, const S* bias, S* yr) {
    normalizeRow(
        g.len, g.epsilon, [xr](int64_t j) { return E::toFloat(xr[j]); },
        [&](int64_t j) { return E::toFloat(scale[g.scale.at(j)]); },
        [&](int64_t j) { return bias ? E::toFloat(bias[g.bias.at(j)]) : 0.f; },
        [yr](int64_t j, float v) { yr[j] = E::fromFloat(v); });
  }
};

}  // namespace kiln::ops::layer_normalization
