// Memory index <-> logical coordinates of a tensor in linear (row-major) or channels-last (rank
// 4, memory order N, H, W, C) format, for kernels that take either format on each tensor
// (resize, roi_align).
#pragma once

#include <cstdint>

#include "backends/cuda/elements.cuh"

namespace kiln::cuda {

// Decodes memory index i of a tensor with `dims` into logical coordinates.
__host__ __device__ inline void decode(int64_t i, int32_t rank, const int64_t* dims,
                                       bool channelsLast, int64_t* coord) {
  if (channelsLast) {
    coord[1] = i % dims[1];
    i /= dims[1];
    coord[3] = i % dims[3];
    i /= dims[3];
    coord[2] = i % dims[2];
    coord[0] = i / dims[2];
    return;
  }
  for (int32_t k = rank - 1; k >= 0; --k) {
    coord[k] = i % dims[k];
    i /= dims[k];
  }
}

// Memory offset of logical coordinates.
__host__ __device__ inline int64_t encode(const int64_t* coord, int32_t rank, const int64_t* dims,
                                          bool channelsLast) {
  if (channelsLast)
    return offset4(coord[0], coord[1], coord[2], coord[3], dims[1], dims[2], dims[3], true);
  int64_t off = 0;
  for (int32_t k = 0; k < rank; ++k) off = off * dims[k] + coord[k];
  return off;
}

}  // namespace kiln::cuda
