// linear_fusion: a MatMul or Gemm with constant weights and the bias add, residual add and
// activation after it become one Linear layer, in each form exporters write (bias either side of
// the add, as [N], [1, N] or one value; W transposed or not; a Gemm's C as the bias; with or
// without each step), and the fused plan computes what the unfused network does on random data
// on the CPU. What must not fuse stays, with the reason in the log: an intermediate read twice or
// wanted as an output, weights that are not constants, a bias of another shape, a transposed or
// scaled Gemm, a residual added after the activation.
#include <string>
#include <vector>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kM = 5, kK = 7, kN = 6;

ITensor* add(INetworkDefinition& net, ITensor& a, ITensor& b) {
  return net.addElementwise(a, b, ElementwiseOp::kADD)->getOutput(0);
}

ITensor* matmul(INetworkDefinition& net, ITensor& x, ITensor& w, bool transposeB = false) {
  MatrixMultiplyParams p;
  p.transposeB = transposeB;
  return net.addMatrixMultiply(x, w, p)->getOutput(0);
}

// The weights of a [K, N] product, as stored ([N, K] when transposed).
ITensor* weightsOf(INetworkDefinition& net, Rng& rng, bool transposed) {
  return constant(net, transposed ? makeDims({kN, kK}) : makeDims({kK, kN}), rng.values(kK * kN));
}

struct Form {
  const char* name;
  int head;  // 0 MatMul, 1 Gemm with C, 2 Gemm without C
  bool transposeW;
  int bias;       // 0 none, 1 [N], 2 [1, N] as the add's first operand, 3 one value [1]
  bool residual;  // an input of the output's shape
  bool hasActivation;
  ActivationType activation = ActivationType::kRELU;
  float alpha = 0.f, beta = 0.f;
  bool batched = false;  // X [2, M, K] (MatMul only)
};

TEST(LinearFusion, EveryPatternBecomesOneLinear) {
  using A = ActivationType;
  const Form forms[] = {
      {"matmul_bias_relu", 0, false, 1, false, true, A::kRELU},
      {"matmul_wt_bias_first_gelu", 0, true, 2, false, true, A::kGELU},
      {"matmul_bias_residual", 0, false, 1, true, false},
      {"matmul_bias_residual_tanh_gelu", 0, false, 1, true, true, A::kGELU_TANH},
      {"matmul_relu_no_bias", 0, false, 0, false, true, A::kRELU},
      {"matmul_residual_only", 0, true, 0, true, false},
      {"matmul_bias_relu6", 0, false, 1, false, true, A::kCLIP, 0.f, 6.f},
      {"matmul_bias_sigmoid", 0, true, 1, false, true, A::kSIGMOID},
      {"matmul_bias_leaky", 0, false, 1, false, true, A::kLEAKY_RELU, 0.2f},
      {"matmul_scalar_bias_relu", 0, false, 3, false, true, A::kRELU},
      {"matmul_batched_bias_residual", 0, true, 1, true, false, A::kRELU, 0.f, 0.f, true},
      {"gemm_c_relu", 1, true, 0, false, true, A::kRELU},
      {"gemm_c_residual", 1, false, 0, true, false},
      {"gemm_no_c_bias_tanh", 2, true, 2, false, true, A::kTANH},
  };
  for (const Form& f : forms) {
    SCOPED_TRACE(f.name);
    Rng rng;
    auto net = createNetwork();
    const Dims xDims = f.batched ? makeDims({2, kM, kK}) : makeDims({kM, kK});
    const Dims yDims = f.batched ? makeDims({2, kM, kN}) : makeDims({kM, kN});
    ITensor* x = net->addInput("x", DataType::kFLOAT, xDims);
    ITensor* w = weightsOf(*net, rng, f.transposeW);
    ITensor* y = nullptr;
    if (f.head == 0) {
      y = matmul(*net, *x, *w, f.transposeW);
    } else {
      GemmParams p;
      p.transposeB = f.transposeW;
      ITensor* c = f.head == 1 ? constant(*net, makeDims({1, kN}), rng.values(kN)) : nullptr;
      y = net->addGemm(*x, *w, c, p)->getOutput(0);
    }
    if (f.bias == 1) y = add(*net, *y, *constant(*net, makeDims({kN}), rng.values(kN)));
    if (f.bias == 2) y = add(*net, *constant(*net, makeDims({1, kN}), rng.values(kN)), *y);
    if (f.bias == 3) y = add(*net, *y, *constant(*net, makeDims({1}), rng.values(1)));
    if (f.residual) y = add(*net, *net->addInput("r", DataType::kFLOAT, yDims), *y);
    if (f.hasActivation) y = activation(*net, *y, f.activation, f.alpha, f.beta);
    ASSERT_TRUE(net->markOutput(*y).isOk());

    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseLinear, g);
    EXPECT_TRUE(mentions(c.changes(), "into one Linear of 'x'")) << joined(c.changes());
    EXPECT_TRUE(c.declines().empty()) << joined(c.declines());
    EXPECT_EQ(countNodes(g, LayerType::kMATRIX_MULTIPLY), 0);
    EXPECT_EQ(countNodes(g, LayerType::kGEMM), 0);
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
    EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 0);
    ASSERT_EQ(countNodes(g, LayerType::kLINEAR), 1);
    const GraphNode& last = g.nodes.back();
    ASSERT_EQ(last.type, LayerType::kLINEAR);
    const auto& p = std::get<LinearParams>(last.params);
    EXPECT_EQ(p.transposeW, f.transposeW);
    EXPECT_EQ(p.hasBias, f.bias != 0 || f.head == 1);
    EXPECT_EQ(p.hasResidual, f.residual);
    EXPECT_EQ(p.hasActivation, f.hasActivation);
    if (f.hasActivation) {
      EXPECT_EQ(p.activation, f.activation);
      EXPECT_EQ(p.activationAlpha, f.alpha);
      EXPECT_EQ(p.activationBeta, f.beta);
    }
    EXPECT_EQ(last.inputs.size(), 2u + p.hasBias + p.hasResidual);
    if (p.hasBias) {
      EXPECT_EQ(g.tensors[size_t(last.inputs[2])].shape.dims, makeDims({kN}));
    }
    EXPECT_EQ(g.tensors[size_t(last.outputs[0])].name, y->getName()) << "the output keeps its name";
    expectSameResults(*net, 1e-5f);
    if (HasFailure()) return;
  }
}

// A whole build: a pre-norm transformer's MLP, x + fc2(gelu(fc1(x))), is two Linears (the
// residual goes with fc2, which has no activation after it), and the plan runs them.
TEST(LinearFusion, TransformerMlpIsTwoLinears) {
  Rng rng;
  auto net = createNetwork();
  const int64_t d = 8, hidden = 32;
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 5, d}));
  ITensor* h =
      add(*net, *matmul(*net, *x, *constant(*net, makeDims({d, hidden}), rng.values(d * hidden))),
          *constant(*net, makeDims({hidden}), rng.values(hidden)));
  h = activation(*net, *h, ActivationType::kGELU);
  ITensor* o =
      add(*net, *matmul(*net, *h, *constant(*net, makeDims({hidden, d}), rng.values(d * hidden))),
          *constant(*net, makeDims({d}), rng.values(d)));
  ASSERT_TRUE(net->markOutput(*add(*net, *x, *o)).isOk());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), bytes).isOk());
  EXPECT_EQ(stepTypes(readPlan(bytes)),
            (std::vector<LayerType>{LayerType::kLINEAR, LayerType::kLINEAR}));
  expectSameResults(*net, 1e-5f);
}

// x -> product -> steps, each case with one thing that keeps (part of) the chain from fusing.
TEST(LinearFusion, WhatMustNotFuseStays) {
  struct Case {
    const char* name;
    int linears;          // Linear layers after the pass
    int elementwise;      // Elementwise layers left
    const char* decline;  // in the declines ("" for none)
  };
  const Case cases[] = {
      {"two_readers", 0, 1, "'mm' is read by more than one layer"},
      {"intermediate_output", 1, 0, "'biased' is a network output"},
      {"w_not_constant", 0, 1, "its W 'w' is not a constant"},
      {"bias_per_row", 0, 1, ""},
      {"gemm_trans_a", 0, 0, "its A operand is transposed (transA)"},
      {"gemm_alpha", 0, 0, "its alpha is not 1"},
      {"gemm_c_per_row", 0, 0, "its C [5,1] is not a constant bias"},
      {"residual_after_activation", 1, 1, ""},
      {"matmul_alone", 0, 0, ""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string v = k.name;
    Rng rng;
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({kM, kK}));
    ITensor* w = v == "w_not_constant" ? net->addInput("w", DataType::kFLOAT, makeDims({kK, kN}))
                                       : weightsOf(*net, rng, false);
    ITensor* bias = constant(*net, makeDims({kN}), rng.values(kN));
    if (v.rfind("gemm", 0) == 0) {
      GemmParams p;
      if (v == "gemm_trans_a") {
        p.transposeA = true;
        x = net->addInput("xt", DataType::kFLOAT, makeDims({kK, kM}));
      }
      if (v == "gemm_alpha") p.alpha = 0.5f;
      ITensor* c = v == "gemm_c_per_row" ? constant(*net, makeDims({kM, 1}), rng.values(kM)) : bias;
      ITensor* y = net->addGemm(*x, *w, c, p)->getOutput(0);
      ASSERT_TRUE(net->markOutput(*activation(*net, *y, ActivationType::kRELU)).isOk());
    } else {
      ILayer* mm = net->addMatrixMultiply(*x, *w, MatrixMultiplyParams{});
      mm->getOutput(0)->setName("mm");
      ITensor* y = mm->getOutput(0);
      if (v == "two_readers") {
        ASSERT_TRUE(net->markOutput(*activation(*net, *y, ActivationType::kTANH)).isOk());
        y = add(*net, *y, *bias);
      } else if (v == "intermediate_output") {
        y = add(*net, *y, *bias);
        y->setName("biased");
        ASSERT_TRUE(net->markOutput(*y).isOk());
        y = activation(*net, *y, ActivationType::kRELU);
      } else if (v == "bias_per_row") {
        y = add(*net, *y, *constant(*net, makeDims({kM, 1}), rng.values(kM)));
        y = activation(*net, *y, ActivationType::kRELU);
      } else if (v == "residual_after_activation") {
        y = activation(*net, *add(*net, *y, *bias), ActivationType::kRELU);
        y = add(*net, *y, *net->addInput("r", DataType::kFLOAT, makeDims({kM, kN})));
      } else if (v == "w_not_constant") {
        y = add(*net, *y, *bias);
      }
      ASSERT_TRUE(net->markOutput(*y).isOk());
    }
    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseLinear, g);
    EXPECT_EQ(countNodes(g, LayerType::kLINEAR), k.linears) << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), k.elementwise);
    if (*k.decline) {
      EXPECT_TRUE(mentions(c.declines(), k.decline)) << joined(c.declines());
    } else {
      EXPECT_TRUE(c.declines().empty()) << joined(c.declines());
    }
    if (k.linears == 0) {
      EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
    }
    expectSameResults(*net, 1e-5f);
  }
}

}  // namespace
}  // namespace kiln::testing
