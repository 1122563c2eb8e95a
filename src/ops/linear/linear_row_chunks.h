// How Linear's L2-chunked CUDA tactics (cublaslt_l2half_chunks_then_activation and the l2quarter
// ones, linear_cuda.cpp) cut the rows of a product whose activation runs as a pass of its own. Y is
// written by the product and then read and rewritten by the pass; when Y is larger than the L2
// cache, the pass reads it back from device memory (ViT-B/16 b64's MLP: 77.5 MB of FP16 each way,
// about 0.04 ms of each of its 12 layers on the H200). Taken a chunk of rows at a time, product
// then pass, each chunk's Y is still in L2 when the pass reads it, and the pass rewrites lines the
// product left there. Pure arithmetic, tested on the host
// (tests/backends/cuda/linear_row_chunks_test.cpp).
#pragma once

#include <cstdint>

namespace kiln::cuda {

// A chunk's rows are a multiple of this (a product tile's height), except the last chunk's.
constexpr int64_t kRowChunkGranule = 128;

struct RowChunks {
  int64_t rows = 0;   // rows per chunk; the last chunk has rows of its own (lastRows)
  int64_t count = 1;  // chunks
  int64_t lastRows = 0;
};

// Balanced chunks of at most about budgetBytes of output each (rowBytes per row): as few chunks
// as that allows, their rows rounded up to kRowChunkGranule, which may exceed the budget by less
// than a granule's rows. count 1 (the whole product) when the output fits the budget.
constexpr RowChunks rowChunksFor(int64_t rows, int64_t rowBytes, int64_t budgetBytes) {
  RowChunks c;
  c.rows = c.lastRows = rows;
  if (rows <= 0 || rowBytes <= 0 || budgetBytes <= 0 || rows * rowBytes <= budgetBytes) return c;
  const int64_t wanted = (rows * rowBytes + budgetBytes - 1) / budgetBytes;
  const int64_t even = (rows + wanted - 1) / wanted;
  c.rows = (even + kRowChunkGranule - 1) / kRowChunkGranule * kRowChunkGranule;
  if (c.rows >= rows) {
    c.rows = c.lastRows = rows;
    return c;
  }
  c.count = (rows + c.rows - 1) / c.rows;
  c.lastRows = rows - (c.count - 1) * c.rows;
  return c;
}

}  // namespace kiln::cuda
