// Shuffle (transpose, reshape, transpose): its shape rule and its CPU tactic, byte-exact against
// each stage done separately on random shapes and every element size, a hand-computed case, and
// refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "ops/op_test_util.h"
#include "ops/shuffle/shuffle_semantics.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferShuffle, TransposeReshapeTranspose) {
  ShuffleParams p;
  p.hasFirstTranspose = true;
  const int32_t perm[] = {2, 0, 1};
  std::copy(std::begin(perm), std::end(perm), p.firstTranspose);
  EXPECT_EQ(inferOk(ops::Shuffle::infer, p, {shape({2, 3, 4})}).dims, makeDims({4, 2, 3}));

  p.hasReshape = true;
  p.reshapeDims = makeDims({0, -1});  // 0 copies dim 0 of the transposed tensor
  EXPECT_EQ(inferOk(ops::Shuffle::infer, p, {shape({2, 3, 4})}).dims, makeDims({4, 6}));

  p.hasSecondTranspose = true;
  p.secondTranspose[0] = 1;
  p.secondTranspose[1] = 0;
  const TensorShape s = inferOk(ops::Shuffle::infer, p, {shape({2, 3, 4}, DataType::kINT8)});
  EXPECT_EQ(s.dims, makeDims({6, 4}));
  EXPECT_EQ(s.type, DataType::kINT8);

  ShuffleParams flat;
  flat.hasReshape = true;
  flat.reshapeDims = makeDims({});
  EXPECT_EQ(inferOk(ops::Shuffle::infer, flat, {shape({1, 1})}).dims, makeDims({}));
  flat.reshapeDims = makeDims({6, 0});  // empty tensors reshape too
  EXPECT_EQ(inferOk(ops::Shuffle::infer, flat, {shape({3, 0})}).dims, makeDims({6, 0}));
}

TEST(InferShuffle, Refusals) {
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = makeDims({5, 5});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "volume 24) to [5,5] (volume 25)");
  p.reshapeDims = makeDims({5, -1});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "not a multiple of 5");
  p.reshapeDims = makeDims({-1, -1});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "more than one -1");
  p.reshapeDims = makeDims({-2, 12});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "only -1 may be negative");
  p.reshapeDims = makeDims({2, 3, 2, 0});
  inferFails(ops::Shuffle::infer, p, {shape({2, 3, 4})}, "has no dim 3");
  p.reshapeDims = makeDims({0, -1});
  inferFails(ops::Shuffle::infer, p, {shape({0, 3})}, "cannot infer the -1");

  ShuffleParams t;
  t.hasFirstTranspose = true;
  const int32_t dup[] = {0, 0, 1};
  std::copy(std::begin(dup), std::end(dup), t.firstTranspose);
  inferFails(ops::Shuffle::infer, t, {shape({2, 3, 4})}, "axis 0 appears twice");
  const int32_t far[] = {0, 3, 1};
  std::copy(std::begin(far), std::end(far), t.firstTranspose);
  inferFails(ops::Shuffle::infer, t, {shape({2, 3, 4})}, "entry 1 is 3");

  ShuffleParams second;  // the second transpose is checked against the reshaped rank
  second.hasReshape = true;
  second.reshapeDims = makeDims({6, 4});
  second.hasSecondTranspose = true;
  second.secondTranspose[0] = 2;
  second.secondTranspose[1] = 0;
  inferFails(ops::Shuffle::infer, second, {shape({2, 3, 4})}, "second transpose");
}

TEST(InferShuffle, ReshapeDimsFromASecondInput) {
  // [2*3*5] reshaped to [source dim 1, source dim 0, -1] of a [3, 2] source: [2, 3, 5].
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = makeDims({1, 1, -1});  // dims 0 and 1 are replaced by the source's
  p.reshapeDimsOf[0] = 2;
  p.reshapeDimsOf[1] = 1;
  const TensorShape source = shape({3, 2}, DataType::kINT64);  // its type does not matter
  EXPECT_EQ(inferOk(ops::Shuffle::infer, p, {shape({30}), source}).dims, makeDims({2, 3, 5}));
  EXPECT_EQ(inferOk(ops::Shuffle::infer, p, {shape({60}), shape({4, 3})}).dims,
            makeDims({3, 4, 5}));
  inferFails(ops::Shuffle::infer, p, {shape({30})}, "there is none");
  inferFails(ops::Shuffle::infer, p, {shape({31}), source}, "not a multiple of 6");
  p.reshapeDimsOf[1] = 3;
  inferFails(ops::Shuffle::infer, p, {shape({30}), source}, "which has no such dim");
  p.reshapeDimsOf[1] = 0;
  p.reshapeDimsOf[5] = 1;
  inferFails(ops::Shuffle::infer, p, {shape({30}), source}, "there is no reshape dim 5");
  ShuffleParams plain;
  plain.hasReshape = true;
  plain.reshapeDims = makeDims({-1});
  inferFails(ops::Shuffle::infer, plain, {shape({30}), source}, "no reshape dim is taken");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

// out dim i = in dim perm[i], by coordinates.
std::vector<uint8_t> transposeBytes(const std::vector<uint8_t>& in, const Dims& d,
                                    const int32_t* perm, size_t es, Dims* outDims) {
  Dims o;
  o.nbDims = d.nbDims;
  for (int32_t i = 0; i < d.nbDims; ++i) o.d[i] = d.d[perm[i]];
  const auto s = stridesOf(d);
  std::vector<uint8_t> out(in.size());
  for (int64_t i = 0; i < volume(o); ++i) {
    const auto c = unravel(i, o);
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

// The reference tactic's output for int64 input 0 holding 1..6 (any second input gets no data:
// a null pointer); empty when no kernel is made or it fails.
std::vector<int64_t> referenceOnOneToSix(const ShuffleParams& p,
                                         const std::vector<PluginTensorDesc>& in) {
  auto cfg = config(LayerType::kSHUFFLE, p, in, inferredOutputs(ops::Shuffle::infer, p, in));
  auto k = create(tacticNamed(ops::Shuffle::cpuTactics(), "reference"), cfg);
  if (!k) return {};
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> out(6);
  std::vector<const void*> inputs(in.size(), nullptr);
  inputs[0] = a.data();
  if (!runKernel(*k, inputs, {out.data()}).isOk()) return {};
  return out;
}

TEST(Shuffle, HandComputed) {
  // [2,3] transposed to [3,2], then reshaped to [6].
  ShuffleParams p;
  p.hasFirstTranspose = true;
  p.firstTranspose[0] = 1;
  p.firstTranspose[1] = 0;
  p.hasReshape = true;
  p.reshapeDims = makeDims({-1});
  EXPECT_EQ(referenceOnOneToSix(p, {desc(makeDims({2, 3}), DataType::kINT64)}),
            (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Shuffle, ASecondInputOnlyGivesDims) {
  // [2,3] transposed to [3,2], then reshaped to [source dim 0, source dim 1] of a [3, 2] source
  // whose data is never read (null).
  ShuffleParams p;
  p.hasFirstTranspose = true;
  p.firstTranspose[0] = 1;
  p.firstTranspose[1] = 0;
  p.hasReshape = true;
  p.reshapeDims = makeDims({1, 1});
  p.reshapeDimsOf[0] = 1;
  p.reshapeDimsOf[1] = 2;
  EXPECT_EQ(referenceOnOneToSix(p, {desc(makeDims({2, 3}), DataType::kINT64),
                                    desc(makeDims({3, 2}), DataType::kFLOAT)}),
            (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Shuffle, RandomTransposeReshapeTranspose) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 40; ++round) {
    const DataType type = allTypes()[round % 7];
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

    const std::vector<PluginTensorDesc> in = {desc(d, type)};
    auto cfg = config(LayerType::kSHUFFLE, p, in, inferredOutputs(ops::Shuffle::infer, p, in));
    ASSERT_EQ(cfg.outputs[0].dims, t) << "round " << round;
    auto k = create(tacticNamed(ops::Shuffle::cpuTactics(), "reference"), cfg);
    ASSERT_TRUE(k);
    std::vector<uint8_t> out(data.size(), 0);
    ASSERT_TRUE(runKernel(*k, {data.data()}, {out.data()}).isOk());
    ASSERT_EQ(out, want) << "round " << round << " type " << dataTypeName(type);
  }
}

TEST(Shuffle, Refusals) {
  const auto& ref = tacticNamed(ops::Shuffle::cpuTactics(), "reference");
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = makeDims({7});
  EXPECT_NE(
      declines(ref, config(LayerType::kSHUFFLE, p, {desc(makeDims({2, 3}))}, {desc(makeDims({7}))}))
          .find("volume"),
      std::string::npos);
  p.reshapeDims = makeDims({6});
  // Output dims that disagree with the params (a corrupted plan).
  declines(ref, config(LayerType::kSHUFFLE, p, {desc(makeDims({2, 3}))}, {desc(makeDims({3, 2}))}));
  ShuffleParams t;
  t.hasFirstTranspose = true;
  t.firstTranspose[0] = 1;
  t.firstTranspose[1] = 1;
  declines(ref, config(LayerType::kSHUFFLE, t, {desc(makeDims({2, 3}))}, {desc(makeDims({3, 3}))}));
}

// channelsLastInOrder (CUDA's channels_last_copy takes a layer by it) against its meaning: the
// shuffle, run by the CPU reference on a [N, C, H, W] tensor whose every element holds its offset
// in NHWC memory, writes 0, 1, 2, ... exactly when the rule says so. Random shuffles (a third of
// their first transposes the NCHW -> NHWC permutation, so that both answers occur), ViT's patch
// tokens and a permute to [N, H, W, C].
TEST(Shuffle, ChannelsLastInOrderMatchesTheCopyItStandsFor) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  auto check = [](const ShuffleParams& p, const Dims& d) {
    const int64_t n = d.d[0], c = d.d[1], h = d.d[2], w = d.d[3];
    std::vector<int32_t> nhwcOffset(static_cast<size_t>(volume(d)));
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < c; ++b)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t x = 0; x < w; ++x)
            nhwcOffset[size_t(((a * c + b) * h + y) * w + x)] =
                static_cast<int32_t>(((a * h + y) * w + x) * c + b);
    const std::vector<PluginTensorDesc> in = {desc(d, DataType::kINT32)};
    auto cfg = config(LayerType::kSHUFFLE, p, in, inferredOutputs(ops::Shuffle::infer, p, in));
    auto k = create(tacticNamed(ops::Shuffle::cpuTactics(), "reference"), cfg);
    if (!k) return ::testing::AssertionFailure() << "the reference declined";
    std::vector<int32_t> out(nhwcOffset.size(), -1);
    if (!runKernel(*k, {nhwcOffset.data()}, {out.data()}).isOk())
      return ::testing::AssertionFailure() << "the reference failed";
    bool inOrder = true;
    for (size_t i = 0; i < out.size(); ++i) inOrder = inOrder && out[i] == static_cast<int32_t>(i);
    if (ops::shuffle::channelsLastInOrder(p, d, cfg.outputs[0].dims) != inOrder)
      return ::testing::AssertionFailure()
             << "the rule says " << !inOrder << ", the copy " << inOrder;
    return ::testing::AssertionSuccess() << (inOrder ? "true" : "false");
  };
  ShuffleParams tokens;  // flatten(2).transpose(1, 2)
  tokens.hasReshape = true;
  tokens.reshapeDims = makeDims({0, 0, -1});
  tokens.hasSecondTranspose = true;
  tokens.secondTranspose[0] = 0;
  tokens.secondTranspose[1] = 2;
  tokens.secondTranspose[2] = 1;
  const auto vit = check(tokens, makeDims({2, 6, 3, 5}));
  EXPECT_TRUE(vit);
  EXPECT_EQ(std::string(vit.message()), "true");
  ShuffleParams nhwc;
  nhwc.hasFirstTranspose = true;
  const int32_t toNhwc[4] = {0, 2, 3, 1};
  std::copy(toNhwc, toNhwc + 4, nhwc.firstTranspose);
  const auto permute = check(nhwc, makeDims({2, 6, 3, 5}));
  EXPECT_TRUE(permute);
  EXPECT_EQ(std::string(permute.message()), "true");
  ShuffleParams flattenOnly = tokens;  // [N, C, H W] is NCHW's order, not NHWC's
  flattenOnly.hasSecondTranspose = false;
  const auto flat = check(flattenOnly, makeDims({2, 6, 3, 5}));
  EXPECT_TRUE(flat);
  EXPECT_EQ(std::string(flat.message()), "false");
  int inOrder = 0;
  for (int round = 0; round < 200; ++round) {
    const Dims d = rng.dims(4, 4);
    ShuffleParams p;
    p.hasFirstTranspose = rng.uniformInt(0, 2) != 0;
    if (round % 3 == 0)
      std::copy(toNhwc, toNhwc + 4, p.firstTranspose);
    else
      randomPerm(rng, 4, p.firstTranspose);
    Dims t = d;
    if (p.hasFirstTranspose)
      for (int32_t i = 0; i < 4; ++i) t.d[i] = d.d[p.firstTranspose[i]];
    p.hasReshape = rng.uniformInt(0, 2) != 0;
    if (p.hasReshape) {  // merge a random run of adjacent dims
      const auto from = static_cast<int32_t>(rng.uniformInt(0, 3));
      const auto to = static_cast<int32_t>(rng.uniformInt(from, 3));
      Dims r;
      for (int32_t i = 0; i < 4; ++i) {
        if (i > from && i <= to)
          r.d[r.nbDims - 1] *= t.d[i];
        else
          r.d[r.nbDims++] = t.d[i];
      }
      p.reshapeDims = r;
      t = r;
    }
    p.hasSecondTranspose = rng.uniformInt(0, 2) != 0;
    randomPerm(rng, t.nbDims, p.secondTranspose);
    const auto result = check(p, d);
    ASSERT_TRUE(result) << "round " << round;
    inOrder += std::string(result.message()) == "true";
  }
  EXPECT_GT(inOrder, 10) << "too few rounds whose shuffle keeps the NHWC order";
  EXPECT_LT(inOrder, 190) << "too few rounds whose shuffle moves elements";
}

}  // namespace
}  // namespace kiln::testing
