// attention_fusion: the MatMul -> scale -> mask add -> Softmax -> MatMul chain that exporters
// write becomes one Attention layer, in each form they write it (Q scaled before the product or
// the scores after it, by a multiply or a divide; K^T as a tensor or through transposeB; with a
// constant mask, a computed one, or none), and the fused plan computes what the unfused one does
// on random data. Chains it must not touch stay, with the reason in the log.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

ITensor* matmul(INetworkDefinition& net, ITensor& a, ITensor& b, bool transposeB = false) {
  MatrixMultiplyParams p;
  p.transposeB = transposeB;
  return net.addMatrixMultiply(a, b, p)->getOutput(0);
}

ITensor* softmax(INetworkDefinition& net, ITensor& x, int32_t axis = -1) {
  SoftmaxParams p;
  p.axis = axis;
  return net.addSoftmax(x, p)->getOutput(0);
}

struct Form {
  const char* name;
  bool scaleQ;          // Q * c before the product (PyTorch), else the scores (Hugging Face)
  bool divide;          // by 1/c rather than times c
  bool transposeB;      // K as [.., Sk, D] with transposeB, else K^T given as [.., D, Sk]
  int mask;             // 0 none, 1 constant [Sq, Sk], 2 computed [B, 1, 1, Sk] (a padding mask)
  bool scaleK = false;  // Q and K^T each times sqrt(c) (torch.onnx's scaled_dot_product_attention)
};

TEST(AttentionFusion, EveryExportedFormBecomesOneAttention) {
  const Form forms[] = {{"pytorch_q_scaled_causal", true, false, false, 1},
                        {"hf_scores_divided_padding", false, true, true, 2},
                        {"no_mask_no_scale_transposeB", false, false, true, 0},
                        {"q_divided_const_mask", true, true, false, 1},
                        {"onnx_sdpa_q_and_k_scaled", false, false, false, 1, true}};
  for (const Form& f : forms) {
    SCOPED_TRACE(f.name);
    const int64_t b = 2, h = 3, sq = 5, sk = 6, d = 8;
    auto net = createNetwork();
    ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({b, h, sq, d}));
    ITensor* k = net->addInput("k", DataType::kFLOAT,
                               f.transposeB ? makeDims({b, h, sk, d}) : makeDims({b, h, d, sk}));
    ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({b, h, sk, d}));
    ITensor* scale = scalar(*net, f.divide ? std::sqrt(float(d)) : 1.f / std::sqrt(float(d)));
    const ElementwiseOp op = f.divide ? ElementwiseOp::kDIV : ElementwiseOp::kMUL;
    ITensor* qs = f.scaleQ ? binary(*net, *q, *scale, op) : q;
    if (f.scaleK) {
      ITensor* root = scalar(*net, std::sqrt(1.f / std::sqrt(float(d))));
      qs = binary(*net, *q, *root, ElementwiseOp::kMUL);
      k = binary(*net, *root, *k, ElementwiseOp::kMUL);
    }
    ITensor* s = matmul(*net, *qs, *k, f.transposeB);
    if (!f.scaleQ && !f.scaleK && (f.divide || f.mask != 0)) s = binary(*net, *s, *scale, op);
    if (f.mask == 1) {
      std::vector<float> causal(static_cast<size_t>(sq * sk));
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t j = 0; j < sk; ++j) causal[size_t(i * sk + j)] = j > i ? -INFINITY : 0.f;
      s = binary(*net, *s, *constant(*net, makeDims({sq, sk}), causal), ElementwiseOp::kADD);
    } else if (f.mask == 2) {
      ITensor* m = net->addInput("mask", DataType::kFLOAT, makeDims({b, 1, 1, sk}));
      s = binary(*net, *m, *s, ElementwiseOp::kADD);  // the mask first: either order
    }
    ITensor* y = matmul(*net, *softmax(*net, *s), *v);
    ASSERT_TRUE(net->markOutput(*y).isOk());

    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseAttention, g);
    EXPECT_TRUE(mentions(c.changes(), "into one Attention of 'q', 'k', 'v'"))
        << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kMATRIX_MULTIPLY), 0);
    EXPECT_EQ(countNodes(g, LayerType::kSOFTMAX), 0);
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
    ASSERT_EQ(countNodes(g, LayerType::kATTENTION), 1);
    const GraphNode& last = g.nodes.back();
    ASSERT_EQ(last.type, LayerType::kATTENTION);
    const auto& p = std::get<AttentionParams>(last.params);
    EXPECT_NEAR(p.scale,
                (f.scaleQ || f.scaleK || f.divide || f.mask != 0) ? 1.f / std::sqrt(float(d)) : 1.f,
                1e-6f);
    EXPECT_EQ(p.keyTransposed, !f.transposeB);
    EXPECT_EQ(last.inputs.size(), f.mask ? 4u : 3u);
    expectSameResults(*net, 1e-5f);
  }
}

TEST(AttentionFusion, ChainsItMustNotTouchStay) {
  const int64_t sq = 4, sk = 6, d = 8;
  auto build = [&](int variant) {
    auto net = createNetwork();
    ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({2, sq, d}));
    ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({2, d, sk}));
    ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({2, sk, d}));
    ITensor* s = matmul(*net, *q, *k);
    ITensor* p = softmax(*net, *s, variant == 0 ? 1 : -1);  // 0: softmax over the queries
    ITensor* y = matmul(*net, *p, *v);
    EXPECT_TRUE(net->markOutput(*y).isOk());
    if (variant == 1) EXPECT_TRUE(net->markOutput(*p).isOk());  // the probabilities wanted too
    return net;
  };
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant);
    auto net = build(variant);
    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseAttention, g);
    EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kATTENTION), 0);
    EXPECT_EQ(countNodes(g, LayerType::kMATRIX_MULTIPLY), 2);
    if (variant == 1) EXPECT_TRUE(mentions(c.declines(), "is read elsewhere too"));
    expectSameResults(*net);
  }
}

// CUDA builds fuse as the CPU's do (the kernels have run on the H200: attention_fusion.cpp).
TEST(AttentionFusion, OnCudaItFusesToo) {
  auto net = createNetwork();
  ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({2, 5, 8}));
  ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({2, 8, 6}));
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({2, 6, 8}));
  ASSERT_TRUE(net->markOutput(*matmul(*net, *softmax(*net, *matmul(*net, *q, *k)), *v)).isOk());
  Graph g = graphOf(*net);
  PassContext c({}, DeviceKind::kCUDA);
  ASSERT_TRUE(passes::fuseAttention(g, c).isOk());
  EXPECT_EQ(countNodes(g, LayerType::kATTENTION), 1);
}

// torch.onnx's scaled_dot_product_attention guards its softmax with Where(IsNaN(P), 0, P), which
// kiln imports as Select(Not(Equal(P, P)), 0, P): the guard goes into the layer (zeroNanRows), and
// a row masked out entirely gives zeros, fused as unfused.
TEST(AttentionFusion, TheNanGuardOfScaledDotProductAttentionIsTakenIn) {
  const int64_t b = 2, h = 2, sq = 4, sk = 5, d = 8;
  auto net = createNetwork();
  ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({b, h, sq, d}));
  ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({b, h, d, sk}));
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({b, h, sk, d}));
  ITensor* root = scalar(*net, std::sqrt(1.f / std::sqrt(float(d))));
  ITensor* s = matmul(*net, *binary(*net, *q, *root, ElementwiseOp::kMUL),
                      *binary(*net, *k, *root, ElementwiseOp::kMUL));
  // Row 1 is masked out entirely: its softmax is NaN, which the guard makes zeros.
  std::vector<float> mask(static_cast<size_t>(sq * sk), 0.f);
  for (int64_t j = 0; j < sk; ++j) mask[size_t(1 * sk + j)] = -INFINITY;
  mask[size_t(2 * sk + 3)] = -INFINITY;
  s = binary(*net, *s, *constant(*net, makeDims({sq, sk}), mask), ElementwiseOp::kADD);
  ITensor* p = softmax(*net, *s);
  ActivationParams no;
  no.type = ActivationType::kNOT;
  ITensor* isNan =
      net->addActivation(*binary(*net, *p, *p, ElementwiseOp::kEQUAL), no)->getOutput(0);
  ITensor* guarded = net->addSelect(*isNan, *scalar(*net, 0.f), *p)->getOutput(0);
  ITensor* y = matmul(*net, *guarded, *v);
  ASSERT_TRUE(net->markOutput(*y).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseAttention, g);
  EXPECT_TRUE(mentions(c.changes(), "NaN rows zeroed"))
      << joined(c.changes()) << joined(c.declines());
  EXPECT_EQ(countNodes(g, LayerType::kSELECT), 0);
  EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 0);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
  ASSERT_EQ(countNodes(g, LayerType::kATTENTION), 1);
  EXPECT_TRUE(std::get<AttentionParams>(g.nodes.back().params).zeroNanRows);
  expectSameResults(*net, 1e-5f);

  // The fused plan's masked-out row is zeros (not NaN).
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), bytes).isOk());
  Rng rng;
  Buffers out;
  ASSERT_TRUE(runPlan(bytes, randomInputs(*net, rng), out).isOk());
  const std::vector<uint8_t>& yb = out[y->getName()];
  for (int64_t n = 0; n < b * h; ++n)
    for (int64_t e = 0; e < d; ++e) {
      float value;
      std::memcpy(&value, yb.data() + 4 * ((n * sq + 1) * d + e), 4);
      EXPECT_EQ(value, 0.f) << "batch " << n << " element " << e;
    }
}

// A guard that is not exactly Where(IsNaN(P), 0, P) (another fill value) stays, and the attention
// before it is not fused either (its softmax output is read by the guard's layers).
TEST(AttentionFusion, AnotherGuardStays) {
  const int64_t sq = 3, sk = 4, d = 8;
  auto net = createNetwork();
  ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({sq, d}));
  ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({d, sk}));
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({sk, d}));
  ITensor* p = softmax(*net, *matmul(*net, *q, *k));
  ActivationParams no;
  no.type = ActivationType::kNOT;
  ITensor* isNan =
      net->addActivation(*binary(*net, *p, *p, ElementwiseOp::kEQUAL), no)->getOutput(0);
  ITensor* guarded = net->addSelect(*isNan, *scalar(*net, 0.5f), *p)->getOutput(0);
  ASSERT_TRUE(net->markOutput(*matmul(*net, *guarded, *v)).isOk());
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseAttention, g);
  EXPECT_EQ(countNodes(g, LayerType::kATTENTION), 0) << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kSELECT), 1);
  expectSameResults(*net, 1e-5f);
}

ITensor* transposed(INetworkDefinition& net, ITensor& x, std::vector<int32_t> order) {
  ShuffleParams p;
  p.hasFirstTranspose = true;
  for (size_t i = 0; i < order.size(); ++i) p.firstTranspose[i] = order[i];
  return net.addShuffle(x, p)->getOutput(0);
}

// K^T written as a transpose of its own (MatMul(Q, Transpose(K)), as torch exports it): the
// Attention reads K untransposed. A transpose of K alone goes; one that also moves the heads
// (K^T from [B, S, H, D]) then writes K as [B, H, S, D]; one read elsewhere too stays as it is.
TEST(AttentionFusion, AKeyTransposeOfItsOwnIsUndone) {
  const int64_t b = 2, h = 3, sq = 5, sk = 7, d = 8;
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    auto net = createNetwork();
    ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({b, h, sq, d}));
    ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({b, h, sk, d}));
    ITensor* kt = nullptr;
    if (variant == 1) {
      ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({b, sk, h, d}));
      kt = transposed(*net, *k, {0, 2, 3, 1});
    } else {
      ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({b, h, sk, d}));
      kt = transposed(*net, *k, {0, 1, 3, 2});
    }
    ITensor* y = matmul(*net, *softmax(*net, *matmul(*net, *q, *kt)), *v);
    ASSERT_TRUE(net->markOutput(*y).isOk());
    if (variant == 2) ASSERT_TRUE(net->markOutput(*kt).isOk());  // K^T wanted as well
    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseAttention, g);
    ASSERT_EQ(countNodes(g, LayerType::kATTENTION), 1) << joined(c.changes());
    const GraphNode& attention = g.nodes.back();
    const auto& p = std::get<AttentionParams>(attention.params);
    EXPECT_EQ(p.keyTransposed, variant == 2);
    EXPECT_EQ(countNodes(g, LayerType::kSHUFFLE), variant == 0 ? 0 : 1);
    if (variant == 0) {
      EXPECT_TRUE(mentions(c.changes(), "(K^T) is gone")) << joined(c.changes());
      EXPECT_EQ(g.tensors[size_t(attention.inputs[1])].name, "k");
    } else if (variant == 1) {
      EXPECT_TRUE(mentions(c.changes(), "writes K instead of K^T")) << joined(c.changes());
      EXPECT_EQ(g.tensors[size_t(attention.inputs[1])].shape.dims, makeDims({b, h, sk, d}));
    }
    expectSameResults(*net, 1e-5f);
  }
}

TEST(AttentionFusion, TheFullPipelineFusesAndKeepsResults) {
  // Sizes past the CPU blocked tactic's 64-row and 256-key blocks, the scale on Q as PyTorch's
  // nn.MultiheadAttention writes it.
  const int64_t h = 2, sq = 70, sk = 300, d = 16;
  auto net = createNetwork();
  ITensor* q = net->addInput("q", DataType::kFLOAT, makeDims({h, sq, d}));
  ITensor* k = net->addInput("k", DataType::kFLOAT, makeDims({h, d, sk}));
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({h, sk, d}));
  ITensor* qs = binary(*net, *q, *scalar(*net, 0.25f), ElementwiseOp::kMUL);
  ITensor* y = matmul(*net, *softmax(*net, *matmul(*net, *qs, *k)), *v);
  ASSERT_TRUE(net->markOutput(*y).isOk());
  Graph g = graphOf(*net);
  std::vector<std::string> log;
  ASSERT_TRUE(passes::runPipeline(g, passes::defaultPipeline(), {}, &log).isOk());
  EXPECT_TRUE(mentions(log, "pass attention_fusion: fused the attention")) << joined(log);
  EXPECT_EQ(countNodes(g, LayerType::kATTENTION), 1);
  expectSameResults(*net, 1e-5f);
}

}  // namespace
}  // namespace kiln::testing
