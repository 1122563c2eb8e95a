// The rules of ScatterND (kiln/ops/scatter_nd.h) that the CPU reference (scatter_nd_cpu.cpp) and
// the CUDA kernel (scatter_nd_cuda.cu) share: where an index tuple's slice starts, whether its
// indices are in range, and how an update combines with the element it lands on.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/scatter_nd.h"
#include "kiln/types.h"

namespace kiln::ops::scatter_nd {

struct Geometry {
  int32_t k = 0;                      // the length of an index tuple
  int64_t dims[Dims::kMaxDims] = {};  // Data's first k dims
  int64_t sliceSize = 1;              // elements of Data.shape[k:]
  int64_t tuples = 0;                 // index tuples (Indices' elements / k)
  int64_t count = 0;                  // Data's elements
  ScatterReduction reduction = ScatterReduction::kNONE;
};

// The geometry of Data's dims `data` and Indices' dims `indices` (host code; the shape rule has
// checked them).
inline Geometry geometryOf(const Dims& data, const Dims& indices, ScatterReduction reduction) {
  Geometry g;
  g.k = static_cast<int32_t>(indices.d[indices.nbDims - 1]);
  g.count = 1;
  for (int32_t a = 0; a < data.nbDims; ++a) {
    if (a < g.k)
      g.dims[a] = data.d[a];
    else
      g.sliceSize *= data.d[a];
    g.count *= data.d[a];
  }
  int64_t indexCount = 1;
  for (int32_t a = 0; a < indices.nbDims; ++a) indexCount *= indices.d[a];
  g.tuples = g.k == 0 ? 0 : indexCount / g.k;
  g.reduction = reduction;
  return g;
}

// The first element of tuple t's slice in Data, or -1 when one of its indices is outside
// [-d, d) (then *badAxis is that axis).
template <class I>
KILN_HOST_DEVICE inline int64_t sliceStart(const Geometry& g, const I* indices, int64_t t,
                                           int32_t* badAxis) {
  int64_t offset = 0;
  for (int32_t a = 0; a < g.k; ++a) {
    int64_t v = static_cast<int64_t>(indices[t * g.k + a]);
    if (v < 0) v += g.dims[a];
    if (v < 0 || v >= g.dims[a]) {
      *badAxis = a;
      return -1;
    }
    offset = offset * g.dims[a] + v;
  }
  return offset * g.sliceSize;
}

// An update combined with the element it lands on.
template <class V>
KILN_HOST_DEVICE inline V combine(ScatterReduction r, V old, V update) {
  switch (r) {
    case ScatterReduction::kADD:
      return old + update;
    case ScatterReduction::kMUL:
      return old * update;
    case ScatterReduction::kMAX:
      return old < update ? update : old;
    case ScatterReduction::kMIN:
      return update < old ? update : old;
    case ScatterReduction::kNONE:
      break;
  }
  return update;
}

}  // namespace kiln::ops::scatter_nd
