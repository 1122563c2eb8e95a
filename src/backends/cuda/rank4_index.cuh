// Index arithmetic of kiln's per-element CUDA kernels over rank-4 tensors in either format
// (convolution, deconvolution, pooling, reformat): the inverse of elements.cuh's offset4.
#pragma once

#include <cstdint>

namespace kiln::cuda {

// Logical (n, ch, y, x) of element i of a [N, C, H, W] tensor, where i walks it in memory order
// (channels-last: N, H, W, C).
__host__ __device__ inline void decode4(int64_t i, int64_t C, int64_t H, int64_t W,
                                        bool channelsLast, int64_t* n, int64_t* ch, int64_t* y,
                                        int64_t* x) {
  if (channelsLast) {
    *ch = i % C;
    i /= C;
    *x = i % W;
    i /= W;
    *y = i % H;
    *n = i / H;
  } else {
    *x = i % W;
    i /= W;
    *y = i % H;
    i /= H;
    *ch = i % C;
    *n = i / C;
  }
}

}  // namespace kiln::cuda
