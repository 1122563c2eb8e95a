// Attention (src/ops/attention/): the shape and type rules, the CPU reference against the
// definition written out here (scores, the softmax over keys, the weighted sum of V, in double),
// and the blocked tactic against the reference on random problems that cross its 64-row and
// 256-key blocks, with every mask shape and batch broadcast, and bit for bit the same on any
// thread count; the softmax's special rows (masked
// out entirely: NaN, as the unfused chain gives; masked in the first key block only: finite);
// head views (Q, K, V read from packed projections, O written in another order) and their rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/thread_pool.h"
#include "kiln/float16.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

constexpr LayerType kAT = LayerType::kATTENTION;

AttentionParams params(float scale = 1.f, bool keyTransposed = false) {
  AttentionParams p;
  p.scale = scale;
  p.keyTransposed = keyTransposed;
  return p;
}

TEST(Attention, ShapeRuleGivesTheBroadcastBatchAndDv) {
  EXPECT_EQ(
      inferLayerOk(kAT, params(), {f32({2, 4, 5, 8}), f32({2, 4, 7, 8}), f32({2, 4, 7, 3})}).dims,
      makeDims({2, 4, 5, 3}));
  EXPECT_EQ(inferLayerOk(kAT, params(1.f, true),
                         {f32({2, 4, 5, 8}), f32({2, 1, 8, 7}), f32({1, 7, 3}), f32({5, 7})})
                .dims,
            makeDims({2, 4, 5, 3}));
  EXPECT_EQ(inferLayerOk(kAT, params(), {f32({5, 8}), f32({7, 8}), f32({7, 2}), f32({7})}).dims,
            makeDims({5, 2}));
  const TensorShape h =
      inferLayerOk(kAT, params(),
                   {typed({3, 4}, DataType::kHALF), typed({6, 4}, DataType::kHALF),
                    typed({6, 4}, DataType::kHALF)});
  EXPECT_EQ(h.type, DataType::kHALF);
}

TEST(Attention, ShapeRuleSaysWhatIsWrong) {
  EXPECT_MENTIONS(inferLayerError(kAT, params(), {f32({2, 5, 8}), f32({2, 7, 6}), f32({2, 7, 3})}),
                  "head size 6 but Q [2,5,8] has 8");
  EXPECT_MENTIONS(
      inferLayerError(kAT, params(1.f, true), {f32({2, 5, 8}), f32({2, 7, 8}), f32({2, 7, 3})}),
      "transposed");
  EXPECT_MENTIONS(inferLayerError(kAT, params(), {f32({2, 5, 8}), f32({2, 7, 8}), f32({2, 6, 3})}),
                  "V [2,6,3] has 6 rows but K has 7 keys");
  EXPECT_MENTIONS(inferLayerError(kAT, params(), {f32({2, 5, 8}), f32({3, 7, 8}), f32({3, 7, 3})}),
                  "do not broadcast");
  EXPECT_MENTIONS(inferLayerError(kAT, params(),
                                  {f32({2, 5, 8}), f32({2, 7, 8}), f32({2, 7, 3}), f32({2, 5, 6})}),
                  "Mask [2,5,6] does not broadcast to the scores [2,5,7]");
  // The mask broadcasts to the scores, never the scores to a larger mask.
  EXPECT_MENTIONS(
      inferLayerError(kAT, params(), {f32({5, 8}), f32({7, 8}), f32({7, 3}), f32({2, 5, 7})}),
      "does not broadcast");
  EXPECT_MENTIONS(inferLayerError(kAT, params(), {f32({5, 8}), f32({0, 8}), f32({0, 3})}),
                  "no keys");
  EXPECT_MENTIONS(inferLayerError(kAT, params(NAN), {f32({5, 8}), f32({7, 8}), f32({7, 3})}),
                  "scale");
  EXPECT_MENTIONS(inferLayerError(kAT, params(), {f32({8}), f32({7, 8}), f32({7, 3})}),
                  "rank >= 2");
  EXPECT_MENTIONS(
      inferLayerError(kAT, params(), {f32({5, 8}), typed({7, 8}, DataType::kHALF), f32({7, 3})}),
      "all inputs must have one type");
  EXPECT_MENTIONS(inferLayerError(kAT, params(), {f32({5, 8}), f32({7, 8})}),
                  "expects 3 or 4 inputs");
}

// One random problem: dims and data of Q, K, V and perhaps a mask.
struct Problem {
  AttentionParams p;
  std::vector<Dims> dims;
  std::vector<std::vector<float>> data;
  std::string trace;
};

Dims withTail(const Dims& batch, int64_t a, int64_t b) {
  Dims d = batch;
  d.nbDims = batch.nbDims + 2;
  d.d[batch.nbDims] = a;
  d.d[batch.nbDims + 1] = b;
  return d;
}

// Batch dims of 0 to 2 axes; K/V (and the mask) broadcast over some; sizes up to maxSeq.
Problem randomProblem(Rng& rng, int64_t maxSeq) {
  Problem pr;
  const Dims batch = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 2)), 3);
  const Dims kvBatch = rng.coin() ? batch : broadcastableTo(rng, batch);
  const int64_t sq = rng.uniformInt(1, maxSeq), sk = rng.uniformInt(1, maxSeq);
  const int64_t d = rng.uniformInt(1, 24), dv = rng.uniformInt(1, 24);
  pr.p = params(rng.uniformFloat(0.05f, 1.f), rng.coin());
  pr.dims = {withTail(batch, sq, d),
             pr.p.keyTransposed ? withTail(kvBatch, d, sk) : withTail(kvBatch, sk, d),
             withTail(kvBatch, sk, dv)};
  if (rng.coin()) pr.dims.push_back(broadcastableTo(rng, withTail(batch, sq, sk)));
  for (const Dims& x : pr.dims) pr.data.push_back(rng.floats(volume(x), -2.f, 2.f));
  pr.trace = "Q " + dimsString(pr.dims[0]) + " K " + dimsString(pr.dims[1]) + " V " +
             dimsString(pr.dims[2]) +
             (pr.dims.size() == 4 ? " mask " + dimsString(pr.dims[3]) : std::string(" no mask")) +
             (pr.p.keyTransposed ? " (K transposed)" : "") + ", " + rng.trace();
  return pr;
}

// The definition, in double: for each batch index and query row, the scores against every key,
// their softmax, and the softmax-weighted sum of V's rows. Every input is read through its own
// broadcast to the full shape it plays in (op_test_util.h's broadcastIndex).
std::vector<double> definition(const Problem& pr, const Dims& out) {
  const Dims &qd = pr.dims[0], &vd = pr.dims[2];
  const int32_t r = out.nbDims;
  const int64_t sq = out.d[r - 2], dv = out.d[r - 1], d = qd.d[qd.nbDims - 1];
  const int64_t sk = vd.d[vd.nbDims - 2];
  Dims batch = out;
  batch.nbDims = r - 2;
  const Dims qFull = withTail(batch, sq, d), vFull = withTail(batch, sk, dv);
  const Dims kFull = pr.p.keyTransposed ? withTail(batch, d, sk) : withTail(batch, sk, d);
  const Dims mFull = withTail(batch, sq, sk);
  auto at = [](const std::vector<float>& x, const Dims& full, const Dims& stored, int64_t flat) {
    return static_cast<double>(x[static_cast<size_t>(broadcastIndex(flat, full, stored))]);
  };
  std::vector<double> y(static_cast<size_t>(volume(out)));
  std::vector<double> s(static_cast<size_t>(sk));
  for (int64_t b = 0; b < volume(batch); ++b) {
    for (int64_t i = 0; i < sq; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < sk; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) {
          const int64_t kFlat = pr.p.keyTransposed ? (b * d + e) * sk + j : (b * sk + j) * d + e;
          dot += at(pr.data[0], qFull, qd, (b * sq + i) * d + e) *
                 at(pr.data[1], kFull, pr.dims[1], kFlat);
        }
        double v = pr.p.scale * dot;
        if (pr.dims.size() == 4) v += at(pr.data[3], mFull, pr.dims[3], (b * sq + i) * sk + j);
        s[static_cast<size_t>(j)] = v;
        m = std::max(m, v);
      }
      double sum = 0;
      for (double& v : s) sum += (v = std::exp(v - m));
      for (int64_t e = 0; e < dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < sk; ++j)
          acc += s[static_cast<size_t>(j)] * at(pr.data[2], vFull, vd, (b * sk + j) * dv + e);
        y[static_cast<size_t>((b * sq + i) * dv + e)] = acc / sum;
      }
    }
  }
  return y;
}

KernelConfig configOf(const Problem& pr) {
  std::vector<PluginTensorDesc> in;
  for (const Dims& x : pr.dims) in.push_back(fp32(x));
  return config(kAT, pr.p, in, inferredOutputs(&ops::Attention::infer, pr.p, in));
}

TEST(Attention, ReferenceMatchesTheDefinitionOnRandomProblems) {
  Rng rng;
  for (int trial = 0; trial < 60; ++trial) {
    const Problem pr = randomProblem(rng, 12);
    const KernelConfig c = configOf(pr);
    const auto y = runTactic(tacticNamed(ops::Attention::cpuTactics(), "reference"), c, pr.data);
    expectNearScaled(y, definition(pr, c.outputs[0].dims), 1e-5, pr.trace);
  }
}

TEST(Attention, BlockedMatchesTheReferenceAcrossItsBlocks) {
  Rng rng;
  for (int trial = 0; trial < 12; ++trial) {
    // Up to 300 rows and keys: several 64-row and 256-key blocks, and partial ones.
    const Problem pr = randomProblem(rng, trial < 4 ? 300 : 70);
    const KernelConfig c = configOf(pr);
    const auto& tactics = ops::Attention::cpuTactics();
    const auto want = runTactic(tacticNamed(tactics, "reference"), c, pr.data);
    const auto got = runTactic(tacticNamed(tactics, "blocked"), c, pr.data);
    std::vector<double> w(want.begin(), want.end());
    expectNearScaled(got, w, 2e-5, pr.trace);
  }
}

// The blocked tactic spreads query blocks over the CPU backend's threads: the bits must not
// depend on how many (KILN_CPU_THREADS; ScopedThreadLimit(1) runs it all on the caller).
TEST(Attention, BlockedGivesTheSameBitsOnAnyThreadCount) {
  Rng rng;
  for (int trial = 0; trial < 6; ++trial) {
    Problem pr = randomProblem(rng, 300);
    if (trial == 0) {  // ViT-B/16's heads at batch 1: 12 x 197 tokens x 64
      pr.p = params(0.125f, false);
      pr.dims = {makeDims({12, 197, 64}), makeDims({12, 197, 64}), makeDims({12, 197, 64})};
      pr.data.clear();
      for (const Dims& x : pr.dims) pr.data.push_back(rng.floats(volume(x), -2.f, 2.f));
      pr.trace = "vit heads, " + rng.trace();
    }
    SCOPED_TRACE(pr.trace);
    const KernelConfig c = configOf(pr);
    const Tactic& blocked = tacticNamed(ops::Attention::cpuTactics(), "blocked");
    std::vector<float> one;
    {
      cpu::ScopedThreadLimit limit(1);
      one = runTactic(blocked, c, pr.data);
    }
    const std::vector<float> all = runTactic(blocked, c, pr.data);
    ASSERT_EQ(one.size(), all.size());
    EXPECT_EQ(0, std::memcmp(one.data(), all.data(), one.size() * sizeof(float)));
  }
}

constexpr int64_t kMaskedSq = 3, kMaskedSk = 300, kMaskedD = 4;

// Hand-made masks on one batch index: row 0 masked out entirely, row 1 masked in the first key
// block only, row 2 with a NaN score; 300 keys.
Problem maskedRowsProblem(Rng& rng) {
  const int64_t sq = kMaskedSq, sk = kMaskedSk, d = kMaskedD;
  Problem pr;
  pr.p = params(0.5f);
  pr.dims = {makeDims({sq, d}), makeDims({sk, d}), makeDims({sk, d}), makeDims({sq, sk})};
  for (int i = 0; i < 3; ++i) pr.data.push_back(rng.floats(volume(pr.dims[size_t(i)]), -2.f, 2.f));
  std::vector<float> mask(static_cast<size_t>(sq * sk), 0.f);
  for (int64_t j = 0; j < sk; ++j) mask[static_cast<size_t>(j)] = -INFINITY;
  for (int64_t j = 0; j < 256; ++j) mask[static_cast<size_t>(sk + j)] = -INFINITY;
  mask[static_cast<size_t>(2 * sk + 7)] = NAN;
  pr.data.push_back(mask);
  return pr;
}

// maskedRowsProblem's rows: the row masked out and the NaN row are NaN, as the Softmax layer
// gives; the online softmax does not let row 1's -inf block poison it (300 keys: two blocks of
// the blocked tactic).
TEST(Attention, MaskedRowsFollowTheSoftmaxRules) {
  Rng rng;
  Problem pr = maskedRowsProblem(rng);
  const int64_t sq = kMaskedSq, sk = kMaskedSk, d = kMaskedD;
  const KernelConfig c = configOf(pr);
  for (const char* name : {"reference", "blocked"}) {
    const auto y = runTactic(tacticNamed(ops::Attention::cpuTactics(), name), c, pr.data);
    ASSERT_EQ(y.size(), static_cast<size_t>(sq * d));
    for (int64_t e = 0; e < d; ++e) {
      EXPECT_TRUE(std::isnan(y[static_cast<size_t>(e)])) << name << ": a row masked out";
      EXPECT_TRUE(std::isfinite(y[static_cast<size_t>(d + e)])) << name << ": row 1";
      EXPECT_TRUE(std::isnan(y[static_cast<size_t>(2 * d + e)])) << name << ": a NaN score";
    }
    // Row 1 is the softmax over keys 256..299 alone.
    Problem tail;
    tail.p = pr.p;
    tail.dims = {makeDims({1, d}), makeDims({sk - 256, d}), makeDims({sk - 256, d})};
    tail.data = {std::vector<float>(pr.data[0].begin() + d, pr.data[0].begin() + 2 * d),
                 std::vector<float>(pr.data[1].begin() + 256 * d, pr.data[1].end()),
                 std::vector<float>(pr.data[2].begin() + 256 * d, pr.data[2].end())};
    const auto want = definition(tail, makeDims({1, d}));
    expectNearScaled(std::vector<float>(y.begin() + d, y.begin() + 2 * d), want, 1e-5, name);
  }
}

// The same rows with zeroNanRows (the softmax guard of PyTorch's scaled_dot_product_attention
// export): the row masked out and the NaN row weigh V by zeros, so they are 0 (V is finite); row 1
// is unchanged.
TEST(Attention, ZeroNanRowsGivesZerosWhereTheSoftmaxIsNan) {
  Rng rng;
  Problem pr = maskedRowsProblem(rng);
  const int64_t sq = kMaskedSq, d = kMaskedD;
  const KernelConfig plain = configOf(pr);
  pr.p.zeroNanRows = true;
  const KernelConfig guarded = configOf(pr);
  for (const char* name : {"reference", "blocked"}) {
    const Tactic& t = tacticNamed(ops::Attention::cpuTactics(), name);
    const auto want = runTactic(t, plain, pr.data);
    const auto y = runTactic(t, guarded, pr.data);
    ASSERT_EQ(y.size(), static_cast<size_t>(sq * d));
    for (int64_t e = 0; e < d; ++e) {
      EXPECT_EQ(y[static_cast<size_t>(e)], 0.f) << name << ": a row masked out";
      EXPECT_EQ(y[static_cast<size_t>(d + e)], want[static_cast<size_t>(d + e)]) << name;
      EXPECT_EQ(y[static_cast<size_t>(2 * d + e)], 0.f) << name << ": a NaN score";
    }
  }
}

TEST(Attention, HalfAndBf16ReferenceComputeInFp32) {
  // Scores of 80000 overflow fp16 if formed in it; the reference keeps them in wide precision.
  const std::vector<float> q = {200.f, 200.f}, k = {200.f, 200.f, -200.f, -200.f}, v = {1.f, 2.f};
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    std::vector<PluginTensorDesc> in = {desc(makeDims({1, 2}), t), desc(makeDims({2, 2}), t),
                                        desc(makeDims({2, 1}), t)};
    const KernelConfig c =
        config(kAT, params(), in, inferredOutputs(&ops::Attention::infer, params(), in));
    std::vector<std::vector<uint16_t>> bytes;
    for (const auto* x : {&q, &k, &v}) {
      std::vector<uint16_t> b;
      for (float f : *x) b.push_back(t == DataType::kHALF ? floatToHalf(f) : floatToBf16(f));
      bytes.push_back(b);
    }
    KernelPtr kernel = create(tacticNamed(ops::Attention::cpuTactics(), "reference"), c);
    ASSERT_TRUE(kernel);
    uint16_t y = 0;
    ASSERT_TRUE(
        runKernel(*kernel, {bytes[0].data(), bytes[1].data(), bytes[2].data()}, {&y}).isOk());
    // Key 0 scores 80000, key 1 -80000: all weight on v = 1.
    EXPECT_EQ(t == DataType::kHALF ? halfToFloat(y) : bf16ToFloat(y), 1.f) << dataTypeName(t);
  }
  EXPECT_NE(declines(tacticNamed(ops::Attention::cpuTactics(), "blocked"),
                     config(kAT, params(),
                            {desc(makeDims({1, 2}), DataType::kHALF),
                             desc(makeDims({2, 2}), DataType::kHALF),
                             desc(makeDims({2, 1}), DataType::kHALF)},
                            {desc(makeDims({1, 1}), DataType::kHALF)})),
            "");
}

// ---- head views (AttentionParams::viewed) ----------------------------------------------------

namespace views {

using R = AttentionParams::Role;

void setRole(AttentionParams& p, int input, int role, int32_t axis, int64_t inner, int64_t size) {
  const int at = input * AttentionParams::kRoles + role;
  p.viewAxis[at] = axis;
  p.viewInner[at] = inner;
  p.viewSize[at] = size;
}

// Q, K and V in slots 0, 1, 2 of packed projections [S, B, 3 H D], O written as [S, B, H D]: what
// attention_layout makes of torch.nn.MultiheadAttention's export.
AttentionParams packed(int64_t h, int64_t d) {
  AttentionParams p = params(0.5f);
  p.viewed = true;
  for (int i = 0; i < 3; ++i) {
    setRole(p, i, R::kSequence, 0, 1, 0);
    setRole(p, i, R::kBatch, 1, 1, 0);
    setRole(p, i, R::kHeads, 2, d, h);
    setRole(p, i, R::kHeadSize, 2, 1, d);
    setRole(p, i, R::kSlot, 2, h * d, 0);
    p.viewSlot[i] = i;
  }
  const int32_t order[4] = {R::kSequence, R::kBatch, R::kHeads, R::kHeadSize};
  std::copy(order, order + 4, p.outputOrder);
  p.outputMerged[3] = true;
  return p;
}

}  // namespace views

TEST(Attention, HeadViewsShapeRule) {
  const AttentionParams p = views::packed(3, 4);
  EXPECT_EQ(inferLayerOk(kAT, p, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}).dims,
            makeDims({5, 2, 12}));
  // With a mask over [B, H, Sq, Sk], or merged [B H, Sq, Sk].
  EXPECT_EQ(
      inferLayerOk(kAT, p, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36}), f32({2, 1, 1, 7})})
          .dims,
      makeDims({5, 2, 12}));
  EXPECT_EQ(
      inferLayerOk(kAT, p, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36}), f32({6, 5, 7})})
          .dims,
      makeDims({5, 2, 12}));
  EXPECT_MENTIONS(
      inferLayerError(kAT, p, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36}), f32({5, 5, 7})}),
      "does not broadcast to the scores [2,3,5,7]");
  // The packed axis is not 3 H D: the roles do not reach its end.
  EXPECT_MENTIONS(inferLayerError(kAT, p, {f32({5, 2, 35}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "Q's view of [5,2,35]");
  EXPECT_MENTIONS(inferLayerError(kAT, p, {f32({5, 2, 36}), f32({7, 3, 36}), f32({7, 2, 36})}),
                  "K's view has 3 x 3 batch x heads, Q's 2 x 3");
  EXPECT_MENTIONS(inferLayerError(kAT, p, {f32({5, 2, 36}), f32({7, 2, 36}), f32({6, 2, 36})}),
                  "V's view has 6 rows but K has 7 keys");
  AttentionParams bad = p;
  bad.viewSlot[1] = 3;
  EXPECT_MENTIONS(inferLayerError(kAT, bad, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "slot 3 outside");
  bad = p;
  bad.viewInner[views::R::kHeads] = 5;  // Q's heads no longer next to its head size
  EXPECT_MENTIONS(inferLayerError(kAT, bad, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "do not tile");
  bad = p;
  bad.viewAxis[views::R::kHeadSize] = 1;
  EXPECT_MENTIONS(inferLayerError(kAT, bad, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "innermost part of the last axis");
  bad = p;
  bad.viewAxis[views::R::kBatch] = 7;
  EXPECT_MENTIONS(inferLayerError(kAT, bad, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "past its rank");
  bad = p;
  bad.outputOrder[0] = views::R::kHeadSize;
  EXPECT_MENTIONS(inferLayerError(kAT, bad, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "outputOrder");
  bad = p;
  bad.keyTransposed = true;
  EXPECT_MENTIONS(inferLayerError(kAT, bad, {f32({5, 2, 36}), f32({7, 2, 36}), f32({7, 2, 36})}),
                  "never transposed");
}

// A viewed Attention computes what the plain one does on Q, K and V copied out of the packed
// projections, with its output then moved to [S, B, H D], on both CPU tactics.
TEST(Attention, HeadViewsMatchTheCopiedOutOperands) {
  Rng rng;
  const int64_t b = 2, h = 3, d = 5, e = h * d;
  for (int64_t sq : {1, 9, 70}) {
    const int64_t sk = sq == 70 ? 300 : sq + 2;
    SCOPED_TRACE("sq " + std::to_string(sq));
    const AttentionParams viewed = views::packed(h, d);
    std::vector<std::vector<float>> packed;
    std::vector<Dims> packedDims;
    for (int i = 0; i < 3; ++i) {
      packedDims.push_back(makeDims({i == 0 ? sq : sk, b, 3 * e}));
      packed.push_back(rng.floats(volume(packedDims.back()), -2.f, 2.f));
    }
    // The plain problem: [B, H, S, D] copies of each slot.
    std::vector<std::vector<float>> plain(3);
    std::vector<Dims> plainDims;
    for (int i = 0; i < 3; ++i) {
      const int64_t s = i == 0 ? sq : sk;
      plainDims.push_back(makeDims({b, h, s, d}));
      for (int64_t bi = 0; bi < b; ++bi)
        for (int64_t hi = 0; hi < h; ++hi)
          for (int64_t si = 0; si < s; ++si)
            for (int64_t di = 0; di < d; ++di)
              plain[size_t(i)].push_back(
                  packed[size_t(i)][size_t((si * b + bi) * 3 * e + i * e + hi * d + di)]);
    }
    std::vector<PluginTensorDesc> in, inPlain;
    for (const Dims& x : packedDims) in.push_back(fp32(x));
    for (const Dims& x : plainDims) inPlain.push_back(fp32(x));
    const AttentionParams flat = params(0.5f);
    const KernelConfig cv =
        config(kAT, viewed, in, inferredOutputs(&ops::Attention::infer, viewed, in));
    const KernelConfig cp =
        config(kAT, flat, inPlain, inferredOutputs(&ops::Attention::infer, flat, inPlain));
    ASSERT_EQ(cv.outputs[0].dims, makeDims({sq, b, e}));
    const auto& tactics = ops::Attention::cpuTactics();
    const auto want = runTactic(tacticNamed(tactics, "reference"), cp, plain);
    // want is [B, H, Sq, D]; the viewed output [Sq, B, H D].
    std::vector<double> moved(want.size());
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t hi = 0; hi < h; ++hi)
        for (int64_t si = 0; si < sq; ++si)
          for (int64_t di = 0; di < d; ++di)
            moved[size_t((si * b + bi) * e + hi * d + di)] =
                want[size_t(((bi * h + hi) * sq + si) * d + di)];
    for (const char* tactic : {"reference", "blocked"}) {
      SCOPED_TRACE(tactic);
      expectNearScaled(runTactic(tacticNamed(tactics, tactic), cv, packed), moved, 2e-5, "");
    }
  }
}

}  // namespace
}  // namespace kiln::testing
