// Tile's rule, shared by its CPU and CUDA kernels (tile_cpu.cpp, tile_cuda.cu): output coordinate
// j of an axis with n input elements reads j mod n (an output dim > 0 implies n > 0).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::tile {

KILN_HOST_DEVICE inline int64_t source(int64_t j, int64_t n) { return j % n; }

}  // namespace kiln::ops::tile
