// The row chunks of Linear's L2-chunked CUDA tactics (ops/linear/linear_row_chunks.h): balanced,
// whole granules but the last, within the budget but for rounding, and the whole product when it
// fits.
#include "ops/linear/linear_row_chunks.h"

#include <gtest/gtest.h>

namespace kiln::cuda {
namespace {

constexpr int64_t kHalfL2 = int64_t{25} << 20;  // half an H200's 50 MiB

void expectCovers(const RowChunks& c, int64_t rows) {
  EXPECT_GE(c.count, 1);
  EXPECT_GT(c.lastRows, 0);
  EXPECT_LE(c.lastRows, c.rows);
  EXPECT_EQ((c.count - 1) * c.rows + c.lastRows, rows);
}

TEST(LinearRowChunks, VitMlpOutputInChunksOfWholeTiles) {
  // ViT-B/16 b64: 64 x 197 rows of 3072 FP16 outputs, 77.5 MB.
  const RowChunks half = rowChunksFor(12608, 3072 * 2, kHalfL2);
  EXPECT_EQ(half.count, 3);
  EXPECT_EQ(half.rows, 4224);
  expectCovers(half, 12608);
  EXPECT_LE(half.rows * 3072 * 2, kHalfL2 + kRowChunkGranule * 3072 * 2);
  const RowChunks quarter = rowChunksFor(12608, 3072 * 2, kHalfL2 / 2);
  EXPECT_EQ(quarter.count, 6);
  EXPECT_EQ(quarter.rows, 2176);
  EXPECT_EQ(quarter.rows % kRowChunkGranule, 0);
  expectCovers(quarter, 12608);
}

TEST(LinearRowChunks, OutputThatFitsIsOneChunk) {
  // BERT-base s128 b32's MLP: 4096 x 3072 FP16, 24 MiB.
  const RowChunks c = rowChunksFor(4096, 3072 * 2, kHalfL2);
  EXPECT_EQ(c.count, 1);
  EXPECT_EQ(c.rows, 4096);
  EXPECT_EQ(c.lastRows, 4096);
  EXPECT_EQ(rowChunksFor(0, 6144, kHalfL2).count, 1);
  EXPECT_EQ(rowChunksFor(100, 6144, 0).count, 1);
}

TEST(LinearRowChunks, OddRowsEndInAShorterChunk) {
  const RowChunks c = rowChunksFor(4402, 3072 * 2, kHalfL2);  // the device harness's case
  EXPECT_EQ(c.count, 2);
  EXPECT_EQ(c.rows, 2304);
  EXPECT_EQ(c.lastRows, 4402 - 2304);
  expectCovers(c, 4402);
  const RowChunks f = rowChunksFor(4402, 3072 * 4, kHalfL2);  // the same in FP32
  EXPECT_EQ(f.count, 3);
  expectCovers(f, 4402);
}

TEST(LinearRowChunks, RowsTooFewForAGranuleEachStayWhole) {
  // 200 huge rows: rounding a chunk up to 128 rows leaves one chunk, never an empty second.
  const RowChunks c = rowChunksFor(200, int64_t{1} << 20, kHalfL2);
  expectCovers(c, 200);
  EXPECT_EQ(c.count, 2);
  EXPECT_EQ(c.rows, 128);
  const RowChunks one = rowChunksFor(100, int64_t{1} << 20, kHalfL2);
  EXPECT_EQ(one.count, 1);
  expectCovers(one, 100);
}

}  // namespace
}  // namespace kiln::cuda
