// Concatenation and shuffle kernels: byte-exact against coordinate-by-coordinate expectations on
// random shapes and every element size, hand-computed cases, and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln {
namespace {

using test::Rng;

const DataType kAllTypes[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kINT8,
                              DataType::kINT32, DataType::kINT64, DataType::kBOOL};

TEST(Concatenation, HandComputed) {
  ConcatenationParams p;
  p.axis = 1;
  const std::vector<PluginTensorDesc> in = {test::desc(makeDims({2, 1}), DataType::kINT32),
                                            test::desc(makeDims({2, 2}), DataType::kINT32)};
  auto cfg = test::config(LayerType::kCONCATENATION, p, in,
                          test::inferredOutputs(ops::Concatenation::infer, p, in));
  auto k = test::create(test::tacticNamed(ops::Concatenation::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const std::vector<int32_t> a = {1, 2}, b = {3, 4, 5, 6};
  std::vector<int32_t> out(6);
  ASSERT_TRUE(test::runKernel(*k, {a.data(), b.data()}, {out.data()}).isOk());
  EXPECT_EQ(out, (std::vector<int32_t>{1, 3, 4, 2, 5, 6}));
}

TEST(Concatenation, RandomShapesEveryType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 30; ++round) {
    const DataType type = kAllTypes[round % 7];
    const size_t es = dataTypeSize(type);
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 5));
    const Dims base = rng.dims(rank, 4);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(0, rank - 1));
    const int n = static_cast<int>(rng.uniformInt(1, 4));
    std::vector<PluginTensorDesc> in;
    std::vector<std::vector<uint8_t>> data;
    for (int i = 0; i < n; ++i) {
      Dims d = base;
      d.d[axis] = rng.uniformInt(0, 4);  // an empty input now and then
      in.push_back(test::desc(d, type));
      data.push_back(rng.bytes(volume(d) * static_cast<int64_t>(es)));
    }
    ConcatenationParams p;
    p.axis = rng.uniformInt(0, 1) ? axis : axis - rank;
    auto cfg = test::config(LayerType::kCONCATENATION, p, in,
                            test::inferredOutputs(ops::Concatenation::infer, p, in));
    const Dims od = cfg.outputs[0].dims;
    auto k = test::create(test::tacticNamed(ops::Concatenation::cpuTactics(), "reference"), cfg);
    ASSERT_TRUE(k);
    std::vector<const void*> ptrs;
    for (const auto& v : data) ptrs.push_back(v.data());
    std::vector<uint8_t> out(static_cast<size_t>(volume(od)) * es, 0);
    ASSERT_TRUE(test::runKernel(*k, ptrs, {out.data()}).isOk());
    // Output element i comes from the input whose axis range holds its axis coordinate.
    for (int64_t i = 0; i < volume(od); ++i) {
      auto c = test::unravel(i, od);
      int which = 0;
      while (c[static_cast<size_t>(axis)] >= in[static_cast<size_t>(which)].dims.d[axis]) {
        c[static_cast<size_t>(axis)] -= in[static_cast<size_t>(which)].dims.d[axis];
        ++which;
      }
      const auto s = test::stridesOf(in[static_cast<size_t>(which)].dims);
      int64_t src = 0;
      for (int32_t k2 = 0; k2 < rank; ++k2)
        src += c[static_cast<size_t>(k2)] * s[static_cast<size_t>(k2)];
      ASSERT_EQ(
          0,
          std::memcmp(out.data() + i * static_cast<int64_t>(es),
                      data[static_cast<size_t>(which)].data() + src * static_cast<int64_t>(es), es))
          << "round " << round << " element " << i;
    }
  }
}

TEST(Concatenation, Refusals) {
  const auto& ref = test::tacticNamed(ops::Concatenation::cpuTactics(), "reference");
  ConcatenationParams p;
  p.axis = 0;
  const Dims d = makeDims({2, 3});
  EXPECT_NE(
      test::declines(ref, test::config(LayerType::kCONCATENATION, p, {test::desc(d), test::desc(d)},
                                       {test::desc(makeDims({5, 3}))}))
          .find("[5,3]"),
      std::string::npos);
  test::declines(
      ref, test::config(LayerType::kCONCATENATION, p, {test::desc(d), test::desc(makeDims({2, 4}))},
                        {test::desc(makeDims({4, 3}))}));
  test::declines(ref, test::config(LayerType::kCONCATENATION, p, {}, {test::desc(d)}));
  const Dims d4 = makeDims({1, 2, 2, 2});
  const auto cl = test::desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST);
  test::declines(ref, test::config(LayerType::kCONCATENATION, p, {cl, cl},
                                   {test::desc(makeDims({2, 2, 2, 2}), DataType::kFLOAT,
                                               TensorFormat::kCHANNELS_LAST)}));
}

// out dim i = in dim perm[i], by coordinates.
std::vector<uint8_t> transposeBytes(const std::vector<uint8_t>& in, const Dims& d,
                                    const int32_t* perm, size_t es, Dims* outDims) {
  Dims o;
  o.nbDims = d.nbDims;
  for (int32_t i = 0; i < d.nbDims; ++i) o.d[i] = d.d[perm[i]];
  const auto s = test::stridesOf(d);
  std::vector<uint8_t> out(in.size());
  for (int64_t i = 0; i < volume(o); ++i) {
    const auto c = test::unravel(i, o);
    int64_t src = 0;
    for (int32_t k = 0; k < o.nbDims; ++k)
      src += c[static_cast<size_t>(k)] * s[static_cast<size_t>(perm[k])];
    std::memcpy(out.data() + i * static_cast<int64_t>(es),
                in.data() + src * static_cast<int64_t>(es), es);
  }
  *outDims = o;
  return out;
}

void randomPerm(Rng& rng, int32_t rank, int32_t* perm) {
  std::iota(perm, perm + rank, 0);
  std::shuffle(perm, perm + rank, rng.gen);
}

TEST(Shuffle, HandComputed) {
  // [2,3] transposed to [3,2], then reshaped to [6].
  ShuffleParams p;
  p.hasFirstTranspose = true;
  p.firstTranspose[0] = 1;
  p.firstTranspose[1] = 0;
  p.hasReshape = true;
  p.reshapeDims = makeDims({-1});
  const std::vector<PluginTensorDesc> in = {test::desc(makeDims({2, 3}), DataType::kINT64)};
  auto cfg =
      test::config(LayerType::kSHUFFLE, p, in, test::inferredOutputs(ops::Shuffle::infer, p, in));
  auto k = test::create(test::tacticNamed(ops::Shuffle::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> out(6);
  ASSERT_TRUE(test::runKernel(*k, {a.data()}, {out.data()}).isOk());
  EXPECT_EQ(out, (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Shuffle, RandomTransposeReshapeTranspose) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 40; ++round) {
    const DataType type = kAllTypes[round % 7];
    const size_t es = dataTypeSize(type);
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(0, 5));
    const Dims d = rng.dims(rank, 4);
    ShuffleParams p;
    p.hasFirstTranspose = rng.uniformInt(0, 2) != 0;
    randomPerm(rng, rank, p.firstTranspose);
    const auto data = rng.bytes(volume(d) * static_cast<int64_t>(es));

    // Expected: each stage done separately.
    Dims t = d;
    std::vector<uint8_t> want = data;
    if (p.hasFirstTranspose) want = transposeBytes(want, d, p.firstTranspose, es, &t);
    p.hasReshape = rng.uniformInt(0, 2) != 0;
    if (p.hasReshape) {
      // Merge a random run of adjacent dims, spelled with 0 (copy), -1 (inferred) or the value.
      Dims r;
      const int32_t from = rank ? static_cast<int32_t>(rng.uniformInt(0, rank - 1)) : 0;
      const int32_t to = rank ? static_cast<int32_t>(rng.uniformInt(from, rank - 1)) : -1;
      Dims spelled;
      for (int32_t i = 0; i < rank; ++i) {
        if (i > from && i <= to) {
          r.d[r.nbDims - 1] *= t.d[i];
          spelled.d[spelled.nbDims - 1] = r.d[r.nbDims - 1];
          continue;
        }
        r.d[r.nbDims] = t.d[i];
        spelled.d[spelled.nbDims] = t.d[i];
        if (i < from && rng.uniformInt(0, 1)) spelled.d[spelled.nbDims] = 0;
        ++r.nbDims;
        ++spelled.nbDims;
      }
      if (spelled.nbDims > 0 && rng.uniformInt(0, 1))
        spelled.d[rng.uniformInt(0, spelled.nbDims - 1)] = -1;
      p.reshapeDims = spelled;
      t = r;
    }
    p.hasSecondTranspose = rng.uniformInt(0, 2) != 0;
    randomPerm(rng, t.nbDims, p.secondTranspose);
    if (p.hasSecondTranspose) want = transposeBytes(want, t, p.secondTranspose, es, &t);

    const std::vector<PluginTensorDesc> in = {test::desc(d, type)};
    auto cfg =
        test::config(LayerType::kSHUFFLE, p, in, test::inferredOutputs(ops::Shuffle::infer, p, in));
    ASSERT_EQ(cfg.outputs[0].dims, t) << "round " << round;
    auto k = test::create(test::tacticNamed(ops::Shuffle::cpuTactics(), "reference"), cfg);
    ASSERT_TRUE(k);
    std::vector<uint8_t> out(data.size(), 0);
    ASSERT_TRUE(test::runKernel(*k, {data.data()}, {out.data()}).isOk());
    ASSERT_EQ(out, want) << "round " << round << " type " << dataTypeName(type);
  }
}

TEST(Shuffle, Refusals) {
  const auto& ref = test::tacticNamed(ops::Shuffle::cpuTactics(), "reference");
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = makeDims({7});
  EXPECT_NE(test::declines(ref, test::config(LayerType::kSHUFFLE, p, {test::desc(makeDims({2, 3}))},
                                             {test::desc(makeDims({7}))}))
                .find("volume"),
            std::string::npos);
  p.reshapeDims = makeDims({6});
  // Output dims that disagree with the params (a corrupted plan).
  test::declines(ref, test::config(LayerType::kSHUFFLE, p, {test::desc(makeDims({2, 3}))},
                                   {test::desc(makeDims({3, 2}))}));
  ShuffleParams t;
  t.hasFirstTranspose = true;
  t.firstTranspose[0] = 1;
  t.firstTranspose[1] = 1;
  test::declines(ref, test::config(LayerType::kSHUFFLE, t, {test::desc(makeDims({2, 3}))},
                                   {test::desc(makeDims({3, 3}))}));
}

}  // namespace
}  // namespace kiln
