// attention_layout: the data movement that exporters write around multi-head attention becomes
// the Attention layer's head views, in each form they write it (torch.nn.MultiheadAttention's
// packed projection picked by Slice, as torch 1.13 exports it, or by Gather after a transpose,
// as torch 2 does; Hugging Face's per-projection [B, S, H, D] transposes; with a padding mask
// broadcast over the heads or one merged with them), and the plan computes what the unfused one
// does on random data. What it cannot view stays, with the reason in the log.
#include <cmath>
#include <string>
#include <vector>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kHeads = 3, kHeadSize = 8, kEmbed = kHeads * kHeadSize;

ITensor* shuffle(INetworkDefinition& net, ITensor& x, std::vector<int32_t> first,
                 std::vector<int64_t> reshape, std::vector<int32_t> second = {}) {
  ShuffleParams p;
  p.hasFirstTranspose = !first.empty();
  for (size_t i = 0; i < first.size(); ++i) p.firstTranspose[i] = first[i];
  p.hasReshape = !reshape.empty();
  p.reshapeDims.nbDims = static_cast<int32_t>(reshape.size());
  for (size_t i = 0; i < reshape.size(); ++i) p.reshapeDims.d[i] = reshape[i];
  p.hasSecondTranspose = !second.empty();
  for (size_t i = 0; i < second.size(); ++i) p.secondTranspose[i] = second[i];
  return net.addShuffle(x, p)->getOutput(0);
}

ITensor* transposed(INetworkDefinition& net, ITensor& x, std::vector<int32_t> order) {
  return shuffle(net, x, std::move(order), {});
}

ITensor* reshaped(INetworkDefinition& net, ITensor& x, std::vector<int64_t> dims) {
  return shuffle(net, x, {}, std::move(dims));
}

// x[..., start : start + length] along the last axis, with `step`.
ITensor* lastAxisSlice(INetworkDefinition& net, ITensor& x, int64_t start, int64_t length,
                       int64_t step = 1) {
  const Dims d = x.getDimensions();
  SliceParams p;
  p.starts.nbDims = p.steps.nbDims = p.outputDims.nbDims = d.nbDims;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    p.steps.d[i] = 1;
    p.outputDims.d[i] = d.d[i];
  }
  p.starts.d[d.nbDims - 1] = start;
  p.steps.d[d.nbDims - 1] = step;
  p.outputDims.d[d.nbDims - 1] = length;
  return net.addSlice(x, p)->getOutput(0);
}

ITensor* pick(INetworkDefinition& net, ITensor& x, int64_t index) {
  static const int64_t kIndices[] = {0, 1, 2};
  ILayer* c = net.addConstant(Dims{}, Weights{DataType::kINT64, &kIndices[index], 1});
  GatherParams p;
  p.axis = 0;
  return net.addGather(x, *c->getOutput(0), p)->getOutput(0);
}

// The scaled dot-product attention chain the attention_fusion pass makes one layer of; K given
// as [.., S, D] and transposed as torch writes it.
ITensor* attention(INetworkDefinition& net, ITensor& q, ITensor& k, ITensor& v, ITensor* mask) {
  const int32_t r = q.getDimensions().nbDims;
  std::vector<int32_t> order(static_cast<size_t>(r));
  for (int32_t i = 0; i < r; ++i) order[size_t(i)] = i;
  std::swap(order[size_t(r - 2)], order[size_t(r - 1)]);
  ITensor* scale = constant(net, makeDims({1}), {1.f / std::sqrt(float(kHeadSize))});
  ITensor* qs = net.addElementwise(q, *scale, ElementwiseOp::kMUL)->getOutput(0);
  ITensor* s = net.addMatrixMultiply(*qs, *transposed(net, k, order), {})->getOutput(0);
  if (mask) s = net.addElementwise(*s, *mask, ElementwiseOp::kADD)->getOutput(0);
  SoftmaxParams sp;
  sp.axis = -1;
  ITensor* p = net.addSoftmax(*s, sp)->getOutput(0);
  return net.addMatrixMultiply(*p, v, {})->getOutput(0);
}

// A random projection x [.., E] -> [.., width] (MatMul and bias add, a Linear after fusion).
ITensor* project(INetworkDefinition& net, ITensor& x, int64_t width, Rng& rng) {
  std::vector<float> w(static_cast<size_t>(kEmbed * width)), b(static_cast<size_t>(width));
  for (float& f : w) f = rng.uniformFloat(-0.3f, 0.3f);
  for (float& f : b) f = rng.uniformFloat(-0.1f, 0.1f);
  ITensor* y =
      net.addMatrixMultiply(x, *constant(net, makeDims({kEmbed, width}), w), {})->getOutput(0);
  return net.addElementwise(*y, *constant(net, makeDims({width}), b), ElementwiseOp::kADD)
      ->getOutput(0);
}

struct Form {
  const char* name;
  int exporter;  // 0 torch 1.13 (Slice), 1 torch 2 (transpose + Gather), 2 Hugging Face
  // 0 none, 1 padding [B, 1, 1, S]; for torch 1.13's [B * H, S, D] operands, merged with the
  // heads: 2 [B * H, S, S], 3 padding [B * H, 1, S]
  int mask;
};

// x [S, B, E] (torch) or [B, S, E] (Hugging Face) through one multi-head attention and its output
// data movement back to [S * B, E] or [B, S, E].
void buildMultiHead(INetworkDefinition& net, const Form& f, int64_t b, int64_t s, Rng& rng) {
  const bool torch = f.exporter < 2;
  ITensor* x = net.addInput("x", DataType::kFLOAT,
                            torch ? makeDims({s, b, kEmbed}) : makeDims({b, s, kEmbed}));
  ITensor* mask = nullptr;
  if (f.mask == 1) mask = net.addInput("mask", DataType::kFLOAT, makeDims({b, 1, 1, s}));
  if (f.mask == 2) mask = net.addInput("mask", DataType::kFLOAT, makeDims({b * kHeads, s, s}));
  if (f.mask == 3) mask = net.addInput("mask", DataType::kFLOAT, makeDims({b * kHeads, 1, s}));
  ITensor* qkv[3];
  if (f.exporter == 0) {  // proj[..., i E : (i + 1) E].view(S, B H, D).transpose(0, 1)
    ITensor* proj = project(net, *x, 3 * kEmbed, rng);
    for (int i = 0; i < 3; ++i)
      qkv[i] = transposed(net,
                          *reshaped(net, *lastAxisSlice(net, *proj, i * kEmbed, kEmbed),
                                    {s, b * kHeads, kHeadSize}),
                          {1, 0, 2});
  } else if (f.exporter == 1) {
    // proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)[i], then the heads
    // split and moved, and viewed as [B, H, S, D] for scaled_dot_product_attention.
    ITensor* proj = project(net, *x, 3 * kEmbed, rng);
    ITensor* packed = reshaped(net, *proj, {1, s, b, 3, kEmbed});
    ITensor* moved = reshaped(net, *transposed(net, *packed, {3, 1, 2, 0, 4}), {3, s, b, kEmbed});
    for (int i = 0; i < 3; ++i)
      qkv[i] = reshaped(
          net,
          *transposed(net, *reshaped(net, *pick(net, *moved, i), {s, b * kHeads, kHeadSize}),
                      {1, 0, 2}),
          {b, kHeads, s, kHeadSize});
  } else {  // each projection .view(B, S, H, D).transpose(1, 2)
    for (int i = 0; i < 3; ++i)
      qkv[i] =
          transposed(net, *reshaped(net, *project(net, *x, kEmbed, rng), {b, s, kHeads, kHeadSize}),
                     {0, 2, 1, 3});
  }
  ITensor* o = attention(net, *qkv[0], *qkv[1], *qkv[2], mask);
  ITensor* y = nullptr;
  if (f.exporter == 0)
    y = reshaped(net, *transposed(net, *o, {1, 0, 2}), {s * b, kEmbed});
  else if (f.exporter == 1)
    y = reshaped(net, *transposed(net, *o, {2, 0, 1, 3}), {s * b, kEmbed});
  else
    y = reshaped(net, *transposed(net, *o, {0, 2, 1, 3}), {b, s, kEmbed});
  ASSERT_TRUE(net.markOutput(*y).isOk());
}

TEST(AttentionLayout, EveryExportedFormReadsAndWritesHeadViews) {
  const Form forms[] = {{"torch113_slices", 0, 0},
                        {"torch113_merged_mask", 0, 2},
                        {"torch113_merged_padding", 0, 3},
                        {"torch2_gathers_padding", 1, 1},
                        {"torch2_gathers", 1, 0},
                        {"hugging_face_padding", 2, 1},
                        {"hugging_face", 2, 0}};
  for (const Form& f : forms) {
    SCOPED_TRACE(f.name);
    Rng rng;
    auto net = createNetwork();
    buildMultiHead(*net, f, /*b=*/2, /*s=*/5, rng);
    Graph g = graphOf(*net);
    std::vector<std::string> log;
    ASSERT_TRUE(passes::runPipeline(g, passes::defaultPipeline(), {}, &log).isOk());
    ASSERT_EQ(countNodes(g, LayerType::kATTENTION), 1) << joined(log);
    for (const GraphNode& n : g.nodes) {
      if (n.type == LayerType::kATTENTION) {
        EXPECT_TRUE(std::get<AttentionParams>(n.params).viewed) << joined(log);
      }
      // What is left of the data movement: reshapes (aliases, no copy), no transpose or pick.
      EXPECT_NE(n.type, LayerType::kSLICE) << joined(log);
      EXPECT_NE(n.type, LayerType::kGATHER) << joined(log);
      if (const auto* sp = std::get_if<ShuffleParams>(&n.params))
        EXPECT_FALSE(sp->hasFirstTranspose || sp->hasSecondTranspose) << n.name << "\n"
                                                                      << joined(log);
    }
    EXPECT_TRUE(mentions(log, "reads and writes head views")) << joined(log);
    expectSameResults(*net, 1e-5f);
  }
}

// torchvision's ViT encoder block as PyTorch exports nn.MultiheadAttention(batch_first=True):
// the stream transposed to [S, B, E] before the packed projection, the output projection a 2-D
// Gemm between reshapes, the transpose back, then the residual add. With transpose_motion the
// plan has no copy left: the projection reads x, the Attention reads its view of the projection
// and writes [B, S, E], and the output projection adds the residual in its epilogue.
TEST(AttentionLayout, BatchFirstBlockKeepsNoTransposeAndFusesTheResidual) {
  Rng rng;
  const int64_t b = 2, s = 5;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({b, s, kEmbed}));
  ITensor* proj = project(*net, *transposed(*net, *x, {1, 0, 2}), 3 * kEmbed, rng);
  ITensor* qkv[3];
  for (int i = 0; i < 3; ++i)
    qkv[i] = transposed(*net,
                        *reshaped(*net, *lastAxisSlice(*net, *proj, i * kEmbed, kEmbed),
                                  {s, b * kHeads, kHeadSize}),
                        {1, 0, 2});
  ITensor* o = attention(*net, *qkv[0], *qkv[1], *qkv[2], nullptr);
  ITensor* rows = reshaped(*net, *transposed(*net, *o, {1, 0, 2}), {s * b, kEmbed});
  std::vector<float> w(static_cast<size_t>(kEmbed * kEmbed)), c(static_cast<size_t>(kEmbed));
  for (float& f : w) f = rng.uniformFloat(-0.3f, 0.3f);
  for (float& f : c) f = rng.uniformFloat(-0.1f, 0.1f);
  GemmParams gp;
  gp.transposeB = true;  // F.linear's weight [out, in]
  ITensor* y = net->addGemm(*rows, *constant(*net, makeDims({kEmbed, kEmbed}), w),
                            constant(*net, makeDims({kEmbed}), c), gp)
                   ->getOutput(0);
  ITensor* back = transposed(*net, *reshaped(*net, *y, {s, b, kEmbed}), {1, 0, 2});
  ASSERT_TRUE(
      net->markOutput(*net->addElementwise(*back, *x, ElementwiseOp::kADD)->getOutput(0)).isOk());
  Graph g = graphOf(*net);
  std::vector<std::string> log;
  ASSERT_TRUE(passes::runPipeline(g, passes::defaultPipeline(), {}, &log).isOk());
  std::vector<std::string> layers;  // constant layers aside
  for (const GraphNode& n : g.nodes)
    if (n.type != LayerType::kCONSTANT) layers.push_back(layerTypeName(n.type));
  EXPECT_EQ(layers, (std::vector<std::string>{"Linear", "Attention", "Linear"})) << joined(log);
  EXPECT_TRUE(mentions(log, "pass transpose_motion: made")) << joined(log);
  EXPECT_TRUE(mentions(log, "pass linear_residual_fusion: fused")) << joined(log);
  expectSameResults(*net, 1e-5f);
}

// A slice with a step of 2 is no head view: the Attention reads the layers below it as views
// and the slice stays; the result is the same.
TEST(AttentionLayout, WhatItCannotViewStays) {
  Rng rng;
  const int64_t b = 2, s = 4;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({b, s, 2 * kEmbed}));
  ITensor* qkv[3];
  for (int i = 0; i < 3; ++i)
    qkv[i] = transposed(
        *net,
        *reshaped(*net, *lastAxisSlice(*net, *x, i % 2, kEmbed, 2), {b, s, kHeads, kHeadSize}),
        {0, 2, 1, 3});
  ASSERT_TRUE(net->markOutput(*attention(*net, *qkv[0], *qkv[1], *qkv[2], nullptr)).isOk());
  Graph g = graphOf(*net);
  std::vector<std::string> log;
  ASSERT_TRUE(passes::runPipeline(g, passes::defaultPipeline(), {}, &log).isOk());
  EXPECT_EQ(countNodes(g, LayerType::kSLICE), 3) << joined(log);
  EXPECT_TRUE(mentions(log, "reads and writes head views")) << joined(log);
  expectSameResults(*net, 1e-5f);
}

}  // namespace
}  // namespace kiln::testing
