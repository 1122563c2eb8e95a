// Gather's layout and index rule, shared by its CPU and CUDA kernels (gather_cpu.cpp,
// gather_cuda.cu). The data is seen as [outer, axisDim, inner] and the output as
// [outer, nbIndices, inner]; an index counts from the end when negative, and one outside
// [-axisDim, axisDim) selects nothing (the CPU fails the run; the GPU writes zeros and sets its
// error flag).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/types.h"

namespace kiln::ops::gather {

struct Split {
  int64_t outer = 1, axisDim = 1, inner = 1;
};

// The data dims around `axis` (negative counts from the end; inference has validated it).
KILN_HOST_DEVICE inline Split split(const Dims& data, int32_t axis) {
  if (axis < 0) axis += data.nbDims;
  Split s;
  for (int32_t i = 0; i < axis; ++i) s.outer *= data.d[i];
  s.axisDim = data.d[axis];
  for (int32_t i = axis + 1; i < data.nbDims; ++i) s.inner *= data.d[i];
  return s;
}

// The position `index` selects along an axis of axisDim elements; it selects nothing unless
// inRange().
KILN_HOST_DEVICE inline int64_t position(int64_t index, int64_t axisDim) {
  return index < 0 ? index + axisDim : index;
}

KILN_HOST_DEVICE inline bool inRange(int64_t position, int64_t axisDim) {
  return position >= 0 && position < axisDim;
}

}  // namespace kiln::ops::gather
